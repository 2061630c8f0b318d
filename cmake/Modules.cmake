# One STATIC library per module: the dependency graph is the architecture
# (docs/ARCHITECTURE.md). Public headers live in include/denpex/<module>/.
function(denpex_module name)
  cmake_parse_arguments(M "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  add_library(denpex_${name} STATIC ${M_SOURCES})
  target_include_directories(denpex_${name} PUBLIC "${PROJECT_SOURCE_DIR}/include")
  target_link_libraries(denpex_${name} PUBLIC ${M_PUBLIC} PRIVATE denpex_options ${M_PRIVATE})
endfunction()

denpex_module(util SOURCES src/util/diagnostics.cpp src/util/strings.cpp src/util/files.cpp PUBLIC tl::expected)
denpex_module(source SOURCES src/source/byte_stream.cpp src/source/chunk.cpp src/source/follow.cpp src/source/line_reader.cpp src/source/input.cpp
              PUBLIC denpex_util PRIVATE denpex::archive denpex::zlib denpex::spdlog)
denpex_module(catalog SOURCES src/catalog/loader.cpp src/catalog/serialize.cpp src/catalog/condition.cpp PUBLIC denpex_util
              PRIVATE nlohmann_json::nlohmann_json denpex::re2 Threads::Threads)
denpex_module(matcher SOURCES src/matcher/matcher.cpp src/matcher/prefilter.cpp PUBLIC denpex_catalog denpex_source
              PRIVATE denpex::re2)
if(HS_FOUND)
  target_compile_definitions(denpex_matcher PRIVATE DENPEX_HAVE_HYPERSCAN)
  target_link_libraries(denpex_matcher PRIVATE denpex::hs)
endif()
denpex_module(context SOURCES src/context/context.cpp src/context/timestamp.cpp src/context/traceback.cpp
              src/context/formats.cpp PUBLIC denpex_util PRIVATE nlohmann_json::nlohmann_json denpex::re2)
denpex_module(correlate SOURCES src/correlate/correlate.cpp src/correlate/clocks.cpp src/correlate/identity.cpp src/correlate/fold.cpp src/correlate/episodes.cpp src/correlate/causality.cpp src/correlate/choose.cpp src/correlate/attach.cpp src/correlate/missing.cpp src/correlate/symptoms_only.cpp src/correlate/fallback.cpp src/correlate/who.cpp src/correlate/stack.cpp src/correlate/gate.cpp src/correlate/runs.cpp src/correlate/describe.cpp src/correlate/rules.cpp src/correlate/starting_points.cpp PUBLIC denpex_catalog denpex_context PRIVATE denpex::fmt)
denpex_module(findings SOURCES src/findings/reader.cpp src/findings/writer.cpp PUBLIC denpex_correlate
              PRIVATE denpex::fmt nlohmann_json::nlohmann_json)
denpex_module(scan SOURCES src/scan/scan.cpp src/scan/collector.cpp src/scan/line_samplers.cpp
              PUBLIC denpex_source denpex_matcher denpex_context PRIVATE denpex_findings Threads::Threads denpex::re2)
denpex_module(report SOURCES src/report/verdict.cpp src/report/json_fields.cpp src/report/redact.cpp src/report/common.cpp src/report/text.cpp src/report/json.cpp src/report/sarif.cpp
              src/report/github.cpp src/report/markdown.cpp src/report/jsonl.cpp src/report/prometheus.cpp src/report/timeline.cpp src/report/html.cpp src/report/registry.cpp src/report/grep.cpp
              PUBLIC denpex_correlate PRIVATE denpex_findings denpex::fmt nlohmann_json::nlohmann_json denpex::re2)
denpex_module(core SOURCES src/core/diagnose.cpp PUBLIC denpex_catalog denpex_matcher denpex_context
              PRIVATE denpex_scan denpex_report denpex_source)
denpex_module(selftest SOURCES src/selftest/selftest.cpp PUBLIC denpex_matcher PRIVATE denpex_context denpex::fmt)
