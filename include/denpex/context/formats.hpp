// denpex::context — line formats as data (lnav's log formats idea).
//
// A line format says how a launcher or logger marks its lines: a pattern
// with named captures for the fields it provides (rank, local_rank, host,
// pid, gpu; a time as year, month, day, hour, minute, second, frac) and
// sample lines with the fields they must give. One JSON file each:
//
//   formats/<id>.json   (embedded in the binary; docs/formats.md)
//   --formats DIR       a team's own launcher prefix, without touching C++
//
// The built-in files describe the hand-written scanners of context.cpp,
// which stay on the hot path (`"scanner": true`): their samples are checked
// against parse_line(), so the data and the code cannot drift. Every other
// format is applied with RE2 to matched lines only, for the fields the
// built-in scanners left empty.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/context/context.hpp>
#include <denpex/util/diagnostics.hpp>

namespace re2 {
class RE2;
}

namespace denpex::context {

struct FormatSample {
  std::string line;
  std::map<std::string, std::string> fields; // field -> expected value ("rank" -> "3")
};

struct LineFormat {
  std::string id;
  std::string description;
  std::string pattern;
  std::shared_ptr<const re2::RE2> compiled;
  bool scanner = false; // implemented by the hand-written scanner; the pattern documents it
  std::vector<FormatSample> samples;
  std::string file;
};

// A file's text with the name to report it under.
struct FormatFile {
  std::string name;
  std::string text;
  bool builtin = false; // embedded: its samples were checked by the test suite
};

class FormatSet {
public:
  // Parses and checks `files` (every problem to `diags`, with the file and a
  // JSON Pointer; a bad file is left out): required fields, a pattern RE2
  // accepts whose named captures are known fields, and samples that give
  // exactly their fields (through parse_line() for scanner formats).
  // Built-in scanner formats are only described at run time (not compiled,
  // samples not run: start-up stays short) unless `check_builtin`.
  static FormatSet load(const std::vector<FormatFile>& files, Diagnostics& diags, bool check_builtin = false);

  [[nodiscard]] const std::vector<LineFormat>& formats() const { return m_formats; }
  [[nodiscard]] bool has_data_formats() const { return m_data_formats > 0; }

  // Fills the fields `ctx` lacks from the first data format (not a scanner
  // one) that matches `line`; fields found this way have Origin::prefix.
  void apply(std::string_view line, LineContext& ctx) const;

private:
  std::vector<LineFormat> m_formats;
  std::size_t m_data_formats = 0;
};

// What a format's captures give for `line` (field -> value), or nullopt when
// its pattern does not match. For scanner formats: what parse_line() gives
// for the fields its samples name.
std::optional<std::map<std::string, std::string>> fields_of(const LineFormat& f, std::string_view line);

// The format files embedded at build time (formats/ of the source tree).
std::vector<FormatFile> builtin_format_files();

// Reads every *.json under `dir` (sorted). I/O errors go to `diags`.
std::vector<FormatFile> read_format_directory(const std::string& dir, Diagnostics& diags);

} // namespace denpex::context
