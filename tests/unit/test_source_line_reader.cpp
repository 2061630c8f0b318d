// Unit tests for source::LineReader over in-memory streams.
//
// The reader's contract (include/denpex/source/line_reader.hpp): chunks end on
// '\n' except the last unterminated line and pieces of over-long lines; NUL and
// lone CR become soft breaks ('\n' that are not lines of the file), CRLF
// becomes LF; data read before a stream error is returned before the error.
#include <catch2/catch.hpp>

#include <algorithm>

#include <denpex/source/byte_stream.hpp>
#include <denpex/source/line_reader.hpp>

#include <string>
#include <string_view>
#include <vector>

using denpex::Error;
using denpex::ErrorKind;
using denpex::Expected;
using denpex::source::Chunk;
using denpex::source::LineReader;
using denpex::source::MemoryStream;
using denpex::source::ReaderOptions;

namespace {

struct Collected {
  std::string text;                 // all chunks concatenated
  std::vector<std::string> chunks;  // each chunk's text (copied)
  std::vector<std::uint64_t> first; // each chunk's first_line
  std::vector<std::uint64_t> offs;  // each chunk's offset
  std::optional<Error> error;
};

Collected read_all(LineReader& reader) {
  Collected c;
  for (int guard = 0; guard < 100000; ++guard) {
    auto r = reader.next();
    if (!r) {
      c.error = r.error();
      // After the error the reader reports EOF.
      auto after = reader.next();
      REQUIRE(after);
      CHECK_FALSE(after->has_value());
      return c;
    }
    if (!r->has_value()) {
      return c;
    }
    const Chunk& ch = **r;
    c.text.append(ch.text);
    c.chunks.emplace_back(ch.text);
    c.first.push_back(ch.first_line);
    c.offs.push_back(ch.offset);
  }
  FAIL("reader did not reach EOF");
  return c;
}

Collected read_string(std::string_view data, ReaderOptions opts = {}) {
  MemoryStream in(data);
  LineReader reader(in, "mem", opts);
  return read_all(reader);
}

// Returns `data` in pieces of at most `step` bytes, then fails with an I/O
// error (or, with fail = false, reports EOF).
class FailingStream final : public denpex::source::ByteStream {
public:
  FailingStream(std::string data, std::size_t step, bool fail = true)
      : m_data(std::move(data)), m_step(step), m_fail(fail) {}
  [[nodiscard]] Expected<std::size_t> read(char* buf, std::size_t n) override {
    if (m_pos >= m_data.size()) {
      if (!m_fail) {
        return std::size_t{0};
      }
      ++m_failures;
      return denpex::make_error(ErrorKind::io, "failing", "read failed: Input/output error");
    }
    const auto take = std::min({n, m_step, m_data.size() - m_pos});
    std::copy_n(m_data.data() + m_pos, take, buf);
    m_pos += take;
    return take;
  }
  int m_failures = 0;

private:
  std::string m_data;
  std::size_t m_step;
  bool m_fail;
  std::size_t m_pos = 0;
};

// 1-based line number of byte `pos` in `text`.
std::uint64_t line_of(std::string_view text, std::size_t pos) {
  std::uint64_t n = 1;
  for (std::size_t i = 0; i < pos; ++i) {
    n += text[i] == '\n' ? 1 : 0;
  }
  return n;
}

} // namespace

TEST_CASE("source::LineReader: empty input gives EOF at once", "[source]") {
  auto c = read_string("");
  CHECK(c.chunks.empty());
  CHECK_FALSE(c.error);
  MemoryStream in("");
  LineReader reader(in, "mem");
  auto r = reader.next();
  REQUIRE(r);
  CHECK_FALSE(r->has_value());
  CHECK(reader.stats().lines == 0);
  CHECK(reader.stats().bytes == 0);
}

TEST_CASE("source::LineReader: chunks end on newline, line numbers and offsets add up", "[source]") {
  // Real NCCL lines (facebookresearch/deit#28), repeated to span many 64-byte buffers.
  const std::string base = "gpu-dev006:25486:25486 [0] NCCL INFO Using network IB\n"
                           "gpu-dev006:25486:25486 [0] NCCL INFO NET/IB : Using [0]mlx4_0:1/RoCE\n"
                           "short\n"
                           "\n";
  std::string input;
  for (int i = 0; i < 20; ++i) {
    input += base;
  }
  ReaderOptions opts;
  opts.buffer_size = 256;
  opts.max_line = 128;
  MemoryStream in(input);
  LineReader reader(in, "mem", opts);
  auto c = read_all(reader);
  REQUIRE_FALSE(c.error);
  CHECK(c.text == input);
  REQUIRE(c.chunks.size() > 5);
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < c.chunks.size(); ++i) {
    INFO("chunk " << i);
    CHECK(c.chunks[i].back() == '\n');
    CHECK(c.offs[i] == offset);
    CHECK(c.first[i] == line_of(input, offset));
    offset += c.chunks[i].size();
  }
  CHECK(reader.stats().lines == 80);
  CHECK(reader.stats().bytes == input.size());
  CHECK(reader.stats().long_lines_cut == 0);
  CHECK_FALSE(reader.stats().truncated);
}

