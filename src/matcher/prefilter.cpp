#include <denpex/matcher/prefilter.hpp>

#include "prefilter_impl.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#ifdef DENPEX_HAVE_HYPERSCAN
#include <hs.h>
#include <sys/mman.h>
#endif

namespace denpex::matcher {

namespace {

bool is_ascii(unsigned char c) { return c < 0x80; }

// RE2's \s, spelled out: Hyperscan's \s also takes \v, so its \S would miss
// a \v that RE2's \S matches.
constexpr std::string_view k_space = "\\t\\n\\f\\r ";
// ... less the newline, where \s takes part in a match: the matcher accepts
// only matches within one line (Impl::find_all), so a prefilter expression
// need not follow one across a newline, and one that may (`count:\s*[1-9]`)
// keeps an automaton running into the next line, on every line.
constexpr std::string_view k_space_in_line = "\\t\\f\\r ";

// Scans one character class starting at p[i] == '['. Appends its Hyperscan
// form to `out`, sets `wide` if it can match a non-ASCII code point in RE2,
// and returns the index just past it, or npos if it cannot be translated.
std::size_t translate_class(std::string_view p, std::size_t i, std::string& out, bool& wide) {
  out += '[';
  ++i;
  bool negated = false;
  if (i < p.size() && p[i] == '^') {
    wide = true;
    negated = true;
    out += '^';
    ++i;
  }
  bool first = true;
  while (i < p.size()) {
    const char c = p[i];
    if (c == ']' && !first) {
      out += ']';
      return i + 1;
    }
    first = false;
    if (!is_ascii(static_cast<unsigned char>(c))) {
      return std::string_view::npos; // a code point in a class: not one byte
    }
    if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
      const auto close = p.find(":]", i + 2);
      if (close == std::string_view::npos) {
        return std::string_view::npos;
      }
      if (p[i + 2] == '^') {
        wide = true; // [[:^alpha:]] takes every non-ASCII code point
      }
      out.append(p.substr(i, close + 2 - i));
      i = close + 2;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= p.size()) {
        return std::string_view::npos;
      }
      const char e = p[i + 1];
      if (e == 's') {
        out += negated ? k_space : k_space_in_line; // [^\s] still never takes a newline
      } else if (e == 'S' || e == 'W' || e == 'D') {
        // [\S...]: no byte-mode spelling that keeps RE2's \S exactly.
        return std::string_view::npos;
      } else if (e == 'p' || e == 'P' || e == 'x' || e == 'Q' || e == 'C') {
        return std::string_view::npos;
      } else {
        out += c;
        out += e;
      }
      i += 2;
      continue;
    }
    out += c;
    ++i;
  }
  return std::string_view::npos; // unterminated
}

// True if the quantifier at p[i] lets the atom before it repeat without an
// upper bound (*, +, {n,}): then byte-wise repetition covers any code point.
bool unbounded_repeat(std::string_view p, std::size_t i) {
  if (i >= p.size()) {
    return false;
  }
  if (p[i] == '*' || p[i] == '+') {
    return true;
  }
  if (p[i] == '{') {
    const auto close = p.find('}', i);
    return close != std::string_view::npos && close > i + 1 && p[close - 1] == ',';
  }
  return false;
}

