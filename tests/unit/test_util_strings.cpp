// denpex::util's string helpers (include/denpex/util/strings.hpp): every
// function, with the edges log lines bring (empty input, invalid UTF-8,
// multi-byte characters at a cut, control characters, escape sequences).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/util/strings.hpp>

using namespace std::string_literals;
namespace util = denpex::util;

namespace {

// Whether `s` holds only printable text: no C0 control, no DEL.
bool printable(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7F;
  });
}

const std::string k_replacement = "\xEF\xBF\xBD"; // U+FFFD

// Bytes 0 to 255, once each: every control, every invalid UTF-8 byte.
std::string all_bytes() {
  std::string s;
  for (int c = 0; c < 256; ++c) {
    s += static_cast<char>(c);
  }
  return s;
}

} // namespace

TEST_CASE("util::trim: ASCII whitespace at both ends only", "[util][strings]") {
  CHECK(util::trim("") == "");
  CHECK(util::trim(" \t\r\n\f\v") == "");
  CHECK(util::trim("  what():  CUDA error \r\n") == "what():  CUDA error");
  CHECK(util::trim("x") == "x");
  // A no-break space (U+00A0) is not ASCII whitespace: kept.
  CHECK(util::trim("\xC2\xA0x ") == "\xC2\xA0x");
  // A view into the input, not a copy.
  const std::string_view line = "  step 100  ";
  CHECK(util::trim(line).data() == line.data() + 2);
}

TEST_CASE("util::starts_with / ends_with", "[util][strings]") {
  CHECK(util::starts_with("NCCL WARN Cuda failure", "NCCL"));
  CHECK_FALSE(util::starts_with("NCC", "NCCL"));
  CHECK(util::starts_with("anything", ""));
  CHECK(util::starts_with("", ""));
  CHECK_FALSE(util::starts_with("", "x"));
  CHECK_FALSE(util::starts_with("nccl", "NCCL")); // case matters
  CHECK(util::ends_with("slurm-4711.out", ".out"));
  CHECK_FALSE(util::ends_with("out", ".out"));
  CHECK(util::ends_with("x", ""));
  CHECK(util::ends_with("", ""));
  CHECK_FALSE(util::ends_with("", "x"));
}

TEST_CASE("util::contains_icase and to_lower: ASCII case only", "[util][strings]") {
  CHECK(util::contains_icase("[rank3]: NCCL WARN Cuda failure", "nccl warn"));
  CHECK(util::contains_icase("abc", ""));
  CHECK(util::contains_icase("", ""));
  CHECK_FALSE(util::contains_icase("", "a"));
  CHECK_FALSE(util::contains_icase("ab", "abc"));
  CHECK(util::to_lower("NCCL_IB_HCA=Mlx5_0") == "nccl_ib_hca=mlx5_0");
  CHECK(util::to_lower("") == "");
  CHECK(util::to_lower("\xC3\x84X") == "\xC3\x84x"); // non-ASCII bytes are left alone
}

TEST_CASE("util::split: every separator makes a field, empty ones included", "[util][strings]") {
  using V = std::vector<std::string_view>;
  CHECK(util::split("NCCL_IB_HCA,NCCL_SOCKET_IFNAME", ',') == V{"NCCL_IB_HCA", "NCCL_SOCKET_IFNAME"});
  CHECK(util::split("a,,b", ',') == V{"a", "", "b"});
  CHECK(util::split("a,", ',') == V{"a", ""});
  CHECK(util::split(",", ',') == V{"", ""});
  CHECK(util::split("", ',') == V{""});
  CHECK(util::split("no separator", ',') == V{"no separator"});
}

TEST_CASE("util::parse_int: a non-negative decimal that fills the string", "[util][strings]") {
  CHECK(util::parse_int("0") == 0);
  CHECK(util::parse_int("600000") == 600000);
  CHECK(util::parse_int("007") == 7);
  CHECK(util::parse_int("999999999999999999") == 999999999999999999); // 18 digits
  CHECK_FALSE(util::parse_int("1000000000000000000"));                // 19: could overflow, refused
  CHECK_FALSE(util::parse_int(""));
  CHECK_FALSE(util::parse_int("-1"));
  CHECK_FALSE(util::parse_int("+1"));
  CHECK_FALSE(util::parse_int(" 1"));
  CHECK_FALSE(util::parse_int("1 "));
  CHECK_FALSE(util::parse_int("12ms"));
  CHECK_FALSE(util::parse_int("0x1f"));
  CHECK_FALSE(util::parse_int("\xEF\xBC\x91")); // a fullwidth digit one
}

