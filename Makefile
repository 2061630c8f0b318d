# Thin wrapper around CMake (the real build). `make demo` and `make test`
# install what is missing from Debian's packages first.
BUILD ?= build/dev
JOBS ?= 2
CMAKE_FLAGS ?=
# What building the binary needs (`make demo`, `make build`) ...
BUILD_PACKAGES := build-essential cmake ninja-build pkg-config libre2-dev libcli11-dev nlohmann-json3-dev \
                  libfmt-dev libspdlog-dev libexpected-dev libarchive-dev zlib1g-dev \
                  libzstd-dev liblz4-dev liblzma-dev libbz2-dev nettle-dev
# Hyperscan (the prefilter) is packaged for amd64 only; elsewhere denpex uses RE2 alone.
ifeq ($(shell dpkg --print-architecture 2>/dev/null),amd64)
BUILD_PACKAGES += libhyperscan-dev
endif
# ... and what only the tests use (`make test`, `make asan`, `make fuzz`).
TEST_PACKAGES := catch2 python3 python3-jsonschema python3-yaml clang libclang-rt-14-dev prometheus \
                 prometheus-node-exporter chromium-headless-shell shellcheck zsh fish groff-base neovim

# ... and what `make web` uses: Debian's emscripten, the Unicode data RE2's tables
# are generated from, dpkg-dev for `apt-get source re2`, Node for the core's
# tests and Chromium for the page's.
WEB_PACKAGES := emscripten unicode-data nodejs perl python3 chromium-headless-shell dpkg-dev
WEB ?= build/web

.PHONY: all build-deps deps configure build test demo asan fuzz clean web

all: build

# install-missing <packages>: apt-get installs those not installed yet.
define install-missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  SUDO=; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

build-deps:
	$(call install-missing,$(BUILD_PACKAGES))

deps: build-deps
	$(call install-missing,$(TEST_PACKAGES))

CONFIGURE = cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

configure: deps
	$(CONFIGURE)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The web tests run under `make web`, which builds what they test.
CTEST_ARGS ?= -LE web
test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --no-tests=error $(CTEST_ARGS)

# Only what the first answer needs: the build packages and the binary.
demo: build-deps
	$(CONFIGURE)
	cmake --build $(BUILD) -j $(JOBS) --target denpex_cli
	@echo "== denpex diagnose testdata/sample/ (8 ranks + the node's kernel log) =="
	@# exit status 1 means "failure diagnosed", which is what the demo shows
	@$(BUILD)/denpex diagnose testdata/sample/ || [ $$? -eq 1 ]

# The suite under ASan+UBSan, less what only re-checks output the plain
# build's run already validated (schema) or measures speed (bench).
asan:
	$(MAKE) test BUILD=build/asan CMAKE_FLAGS="-DDENPEX_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug" \
	  CTEST_ARGS="-LE 'schema|bench|web'"

# libFuzzer targets (clang, ASan+UBSan) for FUZZ_TIME seconds each (default 60).
fuzz: deps
	bash tests/fuzz/run.sh $(FUZZ_TIME)

# The WebAssembly core and the page (docs/web.md): build/web/denpex.html,
# then the tests that compare the core with the CLI and drive the page.
web: build
	$(call install-missing,$(WEB_PACKAGES))
	JOBS=$(JOBS) bash tools/web/build.sh $(BUILD) $(WEB)
	cmake $(BUILD) -DDENPEX_WEB_DIR=$(abspath $(WEB)) > /dev/null
	ctest --test-dir $(BUILD) --output-on-failure -L web

clean:
	rm -rf build
