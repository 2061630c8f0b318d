#include <denpex/util/strings.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <cctype>

namespace denpex::util {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = 0;
  unsigned min = 0;
  unsigned cp = 0;
  if (c < 0x80) {
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1Fu;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0Fu;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07u;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) {
      return 0;
    }
    cp = (cp << 6) | (cc & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return len;
}

} // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && is_space(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool contains_icase(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) {
    return true;
  }
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != haystack.end();
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  if (s.empty() || s.size() > 18) {
    return std::nullopt;
  }
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    v = v * 10 + (c - '0');
  }
  return v;
}

std::string escape_for_terminal(std::string_view s) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\t') {
      out += "\\t";
      ++i;
      continue;
    }
    if (c == 0x1B) {
      out += "\\e";
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const auto len = utf8_sequence_length(s, i);
      if (len > 1) {
        // C1 controls (U+0080..U+009F) are two-byte sequences C2 80..C2 9F:
        // terminals honour some of them (CSI = U+009B), so escape those too.
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        if (!(c == 0xC2 && c1 >= 0x80 && c1 <= 0x9F)) {
          out.append(s.substr(i, len));
          i += len;
          continue;
        }
      }
    }
    out += "\\x";
    out += k_hex[c >> 4];
    out += k_hex[c & 0xF];
    ++i;
  }
  return out;
}

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto len = utf8_sequence_length(s, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string_view clip(std::string_view s, std::size_t max) {
  if (s.size() <= max) {
    return s;
  }
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return s.substr(0, cut);
}

std::string message_template(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '0' && i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
      std::size_t j = i + 2;
      while (j < s.size() && std::isxdigit(static_cast<unsigned char>(s[j]))) {
        ++j;
      }
      out += "0x#";
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) {
        ++j;
      }
      out += '#';
      i = j;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::size_t display_columns(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string wrap(std::string_view text, std::size_t width, std::string_view indent, std::string_view hang) {
  std::string out;
  std::string line(indent);
  std::size_t used = display_columns(indent);
  std::istringstream words{std::string(text)};
  std::string w;
  bool empty = true;
  while (words >> w) {
    const auto cols = display_columns(w);
    if (!empty && used + 1 + cols > width) {
      out += line + "\n";
      line = std::string(indent) + std::string(hang);
      used = display_columns(line);
      empty = true;
    }
    if (!empty) {
      line += ' ';
      ++used;
    }
    line += w;
    used += cols;
    empty = false;
  }
  if (!empty) {
    out += line + "\n";
  }
  return out;
}

// GCC/Clang vector extensions compile to SSE2/NEON without intrinsics; on
// x86-64 a second copy for AVX2 is chosen at load time (target_clones), which
// halves the work per byte. Every chunk is counted once for its line numbers,
// and again up to each hit.
using Bytes32 = unsigned char __attribute__((vector_size(32)));

#if defined(__x86_64__) && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
#define DENPEX_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DENPEX_TARGET_CLONES
#endif

DENPEX_TARGET_CLONES std::uint64_t count_newlines(std::string_view text) {
  const char* p = text.data();
  const std::size_t n = text.size();
  std::uint64_t count = 0;
  std::size_t i = 0;
  const Bytes32 newline = Bytes32{} + static_cast<unsigned char>('\n');
  while (n - i >= 32) {
    // Per-byte counters, summed before any of them can wrap (255 rounds).
    Bytes32 acc{};
    const std::size_t rounds = std::min<std::size_t>((n - i) / 32, 255);
    for (std::size_t r = 0; r < rounds; ++r, i += 32) {
      Bytes32 v;
      std::memcpy(&v, p + i, sizeof v);
      acc -= reinterpret_cast<Bytes32>(v == newline); // a match is 0xff, i.e. -1
    }
    for (int k = 0; k < 32; ++k) {
      count += acc[k];
    }
  }
  for (; i < n; ++i) {
    count += p[i] == '\n' ? 1 : 0;
  }
  return count;
}

} // namespace denpex::util