TEST_CASE("source::LineReader: line numbers stay exact across the 16-byte counter's edges", "[source]") {
  // Runs of empty lines longer than 255 x 16 bytes (where the per-byte
  // counters are summed), lines of every length around 16, a tail shorter
  // than 16 bytes.
  std::string input(5000, '\n');
  for (int len = 0; len < 40; ++len) {
    input += std::string(static_cast<std::size_t>(len), 'x') + "\n";
  }
  input += std::string(4081, '\n') + "tail\n";
  for (const std::size_t buffer : {std::size_t{1} << 20, std::size_t{1000}}) {
    ReaderOptions opts;
    opts.buffer_size = buffer;
    MemoryStream in(input);
    LineReader reader(in, "mem", opts);
    auto c = read_all(reader);
    REQUIRE_FALSE(c.error);
    CHECK(reader.stats().lines == static_cast<std::uint64_t>(std::count(input.begin(), input.end(), '\n')));
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < c.chunks.size(); ++i) {
      CHECK(c.first[i] == line_of(input, offset));
      offset += c.chunks[i].size();
    }
  }
}

TEST_CASE("source::LineReader: final unterminated line is its own end", "[source]") {
  const std::string input = "first line\nsecond line without newline";
  MemoryStream in(input);
  LineReader reader(in, "mem");
  auto c = read_all(reader);
  CHECK(c.text == input);
  CHECK(c.chunks.back().back() != '\n');
  CHECK(reader.stats().lines == 2);
}

TEST_CASE("source::LineReader: tiny buffer cuts over-long lines into pieces and counts them", "[source]") {
  ReaderOptions opts;
  opts.buffer_size = 64;
  opts.max_line = 16;
  // Two over-long lines (40 and 33 bytes) around short ones.
  const std::string long1(40, 'a');
  const std::string long2(33, 'b');
  const std::string input = "x\n" + long1 + "\nshort\n" + long2 + "\ny\n";
  // Byte-at-a-time reads (a slow pipe): the reader never holds a whole long line.
  FailingStream in(input, 1, false);
  LineReader reader(in, "mem", opts);
  auto c = read_all(reader);
  REQUIRE_FALSE(c.error);
  CHECK(c.text == input);
  CHECK(reader.stats().long_lines_cut == 2);
  CHECK(reader.stats().lines == 5);
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < c.chunks.size(); ++i) {
    INFO("chunk " << i << ": '" << c.chunks[i] << "'");
    CHECK(c.chunks[i].size() <= 64);
    CHECK(c.offs[i] == offset);
    // A piece of a long line keeps the line's number.
    CHECK(c.first[i] == line_of(input, offset));
    if (c.chunks[i].back() != '\n') {
      CHECK(c.chunks[i].size() == 16); // a cut piece is exactly max_line
    }
    offset += c.chunks[i].size();
  }
  // The pieces of line 2 all report line 2.
  std::size_t pieces_of_line2 = 0;
  for (std::size_t i = 0; i < c.chunks.size(); ++i) {
    if (c.first[i] == 2 && c.chunks[i].find('a') != std::string::npos) {
      ++pieces_of_line2;
    }
  }
  CHECK(pieces_of_line2 >= 3);
}

TEST_CASE("source::LineReader: max_line is clamped to at least 16 and at most half the buffer", "[source]") {
  ReaderOptions opts;
  opts.buffer_size = 64;
  opts.max_line = 1; // clamped to 16
  const std::string input(50, 'z');
  MemoryStream in(input);
  LineReader reader(in, "mem", opts);
  auto c = read_all(reader);
  CHECK(c.text == input);
  REQUIRE(c.chunks.size() == 4); // 16 + 16 + 16 + 2
  CHECK(c.chunks[0].size() == 16);
  CHECK(c.chunks[3].size() == 2);
  CHECK(reader.stats().long_lines_cut == 1);
  CHECK(reader.stats().lines == 1);
}