// Index of the ')' closing the group that opens at p[0], or npos.
std::size_t group_end(std::string_view p) {
  int depth = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
    } else if (c == '[') {
      // Skip the class: a ']' right after '[' or '[^' is a member.
      i += (i + 1 < p.size() && p[i + 1] == '^') ? 2 : 1;
      if (i < p.size() && p[i] == ']') {
        ++i;
      }
      while (i < p.size() && p[i] != ']') {
        i += p[i] == '\\' ? 2 : 1;
      }
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

// Pattern beginnings (as written in RE2 syntax) that match on nearly every
// line of a healthy log at the debug level people run with (NCCL_DEBUG=INFO:
// every line says "NCCL INFO", every collective names its "comm 0x..."). As
// a pattern's first literal they make Hyperscan confirm a candidate on every
// line; the rest of the pattern is rarer, and required all the same.
// Measured on the benchmark log: 40% and 30% of the scan time.
constexpr std::string_view k_common_prefixes[] = {"NCCL INFO ", "comm 0x[0-9a-fA-F]+ "};

std::size_t atom_end(std::string_view p, std::size_t i);
std::size_t quantifier_end(std::string_view p, std::size_t i);
char literal_byte(std::string_view atom);

// The part of `p` after its last top-level unbounded gap (`.*`, `.+`,
// `.{n,}`), when that part still holds a literal of 3 bytes or more; else
// `p`. A line the pattern matches also matches that part, so it is a
// prefilter for the whole; and it ends where the whole match ends. The parts
// before the gap made Hyperscan run an automaton across the line wherever
// they matched: Megatron-LM's per-iteration line starts the pattern
// `\biteration\s+\d+\s*/\s*\d+\s*\|.*\|\s*loss scale: 1 ... grad norm: nan`,
// which made it 45% of the scan of a Megatron log (issue 35).
std::string_view after_last_gap(std::string_view p) {
  std::size_t cut = 0;
  for (std::size_t i = 0; i < p.size();) {
    const auto a = atom_end(p, i);
    if (a == std::string_view::npos) {
      return p; // a top-level `|` (or an escape this reading does not follow)
    }
    const auto q = quantifier_end(p, a);
    if (p.substr(i, a - i) == "." && unbounded_repeat(p, a)) {
      cut = q;
    }
    i = q;
  }
  if (cut == 0 || cut >= p.size()) {
    return p;
  }
  // Inline flags set before the gap ("(?i)") would be lost with it.
  const auto before = p.substr(0, cut);
  for (std::size_t at = before.find("(?"); at != std::string_view::npos; at = before.find("(?", at + 2)) {
    if (at + 2 < before.size() && before[at + 2] != ':' && before[at + 2] != 'P') {
      return p;
    }
  }
  const auto rest = p.substr(cut);
  std::size_t run = 0;
  for (std::size_t i = 0; i < rest.size() && run < 3;) {
    const auto a = atom_end(rest, i);
    if (a == std::string_view::npos) {
      return p;
    }
    const auto q = quantifier_end(rest, a);
    run = (literal_byte(rest.substr(i, a - i)) != 0 && q == a) ? run + 1 : 0;
    i = q;
  }
  return run >= 3 ? rest : p;
}

// Leaves out what cannot decide whether a line matches: a leading optional
// group ("(?:host:pid:tid [gpu] .*)?NCCL WARN ...") or `.*`, a leading
// common literal, and everything before the last `.*` (after_last_gap).
// Every line the pattern matches still matches the rest (RE2 confirms the
// whole pattern afterwards); far fewer lines reach it, and with less work.
std::string_view prefilter_core(std::string_view p) {
  p = after_last_gap(p);
  for (;;) {
    std::string_view rest = p;
    if (!p.empty() && p[0] == '(' && p.substr(0, 3) != "(?i" && p.substr(0, 3) != "(?s" &&
        p.substr(0, 3) != "(?m" && p.substr(0, 3) != "(?U") {
      const auto close = group_end(p);
      if (close != std::string_view::npos && close + 1 < p.size() && (p[close + 1] == '?' || p[close + 1] == '*')) {
        rest = p.substr(close + 2);
      }
    } else if (p.substr(0, 2) == ".*") {
      rest = p.substr(2);
    } else {
      for (const auto prefix : k_common_prefixes) {
        // Not when a quantifier follows: "NCCL INFO {2}x" repeats the space.
        if (p.size() > prefix.size() && p.substr(0, prefix.size()) == prefix &&
            std::string_view("?*+{").find(p[prefix.size()]) == std::string_view::npos) {
          rest = p.substr(prefix.size());
        }
      }
      if (rest.size() != p.size()) {
        p = rest;
        continue;
      }
    }
    if (!rest.empty() && rest[0] == '?' && rest.size() < p.size()) {
      rest.remove_prefix(1); // the lazy form, `(...)??` or `.*?`
    }
    if (rest.size() == p.size() || rest.empty()) {
      return p;
    }
    p = rest;
  }
}

// Index just past the atom at p[i] (an escape, class, group or character),
// or npos where this reading does not follow the pattern (a top-level `|`,
// an escape that takes arguments).
std::size_t atom_end(std::string_view p, std::size_t i) {
  const char c = p[i];
  if (c == '\\') {
    if (i + 1 >= p.size() || std::string_view("pPQExC").find(p[i + 1]) != std::string_view::npos) {
      return std::string_view::npos;
    }
    return i + 2;
  }
  if (c == '[') {
    std::string ignored;
    bool wide = false;
    return translate_class(p, i, ignored, wide);
  }
  if (c == '(') {
    const auto close = group_end(p.substr(i));
    return close == std::string_view::npos ? close : i + close + 1;
  }
  if (c == '|' || c == ')') {
    return std::string_view::npos;
  }
  return i + 1;
}

// Index just past a repetition `{n}`, `{n,}` or `{n,m}` at p[i], or i: RE2
// reads any other `{` as a literal.
std::size_t repetition_end(std::string_view p, std::size_t i) {
  std::size_t j = i + 1;
  const auto digits = [&] {
    const std::size_t from = j;
    while (j < p.size() && p[j] >= '0' && p[j] <= '9') {
      ++j;
    }
    return j > from;
  };
  if (!digits()) {
    return i;
  }
  if (j < p.size() && p[j] == ',') {
    ++j;
    digits();
  }
  return (j < p.size() && p[j] == '}') ? j + 1 : i;
}

// Index just past the quantifier at p[i] (with its lazy `?`), or i.
std::size_t quantifier_end(std::string_view p, std::size_t i) {
  std::size_t j = i;
  if (j < p.size() && (p[j] == '*' || p[j] == '+' || p[j] == '?')) {
    ++j;
  } else if (j < p.size() && p[j] == '{' && repetition_end(p, j) > j) {
    j = repetition_end(p, j);
  } else {
    return i;
  }
  return (j < p.size() && p[j] == '?') ? j + 1 : j;
}

// The byte an atom stands for when it is one literal ASCII character (or
// escaped punctuation), else 0.
char literal_byte(std::string_view atom) {
  char c = 0;
  if (atom.size() == 1 && std::string_view(".^$|?*+()[]{}\\").find(atom[0]) == std::string_view::npos) {
    c = atom[0];
  } else if (atom.size() == 2 && atom[0] == '\\' && std::string_view(".^$|?*+()[]{}\\/-:#'\" ").find(atom[1]) != std::string_view::npos) {
    c = atom[1];
  }
  return is_ascii(static_cast<unsigned char>(c)) ? c : 0;
}

} // namespace

