// denpex::findings — the one description of a findings record
// (docs/output-formats.md, "jsonl"; docs/cluster.md). The writer
// (findings/writer.cpp, report/jsonl.cpp, report/json_fields.cpp for the
// fields --format json shares) and the reader (findings/reader.cpp) name
// every record type and every field they both use through these constants,
// so that neither side can spell one differently.
#pragma once

#include <string_view>

namespace denpex::findings {

// The first record of every findings file says what the file is.
inline constexpr std::string_view k_format = "denpex-findings";
inline constexpr int k_schema_version = 1;

// Record types (`"type"`), in the order a run writes them.
namespace type {
inline constexpr const char* header = "findings";       // format and version: the first record
inline constexpr const char* incident = "incident";
inline constexpr const char* unexplained = "unexplained";
inline constexpr const char* inference = "inference";
inline constexpr const char* starting_point = "starting_point";
inline constexpr const char* diagnostic = "diagnostic";
inline constexpr const char* evidence = "evidence";     // a hit the diagnosis was made from
inline constexpr const char* progress = "progress";     // a progress or relaunch mark
inline constexpr const char* summary = "summary";       // the last record of a run
} // namespace type

// Field names.
namespace key {
inline constexpr const char* type = "type";
inline constexpr const char* schema_version = "schema_version";
inline constexpr const char* format = "format";
inline constexpr const char* tool = "tool";
// Where a line was read.
inline constexpr const char* file = "file";
inline constexpr const char* findings = "findings"; // the findings file a merge read it from
inline constexpr const char* host = "host";
inline constexpr const char* line = "line";
inline constexpr const char* last_line = "last_line";
inline constexpr const char* text = "text";
inline constexpr const char* where = "where";
inline constexpr const char* first = "first";
// What matched.
inline constexpr const char* signature = "signature";
inline constexpr const char* signal = "signal";
inline constexpr const char* signals = "signals";
inline constexpr const char* id = "id";
inline constexpr const char* seen = "seen";
inline constexpr const char* count = "count";
inline constexpr const char* captures = "captures";
inline constexpr const char* collateral = "collateral";
inline constexpr const char* context = "context";
// Who.
inline constexpr const char* rank = "rank";
inline constexpr const char* ranks = "ranks";
inline constexpr const char* also_ranks = "also_ranks";
inline constexpr const char* local_rank = "local_rank";
inline constexpr const char* nranks = "nranks";
inline constexpr const char* gpu = "gpu";
inline constexpr const char* pci = "pci";
inline constexpr const char* pid = "pid";
inline constexpr const char* from = "from"; // per field: how the line's context knew it
// When.
inline constexpr const char* time = "time"; // in `from`
inline constexpr const char* time_us = "time_us";
inline constexpr const char* mono_us = "mono_us";
inline constexpr const char* clock = "clock";
inline constexpr const char* stamp = "stamp";
inline constexpr const char* time_format = "time_format";
// An exception's traceback.
inline constexpr const char* traceback = "traceback";
inline constexpr const char* frame_count = "frame_count";
inline constexpr const char* frames = "frames";
inline constexpr const char* function = "function";
inline constexpr const char* code = "code";
inline constexpr const char* chain = "chain";
inline constexpr const char* link = "link";
// Progress marks.
inline constexpr const char* relaunch = "relaunch";
// The summary: what the run read.
inline constexpr const char* sources = "sources";
inline constexpr const char* bytes = "bytes";
inline constexpr const char* lines = "lines";
inline constexpr const char* matches = "matches";
inline constexpr const char* long_lines_cut = "long_lines_cut";
} // namespace key

} // namespace denpex::findings
