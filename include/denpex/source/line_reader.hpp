// denpex::source — splits a ByteStream into Chunks that end on line boundaries.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <denpex/source/byte_stream.hpp>
#include <denpex/source/chunk.hpp>
#include <denpex/util/expected.hpp>

namespace denpex::source {

struct ReaderOptions {
  std::size_t buffer_size = 1u << 20;   // bytes held at once; memory is bounded by this
  std::size_t max_line = 64u << 10;     // a line whose end is not within this many bytes of the buffered
                                        // data is matched in pieces of this size (memory stays bounded)
  std::uint64_t max_bytes = 0;          // stop after this many bytes (0 = no limit)
};

// Streams chunks out of `stream`. Memory is bounded by buffer_size whatever
// the input. Transformations, applied in place: CRLF -> LF (so `$` in a
// pattern means the end of the line's text), and a NUL (a crash-truncated log
// ends in zero blocks; ripgrep's "convert", never "quit") or a lone '\r' (a
// progress bar redrawn in place) -> a soft break: '\n' for matching, listed
// in Chunk::soft_breaks and never counted as a line (chunk.hpp). A chunk ends
// after a real '\n', after a soft break when a line runs past max_line, or
// inside a line that has neither. Chunk::offset counts the bytes as read,
// before these changes.
class LineReader {
public:
  LineReader(ByteStream& stream, std::string name, ReaderOptions options = {});

  // The next chunk, std::nullopt at end of input, or the stream's error. Data
  // read before an error is returned first; the error comes on the call after.
  // The chunk's text is valid until the next call.
  [[nodiscard]] Expected<std::optional<Chunk>> next();

  [[nodiscard]] const SourceStats& stats() const { return m_stats; }

private:
  Chunk emit(std::size_t len);

  ByteStream& m_stream;
  std::string m_name;
  ReaderOptions m_options;
  // Not zeroed: a page of it is touched only when input is read into it
  // (an empty or small input costs no more than it needs).
  std::unique_ptr<char[]> m_buf;
  std::size_t m_cap = 0;
  std::size_t m_begin = 0;
  std::size_t m_end = 0;
  std::uint64_t m_line = 1;
  std::uint64_t m_offset = 0;
  bool m_eof = false;
  bool m_in_long_line = false;
  bool m_line_open = false;          // the last chunk ended inside a line of the input
  std::vector<std::uint32_t> m_soft; // the last chunk's soft breaks
  std::optional<Error> m_error;
  SourceStats m_stats;
};

} // namespace denpex::source
