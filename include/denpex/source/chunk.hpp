// denpex::source — turns files, directories, archives and stdin into Chunks.
//
// A Chunk is a run of whole lines from one source. It must not know anything
// about regexes, signatures or JSON (see docs/ARCHITECTURE.md).
#pragma once

#include <cstdint>
#include <algorithm>
#include <optional>
#include <span>
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
// Some of those '\n' are *soft breaks*: a lone '\r' (a progress bar redrawn
// in place) or a NUL of the input, turned into '\n' so that each piece is a
// line for matching, but not a line of the file. Line numbers count the
// input's own newlines only, as editors, `grep -n` and SARIF viewers do, so a
// tqdm bar redrawn 300 times is still one line (docs/ARCHITECTURE.md).
//
// `text` and `soft_breaks` point into the reader's buffers: they are valid
// only until the next call to LineReader::next(). Anything kept longer must
// copy its line.
struct Chunk {
  std::string_view text;
  std::uint64_t first_line = 1; // 1-based line number of text[0]
  std::uint64_t offset = 0;     // byte offset of text[0] in the (decompressed) stream
  std::span<const std::uint32_t> soft_breaks = {}; // ascending offsets in `text` of the soft '\n's

  // The line number of the byte at `pos`: first_line plus the newlines of
  // the input before it.
  [[nodiscard]] std::uint64_t line_at(std::size_t pos) const;
};

// Line numbers of ascending positions in one chunk, counting only the bytes
// between one call and the next (a chunk's matches cost what its text does).
class LineCounter {
public:
  explicit LineCounter(const Chunk& chunk) : m_chunk(chunk), m_line(chunk.first_line) {}

  // The line number of the byte at `pos`; `pos` must not be below the last call's.
  [[nodiscard]] std::uint64_t at(std::size_t pos);

private:
  const Chunk& m_chunk;
  std::uint64_t m_line;
  std::size_t m_pos = 0;  // counted up to here
  std::size_t m_soft = 0; // soft breaks before m_pos
};

struct SourceStats {
  std::uint64_t bytes = 0;          // bytes read (decompressed)
  std::uint64_t lines = 0;          // '\n'-terminated lines, plus a final unterminated one (soft breaks are not lines)
  std::uint64_t long_lines_cut = 0; // lines longer than the limit, matched in pieces
  std::uint64_t nul_bytes = 0;      // NUL bytes turned into soft breaks
  bool truncated = false;           // reading stopped early (read error, size limit)
};

} // namespace denpex::source
