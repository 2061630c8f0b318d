# Every dependency comes from Debian packages (see Makefile: deps).
#
# Each one is used through a denpex:: target defined here, so that how it is
# linked is decided in one place. With DENPEX_STATIC_DEPS (the default) RE2,
# Hyperscan, libarchive with its codecs, fmt, spdlog and the C++ runtime are
# linked into the binary: loading and relocating the 20 shared libraries
# they pulled in (libarchive alone brought libxml2 and ICU) took 9 of the
# 12 ms of `denpex --version` (issue 35, docs/performance.md "Start-up").
# Only glibc stays shared. A dependency whose static archive is missing is
# linked shared, with a message.
find_package(PkgConfig REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(tl-expected REQUIRED)
find_package(Threads REQUIRED)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2) # Debian ships only re2.pc
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib) # truncated-gzip fallback (src/source/input.cpp)
# Hyperscan, the prefilter in front of RE2 (src/matcher/prefilter.cpp). In
# Debian for amd64 only; elsewhere, or with -DDENPEX_HYPERSCAN=OFF, RE2 alone
# scans every byte (same results, about 3x slower).
option(DENPEX_HYPERSCAN "Use Hyperscan as a prefilter when it is installed" ON)
if(DENPEX_HYPERSCAN)
  pkg_check_modules(HS IMPORTED_TARGET libhs)
endif()

set(denpex_static_default ON)
if(DENPEX_SANITIZE)
  set(denpex_static_default OFF) # the sanitizer runtimes want the shared C++ runtime
endif()
option(DENPEX_STATIC_DEPS "Link the libraries denpex uses into the binary (faster start-up)" ${denpex_static_default})

# denpex_static_target(<target> <archive names...> [SHARED <fallback target>])
# An imported target over the named static archives, in link order; if one is
# missing, an alias of the shared fallback.
function(denpex_static_target name)
  cmake_parse_arguments(S "" "SHARED" "ARCHIVES;LINK" ${ARGN})
  set(paths "")
  if(DENPEX_STATIC_DEPS)
    foreach(archive IN LISTS S_ARCHIVES)
      find_library(denpex_lib_${archive} NAMES lib${archive}.a)
      if(NOT denpex_lib_${archive})
        message(STATUS "denpex: lib${archive}.a not found; ${name} is linked shared")
        set(paths "")
        break()
      endif()
      list(APPEND paths "${denpex_lib_${archive}}")
    endforeach()
  endif()
  add_library(${name} INTERFACE IMPORTED GLOBAL)
  if(paths)
    target_link_libraries(${name} INTERFACE ${paths} ${S_LINK})
    get_target_property(includes ${S_SHARED} INTERFACE_INCLUDE_DIRECTORIES)
    if(includes)
      target_include_directories(${name} INTERFACE ${includes})
    endif()
  else()
    target_link_libraries(${name} INTERFACE ${S_SHARED})
  endif()
endfunction()

denpex_static_target(denpex::re2 ARCHIVES re2 LINK Threads::Threads SHARED PkgConfig::RE2)
denpex_static_target(denpex::zlib ARCHIVES z SHARED PkgConfig::ZLIB)
# libarchive's own codecs and digests, in link order. libxml2 (and with it
# ICU) served only the XAR format, which denpex does not read
# (src/source/input.cpp: support_archive_formats).
denpex_static_target(denpex::archive ARCHIVES archive nettle lzma zstd lz4 bz2 z SHARED PkgConfig::LIBARCHIVE)
if(HS_FOUND)
  denpex_static_target(denpex::hs ARCHIVES hs LINK m SHARED PkgConfig::HS)
endif()

# fmt and spdlog: Debian ships neither as a static archive, so their
# compiled parts are compiled here, once (src/deps/).
add_library(denpex::fmt INTERFACE IMPORTED GLOBAL)
add_library(denpex::spdlog INTERFACE IMPORTED GLOBAL)
if(DENPEX_STATIC_DEPS)
  add_library(denpex_fmt_impl STATIC "${PROJECT_SOURCE_DIR}/src/deps/fmt.cpp")
  add_library(denpex_spdlog_impl STATIC "${PROJECT_SOURCE_DIR}/src/deps/spdlog.cpp")
  target_compile_definitions(denpex_spdlog_impl PUBLIC SPDLOG_COMPILED_LIB SPDLOG_FMT_EXTERNAL)
  target_link_libraries(denpex_spdlog_impl PUBLIC denpex_fmt_impl Threads::Threads)
  target_link_libraries(denpex::fmt INTERFACE denpex_fmt_impl)
  target_link_libraries(denpex::spdlog INTERFACE denpex_spdlog_impl)
else()
  target_link_libraries(denpex::fmt INTERFACE fmt::fmt)
  target_link_libraries(denpex::spdlog INTERFACE spdlog::spdlog)
endif()