TEST_CASE("source::LineReader: byte transformations", "[source]") {
  struct Case {
    const char* name;
    std::string input;
    std::string expected;
    std::uint64_t nuls;
    std::uint64_t lines;
  };
  using namespace std::string_literals;
  // The progress bar line is real tqdm output redrawn with CR.
  auto c = GENERATE(values<Case>({
      // Soft breaks separate lines for matching but are not lines of the
      // file: the line count is the input's own newlines (issue 32).
      {"NUL becomes a soft break", "abc\0def\n"s, "abc\ndef\n"s, 1, 1},

      {"lone CR becomes a soft break", " 10%|#         | 1/10\r 20%|##        | 2/10\n"s,
       " 10%|#         | 1/10\n 20%|##        | 2/10\n"s, 0, 1},
      {"CRLF becomes LF", "a\r\nb\r\n"s, "a\nb\n"s, 0, 2},
      // "\r\0" is no CRLF: both are soft breaks.
      {"CR then NUL", "x\r\0y\n"s, "x\n\ny\n"s, 1, 1},
  }));
  DYNAMIC_SECTION(c.name) {
    MemoryStream in(c.input);
    LineReader reader(in, "mem");
    auto got = read_all(reader);
    CHECK(got.text == c.expected);
    CHECK(reader.stats().nul_bytes == c.nuls);
    CHECK(reader.stats().lines == c.lines);
  }
}

TEST_CASE("source::LineReader: CRLF split across a buffer refill is not turned into two newlines", "[source]") {
  // With a 64-byte buffer the '\r' of a CRLF can be the last byte read before
  // the reader has to refill; it must still be seen as part of CRLF.
  ReaderOptions opts;
  opts.buffer_size = 64;
  opts.max_line = 32;
  std::string input;
  for (int i = 0; i < 40; ++i) {
    input += std::string(static_cast<std::size_t>(i % 7 + 3), 'k') + "\r\n";
  }
  for (std::size_t step : {1u, 3u, 7u, 64u}) {
    DYNAMIC_SECTION("read step " << step) {
      FailingStream in(input, step);
      LineReader reader(in, "mem", opts);
      auto got = read_all(reader);
      REQUIRE(got.error); // the stream fails at its end
      std::string expected;
      for (char ch : input) {
        if (ch != '\r') {
          expected += ch;
        }
      }
      CHECK(got.text == expected);
      CHECK(reader.stats().lines == 40);
    }
  }
}

TEST_CASE("source::LineReader: a read error comes after the data read before it", "[source]") {
  const std::string input = "line one\nline two\npartial";
  FailingStream in(input, 5);
  LineReader reader(in, "failing");
  auto c = read_all(reader);
  CHECK(c.text == input);
  REQUIRE(c.error);
  CHECK(c.error->kind == ErrorKind::io);
  CHECK(c.error->where == "failing");
  CHECK(c.error->what == "read failed: Input/output error");
  CHECK(reader.stats().truncated);
  CHECK(reader.stats().lines == 3);
  CHECK(in.m_failures == 1); // never read again after the error
}

TEST_CASE("source::LineReader: max_bytes stops with a format error", "[source]") {
  ReaderOptions opts;
  opts.max_bytes = 10;
  MemoryStream in("0123456789abcdef\n");
  LineReader reader(in, "big.log", opts);
  auto c = read_all(reader);
  CHECK(c.text == "0123456789");
  REQUIRE(c.error);
  CHECK(c.error->kind == ErrorKind::format);
  CHECK(c.error->where == "big.log");
  CHECK(reader.stats().truncated);
  CHECK(reader.stats().bytes == 10);
}

// Regression (found by the unit tests, fixed): LineReader::next() looks for '\n' before NUL and lone CR are converted,
// so input that ends in NULs or a CR counts one line too many ("plus a final
// unterminated one" is added although, once converted, the input ends in '\n').
// See src/source/line_reader.cpp, the `++m_stats.lines` in the m_eof branch.
TEST_CASE("source::LineReader: stats.lines for input ending in NUL or CR", "[source]") {
  struct Case {
    const char* name;
    std::string input;
    std::string expected;
    std::uint64_t nuls;
    std::uint64_t lines;
  };
  using namespace std::string_literals;
  auto c = GENERATE(values<Case>({
      {"only NULs", "\0\0\0\0"s, "\n\n\n\n"s, 4, 1},
      {"crash-truncated log ends in zero blocks", "last line\n\0\0\0"s, "last line\n\n\n\n"s, 3, 2},
      {"CR at end of input", "tail\r"s, "tail\n"s, 0, 1},
  }));
  DYNAMIC_SECTION(c.name) {
    MemoryStream in(c.input);
    LineReader reader(in, "mem");
    auto got = read_all(reader);
    CHECK(got.text == c.expected); // the text itself is right
    CHECK(reader.stats().nul_bytes == c.nuls);
    CHECK(reader.stats().lines == c.lines);
  }
}