bool never_matches_empty(std::string_view p) {
  bool consumes = false;
  for (std::size_t i = 0; i < p.size();) {
    const auto a = atom_end(p, i);
    if (a == std::string_view::npos) {
      return false;
    }
    const auto q = quantifier_end(p, a);
    const std::string_view atom = p.substr(i, a - i);
    const std::string_view quantifier = p.substr(a, q - a);
    const bool one_char = atom[0] == '[' || (atom[0] == '\\' && std::string_view("bBAz").find(atom[1]) == std::string_view::npos) ||
                          (atom[0] != '(' && atom[0] != '\\' && atom != "^" && atom != "$");
    const bool required = quantifier.empty() || quantifier[0] == '+' || (quantifier[0] == '{' && quantifier[1] != '0');
    consumes = consumes || (one_char && required);
    i = q;
  }
  return consumes;
}

std::string literal_prefix(std::string_view p) {
  if (p.find("(?i") != std::string_view::npos) {
    return {}; // case folded somewhere: a byte comparison could miss
  }
  std::string out;
  bool open = true; // still reading the leading literal
  // The walk goes on past the prefix: a top-level `|` anywhere voids it.
  for (std::size_t i = 0; i < p.size();) {
    const auto a = atom_end(p, i);
    if (a == std::string_view::npos) {
      return {}; // a top-level `|` (or an escape this reading does not follow)
    }
    const auto q = quantifier_end(p, a);
    const std::string_view atom = p.substr(i, a - i);
    const bool flags = atom.size() > 3 && atom.substr(0, 2) == "(?" && atom.find(':') == std::string_view::npos &&
                       atom.find_first_of("<P'=!") == std::string_view::npos;
    if (open && !flags) {
      const char c = literal_byte(atom);
      if (c != 0 && (q == a || p[a] == '+')) {
        out += c; // a required byte; `x+` still starts with x
      }
      open = c != 0 && q == a;
    }
    i = q;
  }
  return out;
}

