// The RE2 -> Hyperscan byte-mode translation (matcher/prefilter.hpp): pure
// text, so it is tested on every build, with or without libhs.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include <denpex/matcher/prefilter.hpp>

using denpex::matcher::hyperscan_expression;

TEST_CASE("prefilter: translation keeps RE2's code-point semantics in byte mode", "[prefilter]") {
  // Atom, and what Hyperscan gets for it.
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"Xid 79", "Xid 79"},                                   // literals as they are
      {"a.b", "a(?:.|[\\x80-\\xff]{2,4})b"},                  // `.` is one code point: up to 4 bytes
      {"a.*b", "a.*b"},                                       // unbounded: byte repetition covers it
      {"a.+?b", "a.+?b"},                                     //
      {"a.{0,80}b", "a(?:.|[\\x80-\\xff]{2,4}){0,80}b"},      // bounded: widened
      {"a.{3,}b", "a.{3,}b"},                                 // unbounded above
      {"'[^']'", "'(?:[^']|[\\x80-\\xff]{2,4})'"},            // negated class
      {"'[^']*'", "'[^']*'"},                                 //
      {"x\\sy", "x[\\t\\f\\r ]y"},                           // RE2's \s has no \v; no \n: matches are within a line
      {"x\\S?y", "x(?:[^\\t\\n\\f\\r ]|[\\x80-\\xff]{2,4})?y"}, //
      {"x\\W{2}y", "x(?:\\W|[\\x80-\\xff]{2,4}){2}y"},        //
      {"[\\s,]", "[\\t\\f\\r ,]"},                           // \s inside a class
      {"[^\\s,]", "(?:[^\\t\\n\\f\\r ,]|[\\x80-\\xff]{2,4})"},      // a negated one still never takes \n
      {"a\\d+.*bcd\\s*[1-9]", "bcd[\\t\\f\\r ]*[1-9]"},             // after the last gap (a literal of 3 bytes there)
      {"abc.*d[0-9]", "abc.*d[0-9]"},                          // no such literal after it: whole
      {"(?i)abc.*defg", "(?i)abc.*defg"},                      // a flag before the gap: whole
      {"[[:^alpha:]]z", "(?:[[:^alpha:]]|[\\x80-\\xff]{2,4})z"},
      {"don’t", "don’t"},                                     // a code point outside a class: its bytes
      {"\\x41B", "\\x41B"},                                   // ASCII escapes pass
      {"(?i)nccl warn", "(?i)nccl warn"},                     // flags stay
      {"[]a]x", "[]a]x"},                                     // ']' first is a member
      // Leading parts that cannot decide a match are left out.
      {"(?:(?P<host>[\\w.-]+):(?P<pid>\\d+) .*)?NCCL WARN x", "NCCL WARN x"},
      {".*?Xid", "Xid"},
      {"NCCL INFO NVLS comm 0x", "NVLS comm 0x"},
      {"NCCL INFO comm 0x[0-9a-fA-F]+ rank (?P<r>\\d+)", "rank (?P<r>\\d+)"},
      {"NCCL INFO {2}x", "NCCL INFO {2}x"}, // the quantifier belongs to the prefix's space
      {"NCCL INFO ", "NCCL INFO "},         // never down to nothing
      {"(?:a)?", "(?:a)?"},                 //
      {"(a)?b|c", "b|c"},                   // still a superset: b or c
      {"(?P<pci>[0-9a-f]{4}): AER", "(?P<pci>[0-9a-f]{4}): AER"}, // required group stays
      {"(?i)(?:a)?b", "(?i)(?:a)?b"},                              // flags first: left as is
  };
  for (const auto& [re2, hs] : rows) {
    INFO(re2);
    const auto got = hyperscan_expression(re2);
    REQUIRE(got);
    CHECK(*got == hs);
  }
  // No byte-mode equivalent: these stay with RE2.
  for (const std::string re2 : {"don[’']t", "\\pL+", "\\p{Greek}", "a\\Cb", "\\Qa.b\\E", "\\xe9", "\\x{263a}",
                                "[\\S,]", "[\\x{100}]", "[abc"}) {
    INFO(re2);
    CHECK_FALSE(hyperscan_expression(re2));
  }
}


TEST_CASE("prefilter: never_matches_empty says yes only where a piece must take a character", "[prefilter]") {
  using denpex::matcher::never_matches_empty;
  // True: some top-level piece consumes a character and is not optional.
  for (const char* p : {"(?m)NCCL INFO comm 0x[0-9a-f]+", "\\d+ coll channels", "(?:a|b)?x", "[ab]", "\\.", ".",
                        "a{2}", "(?i)oom", "a{2,}", "a{1,3}b?", "x{y}"}) {
    CAPTURE(p);
    CHECK(never_matches_empty(p));
  }
  // False: every piece optional, an assertion, a group (not read), a top-level `|`.
  // "x{|}?" is not a repetition: RE2 reads `x{` | `}?`, and `}?` matches empty.
  for (const char* p : {"", "a?", "a*", "a{0,3}", "^$", "\\b", "(?:abc)", "abc|d?", "(?m)^", "x?\\by*", "\\pL", "x{|}?",
                        "a{00}"}) {
    CAPTURE(p);
    CHECK_FALSE(never_matches_empty(p));
  }
}

TEST_CASE("prefilter: literal_prefix is what every match starts with", "[prefilter]") {
  using denpex::matcher::literal_prefix;
  CHECK(literal_prefix("(?m)NCCL INFO comm 0x[0-9a-f]+") == "NCCL INFO comm 0x");
  CHECK(literal_prefix("RuntimeError: CUDA error: (?P<m>.*)") == "RuntimeError: CUDA error: ");
  CHECK(literal_prefix("transport/nvls\\.cc:\\d+") == "transport/nvls.cc:");
  CHECK(literal_prefix("abc?d") == "ab");   // `c?` may be absent
  CHECK(literal_prefix("ab+c") == "ab");    // `b+` starts with b
  CHECK(literal_prefix("ab{2}c") == "a");   // not followed further
  CHECK(literal_prefix("abc|abd").empty()); // top-level alternation
  CHECK(literal_prefix("(?i)oom").empty()); // case folded
  CHECK(literal_prefix("x(?i:y)").empty());
  CHECK(literal_prefix("don’t").empty() == false);
  CHECK(literal_prefix("don’t") == "don"); // stops at a non-ASCII byte
  CHECK(literal_prefix("^abc").empty());    // an assertion first
  CHECK(literal_prefix("[Ee]rror").empty());
}