TEST_CASE("source::LineReader: a line is cut only when its end is not in the buffer", "[source]") {
  // The contract (line_reader.hpp): memory stays bounded, so a line whose end
  // is not within max_line bytes of what is buffered is matched in pieces; a
  // long line that fits in the buffer is passed whole.
  ReaderOptions opts;
  opts.buffer_size = 64;
  opts.max_line = 16;
  {
    const std::string input = "x\n" + std::string(40, 'a') + "\nshort\n";
    MemoryStream in(input);
    LineReader reader(in, "mem", opts);
    auto c = read_all(reader);
    CHECK(c.text == input);
    CHECK(reader.stats().long_lines_cut == 0);
  }
  {
    const std::string input = std::string(200, 'b') + "\nshort\n";
    MemoryStream in(input);
    LineReader reader(in, "mem", opts);
    auto c = read_all(reader);
    CHECK(c.text == input);
    CHECK(reader.stats().long_lines_cut == 1);
    CHECK(reader.stats().lines == 2);
  }
}

// Regression (found by the unit tests, fixed): when a cut falls between the '\r' and '\n' of a CRLF (a long line read
// from a slow pipe), normalize() sees the '\r' as the piece's last byte, calls
// it a lone CR and turns it into '\n'; the '\n' then starts an extra empty
// line and every later line number is one too high.
TEST_CASE("source::LineReader: CRLF straddling a long-line cut", "[source]") {
  ReaderOptions opts;
  opts.buffer_size = 64;
  opts.max_line = 16;
  const std::string input = std::string(31, 'k') + "\r\nnext\n";
  FailingStream in(input, 1, false);
  LineReader reader(in, "mem", opts);
  auto c = read_all(reader);
  CHECK(c.text == std::string(31, 'k') + "\nnext\n");
  CHECK(reader.stats().lines == 2);
  REQUIRE_FALSE(c.first.empty());
  CHECK(c.first.back() == 2); // "next" is line 2
}

// See: #32. A progress bar redrawn with CR, and NULs, are one line of the
// file: every piece between soft breaks is numbered with the line of the
// input it sits on, at every buffer size, through Chunk::line_at and
// LineCounter alike.
TEST_CASE("source::LineReader: soft breaks keep the input's line numbers at every buffer size", "[source]") {
  using namespace std::string_literals;
  std::string input = "header\n"s;
  std::vector<std::uint64_t> expected; // the input line of every piece, in order
  expected.push_back(1);
  for (int i = 0; i < 300; ++i) {
    input += "\r " + std::to_string(i) + "%|###       | " + std::to_string(i) + "/300 [00:01<00:09]";
    expected.push_back(2); // "" before the first CR, then every redraw
  }
  expected.push_back(2);
  input += "\nRuntimeError: boom\n"s + "x\0\0y\r\nlast"s;
  expected.push_back(3);
  expected.push_back(4);
  expected.push_back(4);
  expected.push_back(4);
  expected.push_back(5);
  for (std::size_t buffer : {64u, 100u, 257u, 4096u, 1u << 20}) {
    DYNAMIC_SECTION("buffer " << buffer) {
      MemoryStream in(input);
      ReaderOptions opts;
      opts.buffer_size = buffer;
      opts.max_line = buffer / 2;
      LineReader reader(in, "mem", opts);
      std::vector<std::uint64_t> got_at;
      std::vector<std::uint64_t> got_counter;
      bool continues = false; // the previous chunk ended inside a piece
      for (;;) {
        auto r = reader.next();
        REQUIRE(r);
        if (!*r) {
          break;
        }
        const Chunk& c = **r;
        denpex::source::LineCounter lines(c);
        for (std::size_t pos = 0; pos < c.text.size();) {
          auto nl = c.text.find('\n', pos);
          nl = nl == std::string_view::npos ? c.text.size() : nl;
          if (!continues || pos > 0) {
            got_at.push_back(c.line_at(pos));
            got_counter.push_back(lines.at(pos));
          }
          pos = nl + 1;
        }
        continues = !c.text.empty() && c.text.back() != '\n';
      }
      CHECK(got_at == expected);
      CHECK(got_counter == expected);
      CHECK(reader.stats().lines == 5);
      if (buffer >= 257) { // a redraw (about 40 bytes) is itself over-long in smaller buffers
        CHECK(reader.stats().long_lines_cut == 0);
      }
    }
  }
}
