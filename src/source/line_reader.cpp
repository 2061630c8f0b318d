#include <denpex/source/line_reader.hpp>
#include <denpex/util/strings.hpp>

#include <algorithm>
#include <cstring>

namespace denpex::source {

namespace {

const char* find_last_newline(const char* p, std::size_t n) {
  return static_cast<const char*>(::memrchr(p, '\n', n));
}

// Runs on bytes as they arrive ([from, to) of the buffer, so that line
// boundaries are right before any newline is searched for): NUL -> '\n', and
// a lone CR (not followed by '\n') -> '\n'. A CR that is the last byte read
// so far is decided when the next byte arrives (or at EOF); `from` may point
// one byte back at it.
void convert_new_bytes(char* buf, std::size_t from, std::size_t to, bool eof, std::uint64_t& nuls) {
  char* end = buf + to;
  for (char* q = buf + from; (q = static_cast<char*>(std::memchr(q, '\0', static_cast<std::size_t>(end - q)))) != nullptr;
       ++q) {
    *q = '\n';
    ++nuls;
  }
  const std::size_t start = from > 0 && buf[from - 1] == '\r' ? from - 1 : from;
  for (char* q = buf + start; (q = static_cast<char*>(std::memchr(q, '\r', static_cast<std::size_t>(end - q)))) != nullptr;
       ++q) {
    if (q + 1 < end) {
      if (q[1] != '\n') {
        *q = '\n';
      }
    } else if (eof) {
      *q = '\n';
    }
  }
}

// Drops the CR of every CRLF in `len` bytes at `p` (the bytes after it move
// left, so `$` in a pattern means the end of the line's text). Returns the new
// length. The reader never cuts between the CR and LF of a pair.
std::size_t drop_crlf_cr(char* p, std::size_t len) {
  char* q = static_cast<char*>(std::memchr(p, '\r', len));
  if (q == nullptr) {
    return len;
  }
  char* end = p + len;
  char* out = q;
  for (; q < end; ++q) {
    if (*q == '\r' && q + 1 < end && q[1] == '\n') {
      continue;
    }
    *out++ = *q;
  }
  return static_cast<std::size_t>(out - p);
}

} // namespace

LineReader::LineReader(ByteStream& stream, std::string name, ReaderOptions options)
    : m_stream(stream), m_name(std::move(name)), m_options(options) {
  m_options.max_line = std::clamp<std::size_t>(m_options.max_line, 16, m_options.buffer_size / 2);
  m_buf.resize(m_options.buffer_size);
}

Chunk LineReader::emit(std::size_t len) {
  char* p = m_buf.data() + m_begin;
  const std::size_t text_len = drop_crlf_cr(p, len);
  const auto newlines = util::count_newlines(std::string_view(p, text_len));
  Chunk chunk{std::string_view(p, text_len), m_line, m_offset};
  m_line += newlines;
  m_stats.lines += newlines;
  m_offset += len;
  m_begin += len;
  return chunk;
}

Expected<std::optional<Chunk>> LineReader::next() {
  for (;;) {
    const std::size_t avail = m_end - m_begin;
    if (avail > 0) {
      const char* nl = find_last_newline(m_buf.data() + m_begin, avail);
      if (nl != nullptr) {
        m_in_long_line = false;
        return emit(static_cast<std::size_t>(nl - (m_buf.data() + m_begin)) + 1);
      }
      if (m_eof) {
        auto chunk = emit(avail);
        if (!chunk.text.empty() && chunk.text.back() != '\n') {
          ++m_stats.lines; // the final, unterminated line
        }
        return chunk;
      }
      if (avail >= m_options.max_line) {
        if (!m_in_long_line) {
          ++m_stats.long_lines_cut;
          m_in_long_line = true;
        }
        std::size_t cut = m_options.max_line;
        if (m_buf[m_begin + cut - 1] == '\r') {
          --cut; // keep a CRLF pair together
        }
        return emit(cut);
      }
    } else if (m_eof) {
      if (m_error) {
        auto e = std::move(*m_error);
        m_error.reset();
        return tl::unexpected<Error>(std::move(e));
      }
      return std::optional<Chunk>{};
    }

    // Need more bytes: keep the partial line, move it to the front, read.
    if (m_begin > 0) {
      std::memmove(m_buf.data(), m_buf.data() + m_begin, m_end - m_begin);
      m_end -= m_begin;
      m_begin = 0;
    }
    std::size_t room = m_buf.size() - m_end;
    if (m_options.max_bytes != 0) {
      const auto left = m_options.max_bytes - std::min(m_options.max_bytes, m_stats.bytes);
      if (left == 0) {
        m_stats.truncated = true;
        m_error = Error{ErrorKind::format, m_name,
                        "stopped after " + std::to_string(m_options.max_bytes) +
                            " bytes (the decompressed size limit); the rest was not read",
                        "raise it with --max-input-size"};
        m_eof = true;
        convert_new_bytes(m_buf.data(), m_end, m_end, true, m_stats.nul_bytes);
        continue;
      }
      room = std::min<std::size_t>(room, static_cast<std::size_t>(left));
    }
    auto got = m_stream.read(m_buf.data() + m_end, room);
    if (!got) {
      m_stats.truncated = true;
      m_error = std::move(got.error());
      m_eof = true;
      convert_new_bytes(m_buf.data(), m_end, m_end, true, m_stats.nul_bytes);
      continue;
    }
    if (*got == 0) {
      m_eof = true;
      convert_new_bytes(m_buf.data(), m_end, m_end, true, m_stats.nul_bytes); // a trailing lone CR
      continue;
    }
    convert_new_bytes(m_buf.data(), m_end, m_end + *got, false, m_stats.nul_bytes);
    m_end += *got;
    m_stats.bytes += *got;
  }
}

} // namespace denpex::source