TEST_CASE("util::escape_for_terminal: control characters and escape sequences become visible text", "[util][strings]") {
  CHECK(util::escape_for_terminal("") == "");
  CHECK(util::escape_for_terminal("[rank3]: step 100 loss 2.79") == "[rank3]: step 100 loss 2.79");
  // ESC in colour codes, cursor moves and OSC 8 hyperlinks.
  CHECK(util::escape_for_terminal("\x1b[31mERROR\x1b[0m") == "\\e[31mERROR\\e[0m");
  CHECK(util::escape_for_terminal("\x1b[2J\x1b[H") == "\\e[2J\\e[H");
  CHECK(util::escape_for_terminal("\x1b]8;;https://x.invalid\x07link\x1b]8;;\x07") ==
        "\\e]8;;https://x.invalid\\x07link\\e]8;;\\x07");
  CHECK(util::escape_for_terminal("a\tb") == "a\\tb");
  CHECK(util::escape_for_terminal("a\nb\r") == "a\\x0ab\\x0d");
  CHECK(util::escape_for_terminal("\b\x7f") == "\\x08\\x7f");
  CHECK(util::escape_for_terminal("a\0b"s) == "a\\x00b");
  // C1 controls are two-byte UTF-8 (CSI is U+009B): escaped too.
  CHECK(util::escape_for_terminal("\xC2\x9B"
                                  "31m") == "\\xc2\\x9b31m");
  CHECK(util::escape_for_terminal("\xC2\x85") == "\\xc2\\x85"); // NEL
  // Valid UTF-8 text is kept: an accent, a dash, a no-break space, an emoji.
  const std::string text = "caf\xC3\xA9 \xE2\x80\x94 \xC2\xA0 \xF0\x9F\x94\xA5";
  CHECK(util::escape_for_terminal(text) == text);
  // Invalid bytes are shown one by one.
  CHECK(util::escape_for_terminal("\xFF") == "\\xff");
  CHECK(util::escape_for_terminal("\xE2\x80") == "\\xe2\\x80");                   // cut short
  CHECK(util::escape_for_terminal("\xC0\xAF") == "\\xc0\\xaf");                   // overlong '/'
  CHECK(util::escape_for_terminal("\xED\xA0\x80") == "\\xed\\xa0\\x80");          // a surrogate
  CHECK(util::escape_for_terminal("\xF4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80"); // above U+10FFFF
  // Whatever comes in, what goes out is printable.
  const std::string every_byte = all_bytes();
  CHECK(printable(util::escape_for_terminal(every_byte)));
}

TEST_CASE("util::sanitize_utf8: invalid sequences become U+FFFD, valid text and controls stay", "[util][strings]") {
  CHECK(util::sanitize_utf8("") == "");
  const std::string valid = "caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x94\xA5 \x1b[0m\t";
  CHECK(util::sanitize_utf8(valid) == valid); // controls are not its business
  CHECK(util::sanitize_utf8("\xFF") == k_replacement);
  CHECK(util::sanitize_utf8("a\xFE"
                            "b") == "a" + k_replacement + "b");
  CHECK(util::sanitize_utf8("\x80") == k_replacement); // a stray continuation byte
  // Overlong forms, surrogates and code points above U+10FFFF are invalid.
  // None of their bytes survives: what is left is U+FFFD only.
  for (const auto& bad :
       {"\xC0\x80"s, "\xE0\x80\xAF"s, "\xED\xA0\x80"s, "\xF4\x90\x80\x80"s, "\xF8\x88\x80\x80\x80"s}) {
    const auto out = util::sanitize_utf8(bad);
    INFO(util::escape_for_terminal(bad));
    REQUIRE_FALSE(out.empty());
    CHECK(out.size() % k_replacement.size() == 0);
    for (std::size_t at = 0; at < out.size(); at += k_replacement.size()) {
      CHECK(out.compare(at, k_replacement.size(), k_replacement) == 0);
    }
  }
  // A sequence cut short at the end of the text.
  const auto cut = util::sanitize_utf8("step 1 \xE2\x80");
  CHECK(util::starts_with(cut, "step 1 "));
  CHECK(cut.find(k_replacement) == 7);
  // The result is valid: sanitizing it again changes nothing.
  const std::string every_byte = all_bytes();
  const auto once = util::sanitize_utf8(every_byte);
  CHECK(util::sanitize_utf8(once) == once);
  CHECK(util::sanitize_utf8(cut) == cut);
}

TEST_CASE("util::count_newlines: every newline, at any length and alignment", "[util][strings]") {
  CHECK(util::count_newlines("") == 0);
  CHECK(util::count_newlines("no newline") == 0);
  CHECK(util::count_newlines("\n") == 1);
  CHECK(util::count_newlines("a\nb\n") == 2);
  // Around the 32-byte blocks, and past 255 blocks (the per-byte counters
  // are summed before they can wrap).
  for (const std::size_t n : {31u, 32u, 33u, 64u, 255u * 32u, 255u * 32u + 1u, 100'000u}) {
    const std::string all(n, '\n');
    CHECK(util::count_newlines(all) == n);
    std::string some;
    for (std::size_t i = 0; i < n; ++i) {
      some += (i % 7 == 3) ? '\n' : 'x';
    }
    CHECK(util::count_newlines(some) == static_cast<std::uint64_t>(std::count(some.begin(), some.end(), '\n')));
    // Not at the start of a block.
    CHECK(util::count_newlines(std::string_view(some).substr(1)) ==
          static_cast<std::uint64_t>(std::count(some.begin() + 1, some.end(), '\n')));
  }
}

TEST_CASE("util::display_columns: one per code point", "[util][strings]") {
  CHECK(util::display_columns("") == 0);
  CHECK(util::display_columns("rank 3") == 6);
  CHECK(util::display_columns("\xE2\x80\x94") == 1);     // an em dash: 3 bytes, 1 column
  CHECK(util::display_columns("caf\xC3\xA9") == 4);      // é
  CHECK(util::display_columns("\xF0\x9F\x94\xA5") == 1); // one code point
}

TEST_CASE("util::wrap: prose to a width, with indent and hanging indent", "[util][strings]") {
  CHECK(util::wrap("", 80, "  ") == "");
  CHECK(util::wrap("   \n ", 80, "  ") == "");
  CHECK(util::wrap("one two three", 7, "  ") == "  one\n  two\n  three\n");
  CHECK(util::wrap("one two three", 80, "") == "one two three\n");
  // Runs of whitespace, newlines included, are one space.
  CHECK(util::wrap("a  \n b", 80, "") == "a b\n");
  // A numbered step keeps its text aligned.
  CHECK(util::wrap("1. alpha beta gamma", 12, "", "   ") == "1. alpha\n   beta\n   gamma\n");
  // A word longer than the width is never split.
  CHECK(util::wrap("NCCL_SOCKET_IFNAME=eth0", 5, "") == "NCCL_SOCKET_IFNAME=eth0\n");
  // Columns, not bytes: three accented one-letter words fit in 5 columns.
  CHECK(util::wrap("\xC3\xA9 \xC3\xA9 \xC3\xA9", 5, "") == "\xC3\xA9 \xC3\xA9 \xC3\xA9\n");
  // Every line stays within the width when the words allow it.
  const auto text = util::wrap("the watchdog caught a collective operation timeout on 7 of 8 ranks", 20, "    ", "  ");
  for (const auto line : util::split(text, '\n')) {
    CHECK(util::display_columns(line) <= 20);
  }
}

TEST_CASE("util::clip: at most max bytes, never inside a UTF-8 sequence", "[util][strings]") {
  CHECK(util::clip("", 0) == "");
  CHECK(util::clip("", 5) == "");
  CHECK(util::clip("abc", 5) == "abc");
  CHECK(util::clip("abc", 3) == "abc");
  CHECK(util::clip("abc", 2) == "ab");
  CHECK(util::clip("abc", 0) == "");
  // A two-byte é: a cut after its first byte drops it whole.
  CHECK(util::clip("\xC3\xA9", 1) == "");
  CHECK(util::clip("a\xC3\xA9", 2) == "a");
  CHECK(util::clip("a\xC3\xA9"
                   "b",
                   3) == "a\xC3\xA9");
  // A three-byte em dash, cut after each of its bytes.
  const std::string dash = "a\xE2\x80\x94"
                           "b";
  CHECK(util::clip(dash, 1) == "a");
  CHECK(util::clip(dash, 2) == "a");
  CHECK(util::clip(dash, 3) == "a");
  CHECK(util::clip(dash, 4) == "a\xE2\x80\x94");
  // A four-byte emoji.
  const std::string fire = "x\xF0\x9F\x94\xA5";
  for (std::size_t max = 1; max < 5; ++max) {
    CHECK(util::clip(fire, max) == "x");
  }
  CHECK(util::clip(fire, 5) == fire);
  // A view into the input, not a copy.
  const std::string_view line = "Traceback (most recent call last):";
  CHECK(util::clip(line, 9).data() == line.data());
  // Never more than max, whatever the bytes.
  const std::string every_byte = all_bytes();
  for (std::size_t max = 0; max <= every_byte.size(); max += 7) {
    CHECK(util::clip(every_byte, max).size() <= max);
  }
}

// Invalid input: stray continuation bytes (binary junk, a Latin-1 line) are
// not part of the character before them, but clip walks back through all of
// them and drops that character too; a long run of them leaves nothing.
TEST_CASE("util::clip: stray continuation bytes do not cost the complete characters before them",
          "[util][strings][!mayfail]") {
  CHECK(util::starts_with(util::clip("ab\x80\x80\x80\x80", 4), "ab"));
  const std::string junk = "RuntimeError: " + std::string(600, '\x80');
  CHECK(util::starts_with(util::clip(junk, 300), "RuntimeError: "));
}

TEST_CASE("util::message_template: numbers and 0x ids masked, the words kept", "[util][strings]") {
  CHECK(util::message_template("") == "");
  CHECK(util::message_template("no numbers here") == "no numbers here");
  CHECK(util::message_template("WorkNCCL(SeqNum=4821, OpType=ALLREDUCE, Timeout(ms)=600000)") ==
        "WorkNCCL(SeqNum=#, OpType=ALLREDUCE, Timeout(ms)=#)");
  CHECK(util::message_template("NCCL INFO comm 0x5586a3c0 rank 3 nRanks 8") == "NCCL INFO comm 0x# rank # nRanks #");
  CHECK(util::message_template("0X1F") == "0x#");
  CHECK(util::message_template("tokens/s 412337 lr 3.0e-04") == "tokens/s # lr #e-#");
  CHECK(util::message_template("NCCL version 2.21.5+cuda12.4") == "NCCL version #+cuda#");
  // The same message from two ranks is one template.
  CHECK(util::message_template("[rank3]: node-017:2339:2380 [3] NCCL WARN Cuda failure 700") ==
        util::message_template("[rank5]: node-017:2341:2382 [5] NCCL WARN Cuda failure 700"));
  CHECK(util::message_template("step 99 loss 2.5") == util::message_template("step 100 loss 12.75"));
  // Non-ASCII text passes through.
  CHECK(util::message_template("caf\xC3\xA9 1") == "caf\xC3\xA9 #");
}

TEST_CASE("util::edit_distance: Levenshtein", "[util][strings]") {
  CHECK(util::edit_distance("", "") == 0);
  CHECK(util::edit_distance("", "grep") == 4);
  CHECK(util::edit_distance("grep", "") == 4);
  CHECK(util::edit_distance("diagnose", "diagnose") == 0);
  CHECK(util::edit_distance("diagnose", "diagnsoe") == 2); // a transposition is two edits
  CHECK(util::edit_distance("diagnose", "diagnos") == 1);
  CHECK(util::edit_distance("kitten", "sitting") == 3);
  CHECK(util::edit_distance("explain", "expalin") == util::edit_distance("expalin", "explain"));
}
