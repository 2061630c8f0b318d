#include <denpex/source/line_reader.hpp>
#include <denpex/util/strings.hpp>

#include <algorithm>
#include <cstring>

namespace denpex::source {

namespace {

const char* find_last_newline(const char* p, std::size_t n) {
  return static_cast<const char*>(::memrchr(p, '\n', n));
}

// Every position of byte `c` in [p, p + len), appended to `out`.
void positions_of(const char* p, std::size_t len, char c, std::vector<std::uint32_t>& out) {
  const char* end = p + len;
  for (const char* q = p; (q = static_cast<const char*>(std::memchr(q, c, static_cast<std::size_t>(end - q)))) != nullptr;
       ++q) {
    out.push_back(static_cast<std::uint32_t>(q - p));
  }
}

// Turns every NUL and every CR left after drop_crlf_cr (a lone one: a
// progress bar redrawn in place) in [p, p + len) into a soft break: '\n' for
// matching, recorded in `soft` (ascending) so that it is not counted as a
// line of the file.
void make_soft_breaks(char* p, std::size_t len, std::vector<std::uint32_t>& soft, std::uint64_t& nuls) {
  soft.clear();
  positions_of(p, len, '\0', soft);
  nuls += soft.size();
  const auto nul_count = static_cast<std::ptrdiff_t>(soft.size());
  positions_of(p, len, '\r', soft);
  std::inplace_merge(soft.begin(), soft.begin() + nul_count, soft.end());
  for (const auto at : soft) {
    p[at] = '\n';
  }
}

// Where a line longer than `max` may be cut without cutting a line of the
// input: just after the last soft break (a NUL or a lone CR) within its first
// `max` bytes, or 0 when there is none. `avail` bytes are there, none '\n'.
std::size_t soft_cut(const char* p, std::size_t avail, std::size_t max) {
  std::size_t cut = 0;
  if (const void* nul = ::memrchr(p, '\0', max)) {
    cut = static_cast<std::size_t>(static_cast<const char*>(nul) - p) + 1;
  }
  // A CR as the last byte available may begin a CRLF: not a soft break yet.
  const std::size_t cr_room = std::min(max, avail - 1);
  if (const void* cr = ::memrchr(p, '\r', cr_room)) {
    cut = std::max(cut, static_cast<std::size_t>(static_cast<const char*>(cr) - p) + 1);
  }
  return cut;
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
  m_cap = m_options.buffer_size;
  m_buf.reset(new char[m_cap]); // NOLINT: deliberately uninitialised (see the header)
}

Chunk LineReader::emit(std::size_t len) {
  char* p = m_buf.get() + m_begin;
  const std::size_t text_len = drop_crlf_cr(p, len);
  make_soft_breaks(p, text_len, m_soft, m_stats.nul_bytes);
  const auto newlines = util::count_newlines(std::string_view(p, text_len)) - m_soft.size();
  Chunk chunk{std::string_view(p, text_len), m_line, m_offset, m_soft};
  m_line += newlines;
  // Whether the last line emitted still lacks its '\n' (cut, or soft-broken).
  m_line_open = text_len > 0 && (p[text_len - 1] != '\n' || (!m_soft.empty() && m_soft.back() + 1 == text_len));
  m_stats.lines += newlines;
  m_offset += len;
  m_begin += len;
  return chunk;
}

Expected<std::optional<Chunk>> LineReader::next() {
  for (;;) {
    const std::size_t avail = m_end - m_begin;
    if (avail > 0) {
      const char* nl = find_last_newline(m_buf.get() + m_begin, avail);
      if (nl != nullptr) {
        m_in_long_line = false;
        return emit(static_cast<std::size_t>(nl - (m_buf.get() + m_begin)) + 1);
      }
      if (m_eof) {
        return emit(avail);
      }
      if (avail >= m_options.max_line) {
        if (const auto cut = soft_cut(m_buf.get() + m_begin, avail, m_options.max_line); cut > 0) {
          // A long run of progress-bar redraws (or NULs): cut after the last
          // soft break, which ends a line for matching; nothing was cut.
          m_in_long_line = false;
          return emit(cut);
        }
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
      if (m_line_open) {
        ++m_stats.lines; // the final, unterminated line
        m_line_open = false;
      }
      if (m_error) {
        auto e = std::move(*m_error);
        m_error.reset();
        return tl::unexpected<Error>(std::move(e));
      }
      return std::optional<Chunk>{};
    }

    // Need more bytes: keep the partial line, move it to the front, read.
    if (m_begin > 0) {
      std::memmove(m_buf.get(), m_buf.get() + m_begin, m_end - m_begin);
      m_end -= m_begin;
      m_begin = 0;
    }
    std::size_t room = m_cap - m_end;
    if (m_options.max_bytes != 0) {
      const auto left = m_options.max_bytes - std::min(m_options.max_bytes, m_stats.bytes);
      if (left == 0) {
        m_stats.truncated = true;
        m_error = Error{ErrorKind::format, m_name,
                        "stopped after " + std::to_string(m_options.max_bytes) +
                            " bytes (the decompressed size limit); the rest was not read",
                        "raise it with --max-input-size"};
        m_eof = true;
        continue;
      }
      room = std::min<std::size_t>(room, static_cast<std::size_t>(left));
    }
    auto got = m_stream.read(m_buf.get() + m_end, room);
    if (!got) {
      m_stats.truncated = true;
      m_error = std::move(got.error());
      m_eof = true;
      continue;
    }
    if (*got == 0) {
      m_eof = true;
      continue;
    }
    m_end += *got;
    m_stats.bytes += *got;
  }
}

} // namespace denpex::source