std::optional<std::string> prefilter_expression(std::string_view re2_pattern, bool presence) {
  auto e = hyperscan_expression(re2_pattern);
  if (e && presence) {
    e->insert(0, k_presence_mark);
  }
  return e;
}

std::optional<std::string> hyperscan_expression(std::string_view p) {
  p = prefilter_core(p);
  std::string out;
  out.reserve(p.size() + 16);
  std::size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    std::string atom;
    bool wide = false; // the atom can match a multi-byte code point
    if (c == '\\') {
      if (i + 1 >= p.size()) {
        return std::nullopt;
      }
      const char e = p[i + 1];
      switch (e) {
      case 'p':
      case 'P':
      case 'C':
      case 'Q':
      case 'E':
      case 'X':
        return std::nullopt;
      case 's':
        atom = "[" + std::string(k_space_in_line) + "]";
        break;
      case 'S':
        atom = "[^" + std::string(k_space) + "]";
        wide = true;
        break;
      case 'W':
      case 'D':
        atom = {c, e};
        wide = true;
        break;
      case 'x': {
        // \xHH or \x{H...}: above 0x7f RE2 means a code point, not a byte.
        std::size_t end = i + 2;
        std::string digits;
        if (end < p.size() && p[end] == '{') {
          const auto close = p.find('}', end);
          if (close == std::string_view::npos) {
            return std::nullopt;
          }
          digits = std::string(p.substr(end + 1, close - end - 1));
          end = close + 1;
        } else {
          digits = std::string(p.substr(end, 2));
          end += 2;
        }
        if (digits.empty() || digits.size() > 6 ||
            digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos ||
            std::stoul(digits, nullptr, 16) > 0x7f) {
          return std::nullopt;
        }
        atom = std::string(p.substr(i, end - i));
        i = end;
        break;
      }
      default:
        atom = {c, e};
        break;
      }
      if (e != 'x') {
        i += 2;
      }
    } else if (c == '[') {
      const auto next = translate_class(p, i, atom, wide);
      if (next == std::string_view::npos) {
        return std::nullopt;
      }
      i = next;
    } else if (c == '.') {
      atom = ".";
      wide = true;
      ++i;
    } else {
      out += c; // literals (non-ASCII bytes match as bytes), groups, anchors
      ++i;
      continue;
    }
    if (wide && !unbounded_repeat(p, i)) {
      out += "(?:" + atom + "|[\\x80-\\xff]{2,4})";
    } else {
      out += atom;
    }
  }
  return out;
}

#ifndef DENPEX_HAVE_HYPERSCAN

bool prefilter_available() { return false; }

Expected<std::string> build_prefilter_blob(const std::vector<std::string>&) {
  return make_error(ErrorKind::usage, "prefilter", "this build has no Hyperscan");
}

namespace detail {
struct Prefilter::Database {};
struct Prefilter::Scratch {};
Prefilter::Prefilter() = default;
Prefilter::~Prefilter() = default;
std::unique_ptr<Prefilter> Prefilter::build(const std::vector<std::optional<std::string>>& expressions,
                                            std::string_view, std::vector<std::uint32_t>& unfiltered) {
  for (std::size_t k = 0; k < expressions.size(); ++k) {
    unfiltered.push_back(static_cast<std::uint32_t>(k));
  }
  return nullptr;
}
bool Prefilter::scan(std::string_view, std::size_t, std::vector<Line>&, std::vector<int>&, bool) const { return false; }
std::string Prefilter::describe() const { return "no prefilter"; }
} // namespace detail

#else

