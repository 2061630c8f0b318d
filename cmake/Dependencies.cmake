# Every dependency comes from Debian packages (see Makefile: deps).
find_package(PkgConfig REQUIRED)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2) # Debian ships only re2.pc
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib) # truncated-gzip fallback (src/source/input.cpp)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(tl-expected REQUIRED)
find_package(Threads REQUIRED)
# Hyperscan, the prefilter in front of RE2 (src/matcher/prefilter.cpp). In
# Debian for amd64 only; elsewhere, or with -DDENPEX_HYPERSCAN=OFF, RE2 alone
# scans every byte (same results, about 3x slower).
option(DENPEX_HYPERSCAN "Use Hyperscan as a prefilter when it is installed" ON)
if(DENPEX_HYPERSCAN)
  pkg_check_modules(HS IMPORTED_TARGET libhs)
endif()
