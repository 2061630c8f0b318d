// denpex::source — turns files, directories, archives and stdin into Chunks.
//
// A Chunk is a run of whole lines from one source. It must not know anything
// about regexes, signatures or JSON (see docs/ARCHITECTURE.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace denpex::source {

// One readable log stream: a file, stdin, or one member of an archive.
struct SourceInfo {
  std::uint32_t id = 0;    // index in the order sources were opened
  std::string name;        // display name: "dmesg", "node.tar.gz:var/log/dmesg", "<stdin>"
  std::string path;        // the filesystem path the user gave (the container for archive members)
  std::optional<std::int64_t> mtime; // seconds since the epoch, when known (used to infer years)
};

// A run of complete lines. Lines are separated by '\n'; the last line of the
// chunk may lack its '\n' (end of input, or a piece of an over-long line that
// continues in the next chunk with the same line number).
//
// `text` points into the reader's buffer: it is valid only until the next
// call to LineReader::next(). Anything kept longer must copy its line.
struct Chunk {
  std::string_view text;
  std::uint64_t first_line = 1; // 1-based line number of text[0]
  std::uint64_t offset = 0;     // byte offset of text[0] in the (decompressed) stream
};

struct SourceStats {
  std::uint64_t bytes = 0;          // bytes read (decompressed)
  std::uint64_t lines = 0;          // '\n'-terminated lines, plus a final unterminated one
  std::uint64_t long_lines_cut = 0; // lines longer than the limit, matched in pieces
  std::uint64_t nul_bytes = 0;      // NUL bytes converted to '\n'
  bool truncated = false;           // reading stopped early (read error, size limit)
};

} // namespace denpex::source
