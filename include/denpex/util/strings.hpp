// denpex::util — small string helpers shared by every module.
//
// Nothing here allocates unless it returns a std::string.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::util {

std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
bool contains_icase(std::string_view haystack, std::string_view needle);
std::string to_lower(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);

// Parses a non-negative decimal integer that fills `s` exactly.
std::optional<std::int64_t> parse_int(std::string_view s);

// Makes a log line safe for a terminal: control characters (C0, DEL, C1) and
// therefore every escape sequence are shown as \xNN / \e / \t escapes; invalid
// UTF-8 bytes are shown as \xNN. The result holds only printable text.
std::string escape_for_terminal(std::string_view s);

// Replaces invalid UTF-8 sequences with U+FFFD so the text can go into JSON.
std::string sanitize_utf8(std::string_view s);

// Newlines in `text`, 16 bytes at a time (every byte of every chunk is
// counted for line numbers: one memchr call per line cost ~10% of a scan).
std::uint64_t count_newlines(std::string_view text);

// Display columns of UTF-8 text: one per code point (an em dash is one
// column, not three bytes).
std::size_t display_columns(std::string_view s);

// Wraps prose to `width` display columns, each line prefixed with `indent`
// and ending in '\n'; lines after the first get `hang` more ("1. " steps and
// "- " items keep their text aligned).
std::string wrap(std::string_view text, std::size_t width, std::string_view indent, std::string_view hang = {});

// Cuts `s` to at most `max` bytes, never inside a UTF-8 sequence (the caller
// marks the cut if it wants one).
std::string_view clip(std::string_view s, std::size_t max);

// Replaces runs of digits and hex ids with placeholders: the "template" of a
// message, for grouping the same message from many ranks.
std::string message_template(std::string_view s);

// Levenshtein distance (insertions, deletions, substitutions): "did you
// mean" suggestions for mistyped subcommands.
std::size_t edit_distance(std::string_view a, std::string_view b);

} // namespace denpex::util
