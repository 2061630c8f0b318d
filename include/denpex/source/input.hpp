// denpex::source — finds the log streams behind the paths a user names.
//
// A path can be a file, a directory (walked recursively in sorted order), an
// archive (.tar, .tar.gz, .tar.zst, .zip ...), a single compressed file (.gz,
// .zst, .xz, .bz2), or "-" for stdin. Archives and compressed streams are
// opened with libarchive, detected by content, not by name; a compressed
// member inside an archive (nvidia-bug-report.log.gz in a node tarball) is
// opened in turn.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/source/byte_stream.hpp>
#include <denpex/source/chunk.hpp>
#include <denpex/util/diagnostics.hpp>

namespace denpex::source {

struct InputOptions {
  std::uint64_t max_bytes_per_source = 64ull << 30; // decompressed-size limit per stream (zip bombs)
  bool skip_binary_in_dirs = true;                  // directory walks skip files that look binary
  int follow_idle_ms = 0;                           // >0: follow growing regular files until idle this long
  // Directory walks skip what is not a log by default: VCS and build trees
  // (.git, node_modules, __pycache__, ...), source code, scripts and
  // configuration (*.py, *.cpp, *.sh, *.yaml, ...), binaries and model files
  // (docs/inputs.md). `include` globs read a file the defaults would skip;
  // `exclude` globs skip files or directories. A glob matches a file's name
  // or its path below the walked directory (fnmatch(3); `*` crosses '/').
  std::vector<std::string> include;
  std::vector<std::string> exclude;
};

// Why a directory walk would skip `relative` (a path below the walked
// directory), or nullopt to read it. `directory` for directories.
std::optional<std::string> walk_skip_reason(std::string_view relative, bool directory, const InputOptions& options);

// The format of a report denpex wrote ("JSON", "SARIF", "HTML", "Markdown",
// "Prometheus", "text"), recognised from its first bytes, or nullopt for
// anything else. Such files are never read as logs; denpex's findings
// (JSONL) are not reports and merge (scan.hpp).
std::optional<std::string_view> own_report_format(std::string_view head);

// One unit of work: a path that yields one or more sources. Units are
// independent, so they can be read on different threads.
struct InputUnit {
  std::string path;       // as the user gave it (or as found in a directory walk)
  std::string display;    // name shown in output
  bool from_walk = false; // found by walking a directory (binary files are skipped)
};

// Called once per log stream found in a unit. `stream` is valid only during
// the call. Return false to stop reading this unit.
using SourceVisitor = std::function<bool(SourceInfo& info, ByteStream& stream)>;

// The I/O seam (bloaty's InputFileFactory): production code opens the file
// system, tests open strings from memory.
class InputOpener {
public:
  virtual ~InputOpener() = default;
  // Expands user paths into units (directories walked, sorted); errors for
  // paths that do not exist or cannot be listed go to `diags`.
  virtual std::vector<InputUnit> expand(const std::vector<std::string>& paths, Diagnostics& diags) = 0;
  // Opens one unit and visits each source in it. Errors go to `diags`.
  virtual void read(const InputUnit& unit, Diagnostics& diags, const SourceVisitor& visit) = 0;
};

std::unique_ptr<InputOpener> make_filesystem_opener(InputOptions options);

// Documents held in memory (an editor's buffer, a page's dropped file, a
// test): units are the names in `files`; content is served from memory,
// with the same archive detection as the file system opener. `mtime`, when
// known, serves as a file's modification time does (the year of stamps
// that print none).
struct MemoryFile {
  std::string name;
  std::string content;
  std::optional<std::int64_t> mtime;
};
std::unique_ptr<InputOpener> make_document_opener(std::vector<MemoryFile> files);
std::unique_ptr<InputOpener> make_memory_opener(std::vector<std::pair<std::string, std::string>> files);

} // namespace denpex::source
