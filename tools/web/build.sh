#!/usr/bin/env bash
# `make web`: denpex's core for WebAssembly, and the page (docs/web.md).
#
#   tools/web/build.sh NATIVE_BUILD_DIR OUT_DIR
#
# Compiles the same sources as the CLI's stage libraries (their lists are
# read from cmake/Modules.cmake) with Debian's emscripten, against:
#  - RE2 from Debian's source package (`apt-get source re2`, the version the
#    native build links), with the Unicode tables Debian's +dfsg source drops
#    regenerated from the unicode-data package by RE2's own scripts;
#  - fmt, spdlog, nlohmann/json and tl-expected headers from Debian's -dev
#    packages (nothing else from /usr/include);
#  - the built-in catalog and line formats the native build generated.
# No Hyperscan (it has no WebAssembly build: RE2 alone matches, with the
# same results) and no libarchive (the page decompresses .gz itself).
# Objects are rebuilt only when their source or a header is newer.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
native=$(realpath "${1:-$root/build/dev}")
out=$(mkdir -p "${2:-$root/build/web}" && realpath "${2:-$root/build/web}")
jobs=${JOBS:-2}
command -v em++ > /dev/null || { echo "make web: em++ not found (apt-get install emscripten)" >&2; exit 1; }
# Debian's emscripten runs acorn from Node's search path, which Node 18+ no
# longer includes by default.
export NODE_PATH=/usr/share/nodejs
for g in builtin_catalog_blob.cpp builtin_catalog.cpp builtin_formats.cpp; do
  [ -f "$native/generated/$g" ] || { echo "make web: $native/generated/$g missing: build the native tree first" >&2; exit 1; }
done
version=$(sed -n 's/^project(denpex VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")

# --- RE2's source ------------------------------------------------------------
re2=$out/src/re2
if [ ! -f "$re2/re2/unicode_groups.cc" ]; then
  rm -rf "$out/src" && mkdir -p "$out/src/apt/lists/partial"
  # A private source list: the system's apt configuration is not touched.
  echo "deb-src http://deb.debian.org/debian bookworm main" > "$out/src/apt/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$out/src/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$out/src/apt/lists")
  apt-get "${apt_opts[@]}" update -qq
  (cd "$out/src" && apt-get "${apt_opts[@]}" source -qq re2)
  mv "$out/src"/re2-*/ "$re2"
  (cd "$re2/re2" && perl make_perl_groups.pl > perl_groups.cc &&
     python3 make_unicode_casefold.py > unicode_casefold.cc && python3 make_unicode_groups.py > unicode_groups.cc)
fi

# --- Headers from Debian's packages, and only those -----------------------------
sysinc=$out/sysinc
mkdir -p "$sysinc"
for h in fmt spdlog nlohmann tl; do ln -sfn "/usr/include/$h" "$sysinc/$h"; done

# --- Sources ---------------------------------------------------------------------
modules="util source catalog matcher context correlate findings scan report core"
mapfile -t denpex_sources < <(python3 - "$root/cmake/Modules.cmake" $modules <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for m in sys.argv[2:]:
    call = re.search(r'denpex_module\(%s\s+SOURCES\s+(.*?)(?:PUBLIC|PRIVATE|\))' % m, text, re.S)
    for src in call.group(1).split():
        if src != "src/source/follow.cpp":  # tailing files: no use in a page
            print(src)
PY
)
sources=()
for s in "${denpex_sources[@]}" src/deps/fmt.cpp src/deps/spdlog.cpp src/web/core.cpp; do sources+=("$root/$s"); done
for g in builtin_catalog_blob.cpp builtin_catalog.cpp builtin_formats.cpp; do sources+=("$native/generated/$g"); done
for s in "$re2"/re2/*.cc "$re2"/util/rune.cc "$re2"/util/strutil.cc; do
  case $s in *test*|*benchmark*|*fuzz*) ;; *) sources+=("$s") ;; esac
done

flags=(-std=c++20 -O2 -fexceptions -DNDEBUG -DDENPEX_NO_ARCHIVES "-DDENPEX_VERSION=\\\"$version\\\""
       -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL -I"$root/include" -I"$re2" -isystem "$sysinc"
       -Wno-deprecated-declarations)
mkdir -p "$out/obj"
newest_header=$(find "$root/include" "$root/src" -name '*.hpp' -printf '%T@\n' | sort -n | tail -1)
compile_list=()
for s in "${sources[@]}"; do
  o="$out/obj/$(echo "${s#"$root"/}" | tr '/' '_').o"
  if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ "$(stat -c %Y "$o")" -lt "${newest_header%.*}" ]; then
    compile_list+=("$s")
  fi
done
echo "make web: compiling ${#compile_list[@]} of ${#sources[@]} sources with $(em++ --version | head -1)"
printf '%s\n' "${flags[@]}" > "$out/flags.rsp"
printf '%s\n' "${compile_list[@]}" | ROOT="$root" OUT="$out" xargs -r -P "$jobs" -I{} sh -c \
  'o="$OUT/obj/$(echo "${1#"$ROOT"/}" | tr / _).o"; em++ @"$OUT/flags.rsp" -c "$1" -o "$o" || exit 255' _ {}

# --- Link ------------------------------------------------------------------------
objects=()
for s in "${sources[@]}"; do objects+=("$out/obj/$(echo "${s#"$root"/}" | tr '/' '_').o"); done
em++ -O2 -fexceptions "${objects[@]}" -o "$out/denpex-core.js" \
  -sMODULARIZE=1 -sEXPORT_NAME=DenpexCore -sSINGLE_FILE=1 -sENVIRONMENT=web,worker,node \
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=67108864 -sTOTAL_STACK=1048576 \
  -sEXPORTED_FUNCTIONS=_denpex_version,_denpex_reset,_denpex_add,_denpex_run,_denpex_diagnostics,_malloc,_free \
  -sEXPORTED_RUNTIME_METHODS=cwrap,UTF8ToString,HEAPU8
echo "make web: $out/denpex-core.js ($(du -k "$out/denpex-core.js" | cut -f1) KiB, the module inlined)"

# --- The page: one self-contained file ------------------------------------------
python3 - "$root/src/web/page.html" "$out/denpex-core.js" "$root/testdata/sample/train.log" "$out/denpex.html" <<'PY'
import json, os, sys
page, core, sample, dest = sys.argv[1:5]
html = open(page, encoding="utf-8").read()
js = open(core, encoding="utf-8").read()
# Inside <script>, only "</script" would end the element early.
js = js.replace("</script", "<\\/script")
text = open(sample, encoding="utf-8").read()
doc = json.dumps({"name": "train.log", "text": text, "mtime": int(os.stat(sample).st_mtime)}).replace("</", "<\\/")
html = html.replace("/*@CORE@*/", js, 1).replace("/*@SAMPLE@*/", doc, 1)
open(dest, "w", encoding="utf-8").write(html)
PY
echo "make web: $out/denpex.html ($(du -k "$out/denpex.html" | cut -f1) KiB, works from file:// and any static host)"
