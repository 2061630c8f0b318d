// denpex::matcher prefilter — a multi-pattern SIMD engine (Hyperscan) that
// tells the matcher which patterns may occur in a chunk, so RE2 never has to
// step a DFA over every byte.
//
// Hyperscan runs each pattern in prefilter mode: it may report a pattern
// that RE2 then does not find (a false positive costs one RE2 search), but
// it never misses one RE2 would find. RE2 stays the engine of record for
// what matches, where, and what is captured.
//
// Hyperscan compiles slowly (about half a second for the built-in catalog),
// so the build compiles the built-in patterns once and embeds the serialized
// database (a "blob"); at run time only patterns the blob lacks (--signatures
// entries) are compiled. Without Hyperscan (other CPUs, or a build without
// libhs) everything still works through RE2 alone.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/util/expected.hpp>

namespace denpex::matcher {

// Translates an RE2 pattern into a Hyperscan expression (compiled in byte
// mode with HS_FLAG_MULTILINE) that matches at least every line the RE2
// pattern matches in RE2's UTF-8 mode. RE2's `.`, negated classes and \S \W \D
// match one code point, which may be up to 4 bytes; Hyperscan's match one
// byte. Where the difference could lose a match (no `*`, `+` or `{n,}` after
// the atom), the atom is widened with an alternative of 2-4 high bytes.
// RE2's \s is [\t\n\f\r ] (no \v); it is spelled out. Returns nullopt where a
// byte-mode equivalent is not certain (non-ASCII in a class, \p, \C, \Q,
// \x above 0x7f); such a pattern is matched by RE2 alone.
std::optional<std::string> hyperscan_expression(std::string_view re2_pattern);

// A presence signal's expression (catalog::Signal::presence) carries this
// mark in front: it is compiled with HS_FLAG_SINGLEMATCH, so Hyperscan
// reports its first match in a chunk and stops looking for it (a Megatron
// log's per-iteration line is 80% of the log). The mark is part of the
// expression as a blob stores it: a prebuilt expression serves only a
// pattern with the same flag.
inline constexpr std::string_view k_presence_mark = "(*presence)";

// hyperscan_expression(), with k_presence_mark in front for a presence signal:
// the expression as the prefilter and its blob take it.
std::optional<std::string> prefilter_expression(std::string_view re2_pattern, bool presence);

// True if every match of the RE2 pattern holds at least one character: some
// top-level piece must consume one (a literal, a class, `.` or an escape
// such as \d, not optional). False where that is not plain from the text
// (top-level alternation, a group, an assertion only): a guess never says
// true wrongly.
bool never_matches_empty(std::string_view re2_pattern);

// The bytes every match of the RE2 pattern starts with: its leading literal
// characters (escaped punctuation included), up to the first atom that is
// not one required ASCII byte. Empty when there is none, when the pattern has
// a top-level `|`, or when it folds case anywhere.
std::string literal_prefix(std::string_view re2_pattern);

// True when this build has Hyperscan and this CPU can run it.
bool prefilter_available();

// Compiles `expressions` (already translated) into a blob for
// MatcherOptions::prebuilt_prefilter. Expressions Hyperscan rejects are left
// out of the blob (the matcher then runs them through RE2). The database is
// built for the baseline x86-64 feature set Hyperscan supports, so the blob
// loads on any CPU that can run Hyperscan at all.
Expected<std::string> build_prefilter_blob(const std::vector<std::string>& expressions);

// The blob for the built-in catalog, generated at build time by
// tools/prefilter/make_blob.cpp (library denpex_builtin_prefilter). Empty in
// a build without Hyperscan.
std::string_view builtin_prefilter_blob();

} // namespace denpex::matcher
