// denpex::context — who said a matched line, and when.
//
// Extracts rank, local rank, host, GPU (index or PCI bus id), pid and a
// timestamp from a matched line, its neighbours in the chunk, and its
// source's name. Called only for matched lines, never per line of input: a
// line without a stamp looks back through its chunk for the nearest earlier
// stamp, and a per-source state remembers the last stamp seen at the end of
// the previous chunk (found by looking back from the chunk's end, a bounded
// amount of work per chunk). Every field records where it came from, so the
// report can say why it believes a line is rank 3.
//
// Knows nothing about signatures (catalog) or ordering (correlate).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace denpex::context {

// identity: resolved through the run's identity map (NCCL's init lines tie a
// process and a GPU bus id to a rank), at correlation time.
// option: from the command line (--node).
// incident, launcher: a line that names no rank took it from another line of
// the same failure, or from the launcher's report of the first worker that
// failed, at correlation time (pass who).
enum class Origin { prefix, body, capture, file_name, neighbour, identity, option, incident, launcher };
std::string_view to_string(Origin o);

template <typename T> struct Field {
  T value{};
  Origin origin = Origin::body;
};

// A calendar time as printed. Year 0 means the format has no year (syslog,
// glog); tz_minutes is set only when the stamp carries a zone.
struct WallTime {
  int year = 0;
  int month = 1;
  int day = 1;
  int hour = 0;
  int minute = 0;
  int second = 0;
  int micros = 0;
  std::optional<int> tz_minutes;
};

enum class ClockKind { none, wall, monotonic };
std::string_view to_string(ClockKind k);

struct Timestamp {
  ClockKind kind = ClockKind::none;
  WallTime wall;                 // kind == wall
  std::int64_t mono_micros = 0;  // kind == monotonic: since boot, comparable only within one source
  std::string_view format;       // "iso8601", "syslog", "glog", "dmesg", "dmesg-T", "python", "epoch"
  Origin origin = Origin::body;
};

// Microseconds since the epoch for `t`, taking `assumed_year` when the stamp
// has none. A zone-less stamp is read as UTC: all zone-less stamps of one
// input are treated as one consistent local clock.
std::int64_t to_epoch_micros(const WallTime& t, int assumed_year);

// Parses a timestamp anywhere near the start of `line` (after prefixes).
std::optional<Timestamp> find_timestamp(std::string_view line);

struct LineContext {
  std::optional<Field<int>> rank;
  std::optional<Field<int>> local_rank;
  std::optional<Field<int>> nranks;
  std::optional<Field<std::string>> host;
  std::optional<Field<std::string>> pci; // normalised "0000:3b:00"
  std::optional<Field<int>> gpu;         // CUDA device index
  std::optional<Field<std::int64_t>> pid;
  Timestamp time;
};

// Normalises a PCI bus id ("3B:00.0", "0000:3b:00", "00000000:3B:00.0") to
// "0000:3b:00"; returns "" if `s` is not one.
std::string normalize_pci(std::string_view s);

// The launcher prefixes stacked at the start of `line` ("[rank3]:",
// "[1,3]<stderr>:", "3: "): the rank they name and where the message begins.
// Cheap (no timestamp parsing): for looking at many neighbouring lines.
struct Prefix {
  std::optional<int> rank;
  std::optional<int> local_rank;
  std::size_t body = 0;
};
Prefix launcher_prefix(std::string_view line);

// Whether `prefix` (a line up to a match) marks the line as logged below the
// error level: a level word WARNING, WARN, INFO or DEBUG standing alone
// (Python logging's "[WARNING]", "root - INFO -", loguru's "| WARNING |"),
// or glog's W/I level letter before its MMDD stamp ("W1201 06:22:31").
// An exception printed in such a line was caught and logged, not fatal
// (torch._dynamo's "[WARNING] FileNotFoundError: ..." tracebacks).
bool logged_below_error(std::string_view prefix);

// Context of the line itself: prefixes ([rank3]:, [1,3]<stderr>:, "3: ",
// "host: "), c10d's [Rank N], NCCL's host:pid:tid [dev], syslog hosts, NVRM
// bus ids, and its timestamp.
LineContext parse_line(std::string_view line);

// What a source's path says: rank_3.log, node-017/dmesg, node-017.tar.gz:...
struct PathContext {
  std::optional<int> rank;
  std::string host;
};
PathContext parse_path(std::string_view path);

class FormatSet; // formats.hpp

// Per-source state for the lines of one source, in order.
class SourceContext {
public:
  // `formats`: line formats from data (--formats DIR) applied to matched
  // lines for the fields the built-in scanners leave empty; may be null.
  explicit SourceContext(std::string_view source_name, const FormatSet* formats = nullptr);

  // Context for the matched line at `line_pos` in `chunk`: the line's own
  // fields, then (for what is missing) the nearest earlier stamp in the chunk
  // or from earlier chunks, then the source's path.
  //
  // `match_pos` is where the matched message starts in the line: when output
  // from several ranks was interleaved on one line ("[rank1]:... [rank3]:[E..."),
  // the launcher prefix nearest before it names the rank.
  LineContext context_for(std::string_view chunk, std::size_t line_pos, std::string_view line,
                          std::size_t match_pos = 0);

  // Call at the end of every chunk: remembers the last stamp in it (looking
  // back over at most a few lines).
  void end_chunk(std::string_view chunk);

  [[nodiscard]] const PathContext& path() const { return m_path; }

private:
  PathContext m_path;
  const FormatSet* m_formats = nullptr;
  // A line without a stamp takes the nearest earlier one within this many
  // lines (a stack trace or a multi-line message under one stamped line).
  static constexpr std::size_t k_stamp_lookback = 64;
  std::optional<Timestamp> m_last_stamp;  // the last stamp of the previous chunks
  std::size_t m_last_stamp_distance = 0;  // lines between it and the end of the previous chunk
  std::string m_last_host;

  // The nearest earlier stamp for the line at `line_pos` (the walk above).
  std::optional<Timestamp> stamp_above(std::string_view chunk, std::size_t line_pos);
  // The last walk, in this chunk. Matches come in line order, so the next
  // walk stops where this one began and takes its answer from there: a log
  // without stamps costs one look per line, not k_stamp_lookback per match.
  struct Walk {
    const char* chunk = nullptr;    // null: none in this chunk
    std::size_t line_pos = 0;       // the line it was for
    std::optional<Timestamp> stamp; // found `lines` lines above it
    std::size_t lines = 0;          // else: the lines it looked at
    bool to_start = false;          // ... and it reached the chunk's start
  } m_walk;
};

} // namespace denpex::context