namespace {

// Not HS_FLAG_SINGLEMATCH (but for presence signals, k_presence_mark): every
// match's end offset is reported, so that the matcher confirms the lines that
// may match, not the whole chunk.
constexpr unsigned k_flags = HS_FLAG_PREFILTER | HS_FLAG_MULTILINE | HS_FLAG_ALLOWEMPTY;
constexpr std::string_view k_magic = "denpex-hs-blob-4";

struct HsDatabaseDeleter {
  std::size_t mapped = 0; // non-zero: deserialize_populated mapped this many bytes
  void operator()(hs_database_t* db) const {
    if (mapped != 0) {
      ::munmap(db, mapped);
    } else {
      hs_free_database(db);
    }
  }
};
using DatabasePtr = std::unique_ptr<hs_database_t, HsDatabaseDeleter>;

// The prebuilt database, deserialized into memory that one mmap call maps
// and populates. Hyperscan writes every byte of it anyway (it zeroes the
// block, then copies the bytecode in), so populating first only replaces a
// page fault per 4 KiB (about 290 for the built-in database) by one call:
// on a virtual machine that charges 10 us or more a fault, that is most of
// the matcher's start-up.
DatabasePtr deserialize_populated(std::string_view bytes) {
  std::size_t size = 0;
  if (hs_serialized_database_size(bytes.data(), bytes.size(), &size) != HS_SUCCESS || size == 0) {
    return nullptr;
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) {
    hs_database_t* db = nullptr;
    return hs_deserialize_database(bytes.data(), bytes.size(), &db) == HS_SUCCESS ? DatabasePtr(db) : nullptr;
  }
  auto* db = static_cast<hs_database_t*>(p);
  if (hs_deserialize_database_at(bytes.data(), bytes.size(), db) != HS_SUCCESS) {
    ::munmap(p, size);
    return nullptr;
  }
  return DatabasePtr(db, HsDatabaseDeleter{size});
}

// Whether a prefilter expression is a presence signal's (k_presence_mark).
bool is_presence(std::string_view expression) {
  return expression.substr(0, k_presence_mark.size()) == k_presence_mark;
}

struct CompileResult {
  DatabasePtr db;
  std::vector<std::size_t> ids; // Hyperscan id k is input expression ids[k]
};

// Compiles what Hyperscan accepts: an expression it rejects is dropped and
// the rest compiled again (each rejection names its expression).
CompileResult compile(const std::vector<std::string_view>& expressions, const hs_platform_info_t* platform) {
  CompileResult r;
  std::vector<std::string> owned(expressions.begin(), expressions.end()); // NUL-terminated
  for (std::size_t k = 0; k < owned.size(); ++k) {
    r.ids.push_back(k);
  }
  while (!r.ids.empty()) {
    std::vector<const char*> ptrs;
    std::vector<unsigned> flags(r.ids.size(), k_flags);
    std::vector<unsigned> hs_ids;
    for (std::size_t k = 0; k < r.ids.size(); ++k) {
      const std::string& e = owned[r.ids[k]];
      const bool presence = is_presence(e);
      ptrs.push_back(e.c_str() + (presence ? k_presence_mark.size() : 0));
      flags[k] |= presence ? HS_FLAG_SINGLEMATCH : 0u;
      hs_ids.push_back(static_cast<unsigned>(k));
    }
    hs_database_t* db = nullptr;
    hs_compile_error_t* err = nullptr;
    const auto rc = hs_compile_multi(ptrs.data(), flags.data(), hs_ids.data(), static_cast<unsigned>(ptrs.size()),
                                     HS_MODE_BLOCK, platform, &db, &err);
    if (rc == HS_SUCCESS) {
      r.db.reset(db);
      return r;
    }
    const int bad = err != nullptr ? err->expression : -1;
    hs_free_compile_error(err);
    if (bad < 0 || static_cast<std::size_t>(bad) >= r.ids.size()) {
      r.ids.clear(); // not one expression's fault: give up on Hyperscan
      break;
    }
    r.ids.erase(r.ids.begin() + bad);
  }
  return r;
}

// The baseline x86-64 target Hyperscan supports (SSSE3, generic tuning).
hs_platform_info_t baseline_platform() {
  hs_platform_info_t p{};
  p.tune = HS_TUNE_FAMILY_GENERIC;
  p.cpu_features = 0;
  return p;
}

void put_u64(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

bool get_u64(std::string_view& in, std::uint64_t& v) {
  if (in.size() < sizeof v) {
    return false;
  }
  std::memcpy(&v, in.data(), sizeof v);
  in.remove_prefix(sizeof v);
  return true;
}

// A blob's parts, views into the blob.
struct Blob {
  std::vector<std::string_view> expressions; // in Hyperscan id order
  std::string_view database;                 // hs_serialize_database() output
};

// The blob's sections: the database of the presence signals' expressions
// and the database of the others (build_prefilter_blob), or nullopt.
std::optional<std::vector<Blob>> parse_blob(std::string_view in) {
  if (in.substr(0, k_magic.size()) != k_magic) {
    return std::nullopt;
  }
  in.remove_prefix(k_magic.size());
  std::uint64_t sections = 0;
  if (!get_u64(in, sections) || sections > 16) {
    return std::nullopt;
  }
  std::vector<Blob> out(sections);
  for (auto& b : out) {
    std::uint64_t n = 0;
    if (!get_u64(in, n) || n > in.size()) {
      return std::nullopt;
    }
    for (std::uint64_t k = 0; k < n; ++k) {
      std::uint64_t len = 0;
      if (!get_u64(in, len) || len > in.size()) {
        return std::nullopt;
      }
      b.expressions.push_back(in.substr(0, len));
      in.remove_prefix(len);
    }
    std::uint64_t size = 0;
    if (!get_u64(in, size) || size > in.size()) {
      return std::nullopt;
    }
    b.database = in.substr(0, size);
    in.remove_prefix(size);
  }
  if (!in.empty()) {
    return std::nullopt;
  }
  return out;
}

// One Hyperscan id's lines in the scan in progress.
struct IdState {
  std::uint32_t begin = 0; // the last line reported for this id: [begin, end)
  std::uint32_t end = 0;
  std::uint32_t lines = 0;
  std::uint32_t index = 0; // that line's place in ScanContext::lines
  bool seen = false;
  bool whole = false; // too many lines: searched over the whole chunk
};

// A candidate line before its id is mapped to patterns.
struct IdLine {
  std::uint32_t begin;
  std::uint32_t end;
  std::uint32_t id;
  std::uint32_t last_end; // the last report on the line
};

struct ScanContext {
  std::string_view text;
  std::size_t max_lines;
  std::vector<IdState>* state; // per Hyperscan id
  std::vector<IdLine>* lines;
  // The line of the previous report, whatever its id: several patterns
  // matching one line need its bounds found once.
  std::size_t last_begin = 0;
  std::size_t last_end = 0;
  bool have_last = false;
};

// Hyperscan reports where a match of the (relaxed) expression ends, at every
// end offset. A line-local RE2 match text[b, e) of the pattern is also a
// match of its expression, reported at e: so the line holding byte e - 1
// (or, for an empty match, the line starting at e) is the only line to
// confirm. Several reports on one line (`.*` ends anywhere) are one line.
int on_match(unsigned int id, unsigned long long, unsigned long long to_, unsigned int, void* ctx) {
  auto& c = *static_cast<ScanContext*>(ctx);
  auto& st = (*c.state)[id];
  if (st.whole) {
    return 0;
  }
  const char* text = c.text.data();
  const auto to = static_cast<std::size_t>(to_);
  std::size_t begin = 0;
  std::size_t end = 0;
  bool known = false; // [begin, end) is the previous report's line
  if (to == 0 || text[to - 1] == '\n') {
    if (to >= c.text.size() || (st.seen && st.begin == to)) {
      return 0; // an empty match at the very end, or a line already named (ends at its start)
    }
    begin = to;
  } else {
    const std::size_t q = to - 1;
    if (st.seen && q >= st.begin && q < st.end) {
      (*c.lines)[st.index].last_end = static_cast<std::uint32_t>(to);
      return 0;
    }
    if (c.have_last && q >= c.last_begin && q < c.last_end) {
      begin = c.last_begin;
      end = c.last_end;
      known = true;
    } else {
      const void* nl = ::memrchr(text, '\n', q);
      begin = nl == nullptr ? 0 : static_cast<std::size_t>(static_cast<const char*>(nl) - text) + 1;
    }
  }
  if (!known) {
    const void* nl = std::memchr(text + begin, '\n', c.text.size() - begin);
    end = nl == nullptr ? c.text.size() : static_cast<std::size_t>(static_cast<const char*>(nl) - text);
    c.have_last = true;
    c.last_begin = begin;
    c.last_end = end;
  }
  st.seen = true;
  st.begin = static_cast<std::uint32_t>(begin);
  st.end = static_cast<std::uint32_t>(end);
  if (++st.lines > c.max_lines) {
    st.whole = true;
    return 0;
  }
  st.index = static_cast<std::uint32_t>(c.lines->size());
  c.lines->push_back(IdLine{st.begin, st.end, id, static_cast<std::uint32_t>(to)});
  return 0;
}

} // namespace

bool prefilter_available() { return hs_valid_platform() == HS_SUCCESS; }

// Presence signals get a database of their own (Prefilter::scan skips it
// for a source that has found them all): each section is the expressions
// of one group, in Hyperscan id order, and its serialized database.
Expected<std::string> build_prefilter_blob(const std::vector<std::string>& expressions) {
  if (!prefilter_available()) {
    return make_error(ErrorKind::usage, "prefilter", "Hyperscan does not run on this CPU");
  }
  std::vector<std::string_view> groups[2]; // [0] the others, [1] presence signals
  for (const auto& e : expressions) {
    groups[is_presence(e) ? 1 : 0].push_back(e);
  }
  std::string out(k_magic);
  put_u64(out, (groups[0].empty() ? 0 : 1) + (groups[1].empty() ? 0 : 1));
  const auto platform = baseline_platform();
  for (const auto& group : groups) {
    if (group.empty()) {
      continue;
    }
    auto r = compile(group, &platform);
    if (!r.db) {
      return make_error(ErrorKind::invalid, "prefilter", "Hyperscan compiled none of the patterns");
    }
    char* bytes = nullptr;
    std::size_t size = 0;
    if (hs_serialize_database(r.db.get(), &bytes, &size) != HS_SUCCESS) {
      return make_error(ErrorKind::invalid, "prefilter", "hs_serialize_database failed");
    }
    put_u64(out, r.ids.size());
    for (const auto id : r.ids) {
      put_u64(out, group[id].size());
      out += group[id];
    }
    put_u64(out, size);
    out.append(bytes, size);
    std::free(bytes); // NOLINT: hs_serialize_database allocates with malloc
  }
  return out;
}

namespace detail {

struct Prefilter::Database {
  DatabasePtr db;
  bool presence_only = false; // every expression a presence signal's: skipped once a source has them
  // Hyperscan id k reports patterns[offsets[k] .. offsets[k+1]).
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> patterns;
};

struct Prefilter::Scratch {
  hs_scratch_t* space = nullptr;
  ~Scratch() {
    if (space != nullptr) {
      hs_free_scratch(space);
    }
  }
};

Prefilter::Prefilter() = default;
Prefilter::~Prefilter() = default;

std::unique_ptr<Prefilter::Scratch> Prefilter::take_scratch() const {
  {
    const std::lock_guard<std::mutex> lock(m_pool_mutex);
    if (!m_pool.empty()) {
      auto s = std::move(m_pool.back());
      m_pool.pop_back();
      return s;
    }
  }
  auto s = std::make_unique<Scratch>();
  if (hs_clone_scratch(m_prototype->space, &s->space) != HS_SUCCESS) {
    return nullptr;
  }
  return s;
}

void Prefilter::give_back(std::unique_ptr<Scratch> s) const {
  const std::lock_guard<std::mutex> lock(m_pool_mutex);
  m_pool.push_back(std::move(s));
}

std::unique_ptr<Prefilter> Prefilter::build(const std::vector<std::optional<std::string>>& expressions,
                                            std::string_view blob, std::vector<std::uint32_t>& unfiltered) {
  auto all_unfiltered = [&] {
    for (std::size_t k = 0; k < expressions.size(); ++k) {
      unfiltered.push_back(static_cast<std::uint32_t>(k));
    }
    return nullptr;
  };
  if (!prefilter_available()) {
    return all_unfiltered();
  }
  std::unique_ptr<Prefilter> pf(new Prefilter());
  std::vector<bool> covered(expressions.size(), false);

  // 1. The prebuilt databases, for the expressions they hold.
  for (const auto& b : parse_blob(blob).value_or(std::vector<Blob>{})) {
    if (auto db = deserialize_populated(b.database)) {
      auto d = std::make_unique<Database>();
      d->db = std::move(db);
      d->presence_only = std::all_of(b.expressions.begin(), b.expressions.end(), is_presence);
      std::unordered_map<std::string_view, std::uint32_t> id_of;
      for (std::size_t k = 0; k < b.expressions.size(); ++k) {
        id_of.emplace(b.expressions[k], static_cast<std::uint32_t>(k));
      }
      std::vector<std::vector<std::uint32_t>> per_id(b.expressions.size());
      for (std::size_t k = 0; k < expressions.size(); ++k) {
        if (!expressions[k] || covered[k]) {
          continue;
        }
        const auto it = id_of.find(*expressions[k]);
        if (it != id_of.end()) {
          per_id[it->second].push_back(static_cast<std::uint32_t>(k));
          covered[k] = true;
          ++pf->m_prebuilt;
        }
      }
      d->offsets.push_back(0);
      for (const auto& ps : per_id) {
        d->patterns.insert(d->patterns.end(), ps.begin(), ps.end());
        d->offsets.push_back(static_cast<std::uint32_t>(d->patterns.size()));
      }
      pf->m_dbs.push_back(std::move(d));
    }
  }

  // 2. Everything else Hyperscan can take, compiled now for this CPU.
  std::vector<std::string_view> rest;
  std::vector<std::uint32_t> rest_index;
  for (std::size_t k = 0; k < expressions.size(); ++k) {
    if (covered[k]) {
      continue;
    }
    if (expressions[k]) {
      rest.push_back(*expressions[k]);
      rest_index.push_back(static_cast<std::uint32_t>(k));
    } else {
      unfiltered.push_back(static_cast<std::uint32_t>(k));
    }
  }
  if (!rest.empty()) {
    auto r = compile(rest, nullptr);
    std::vector<bool> taken(rest.size(), false);
    if (r.db) {
      auto d = std::make_unique<Database>();
      d->db = std::move(r.db);
      d->offsets.push_back(0);
      for (const auto id : r.ids) {
        d->patterns.push_back(rest_index[id]);
        d->offsets.push_back(static_cast<std::uint32_t>(d->patterns.size()));
        taken[id] = true;
      }
      pf->m_compiled = r.ids.size();
      pf->m_dbs.push_back(std::move(d));
    }
    for (std::size_t k = 0; k < rest.size(); ++k) {
      if (!taken[k]) {
        unfiltered.push_back(rest_index[k]);
      }
    }
  }
  if (pf->m_dbs.empty()) {
    return nullptr;
  }
  pf->m_prototype = std::make_unique<Scratch>();
  for (const auto& d : pf->m_dbs) {
    if (hs_alloc_scratch(d->db.get(), &pf->m_prototype->space) != HS_SUCCESS) {
      unfiltered.clear();
      return all_unfiltered();
    }
  }
  return pf;
}

bool Prefilter::scan(std::string_view text, std::size_t max_lines, std::vector<Line>& lines, std::vector<int>& whole,
                     bool presence) const {
  if (text.size() >= 0xffffffffu) {
    return false; // hs_scan takes an unsigned length, lines are 32-bit offsets; chunks are far smaller
  }
  auto scratch = take_scratch();
  if (!scratch) {
    return false;
  }
  thread_local std::vector<IdState> state;
  thread_local std::vector<IdLine> id_lines;
  bool ok = true;
  for (const auto& d : m_dbs) {
    if (d->presence_only && !presence) {
      continue;
    }
    const std::size_t ids = d->offsets.size() - 1;
    state.assign(ids, IdState{});
    id_lines.clear();
    ScanContext ctx{text, max_lines, &state, &id_lines};
    if (hs_scan(d->db.get(), text.data(), static_cast<unsigned>(text.size()), 0, scratch->space, on_match, &ctx) !=
        HS_SUCCESS) {
      ok = false;
      break;
    }
    for (const auto& l : id_lines) {
      if (!state[l.id].whole) {
        for (auto k = d->offsets[l.id]; k < d->offsets[l.id + 1]; ++k) {
          lines.push_back(Line{l.begin, l.end, d->patterns[k], l.last_end});
        }
      }
    }
    for (std::size_t id = 0; id < ids; ++id) {
      if (state[id].whole) {
        for (auto k = d->offsets[id]; k < d->offsets[id + 1]; ++k) {
          whole.push_back(static_cast<int>(d->patterns[k]));
        }
      }
    }
  }
  give_back(std::move(scratch));
  return ok;
}

std::string Prefilter::describe() const {
  const std::string_view version = hs_version(); // "5.4.0 2023-..."
  return "hyperscan " + std::string(version.substr(0, version.find(' '))) + ": " +
         std::to_string(m_prebuilt + m_compiled) + " patterns (" + std::to_string(m_prebuilt) + " prebuilt, " +
         std::to_string(m_compiled) + " compiled at start-up)";
}

} // namespace detail

#endif

} // namespace denpex::matcher
