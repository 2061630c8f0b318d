// denpex::matcher — the hot path: finds the catalog's signals in chunks.
//
// Two stages. A prefilter names where patterns may occur in a chunk: the
// Hyperscan database of every signal pattern (prefilter.hpp; the built-in
// ones compiled at build time and embedded) names the lines, from its match
// end offsets; where Hyperscan cannot run, or with --no-prefilter, one
// RE2::Set names the patterns that occur somewhere in the chunk. Then each
// named pattern's own RE2, the engine of record, confirms the match and
// takes the captures: on the named lines only, or over the whole chunk (line
// by line when many patterns occur in it). So the cost follows the matches,
// not the chunks they fall in, and lines are never split for chunks that
// match nothing. Both paths give the same matches (tests/prefilter). The
// matcher knows nothing about ranks, times or ordering across chunks (that
// is context and correlate).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/source/chunk.hpp>
#include <denpex/util/diagnostics.hpp>

namespace denpex::matcher {

struct Capture {
  std::string_view name;
  std::string_view value;
};

// A match's named captures, taken when first asked for. Finding a match
// needs only RE2's DFA; the captures need a second, slower engine over the
// match (RE2 does the same two steps inside one call), so a hit that is only
// counted never pays for them.
class LazyCaptures {
public:
  virtual ~LazyCaptures() = default;
  virtual const std::vector<Capture>& get() const = 0;
  // Whether the pattern has a group of this name (no matching needed).
  virtual bool declares(std::string_view name) const = 0;
};

// One signal found on one line. Every view (line, captures, chunk) points
// into the reader's buffer and is valid only during MatchSink::matched().
struct MatchEvent {
  std::uint32_t signature = 0; // index into the Catalog
  std::uint32_t signal = 0;    // index into Signature::signals
  std::string_view line;       // without its '\n' (and a CRLF's '\r')
  std::uint64_t line_no = 0;   // 1-based
  std::uint64_t offset = 0;    // byte offset of the line in its source
  const LazyCaptures* lazy = nullptr;
  std::string_view chunk;      // the whole chunk, for looking at neighbouring lines
  std::size_t line_pos = 0;    // where `line` starts inside `chunk`
  std::size_t match_pos = 0;   // where the match starts inside `line`
  bool presence = false;       // a presence signal (catalog::Signal::presence): see MatchSink::wants()

  const std::vector<Capture>& captures() const { return lazy->get(); }
  bool declares(std::string_view name) const { return lazy->declares(name); }
};

// Push-model consumer (ripgrep's Sink). matched() returns false to stop.
class MatchSink {
public:
  virtual ~MatchSink() = default;
  virtual bool matched(const MatchEvent& event) = 0;
  // Asked before a presence signal is searched for (never for the others):
  // false once the sink has the match it needs. The matcher also reports at
  // most one match of a presence signal per chunk.
  virtual bool wants(std::uint32_t signature, std::uint32_t signal) {
    (void)signature;
    (void)signal;
    return true;
  }
};

struct MatcherOptions {
  // Which entries to compile (grep --signature/--area/--role, --ignore).
  std::function<bool(const catalog::Signature&)> include;
  std::int64_t set_max_mem = 64ll << 20; // RE2::Set DFA budget
  // Patterns that are not signatures but ride along in the same set, so one
  // DFA pass answers both (the error-line sampler's). They appear in
  // candidates() from extra_base() on and are never reported as matches.
  std::vector<std::string> extra_patterns;
  // Run the Hyperscan prefilter in front of RE2 (where the build and the CPU
  // have it). Off: one RE2::Set scans every byte, as it did before.
  bool prefilter = true;
  // A blob from build_prefilter_blob() (the build embeds one for the built-in
  // catalog): its patterns need no compiling at start-up.
  std::string_view prebuilt_prefilter;
};

struct ScanStats {
  std::uint64_t chunks = 0;
  std::uint64_t chunks_with_hits = 0;
  std::uint64_t dfa_fallbacks = 0;
  std::uint64_t line_by_line = 0;    // chunks with so many whole-chunk patterns they were matched per line
  std::uint64_t lines_confirmed = 0; // (line, pattern) pairs the prefilter named, each one RE2 search
  // Wall time in scan_candidates: RE2 confirming the candidates, the hits'
  // line numbers, and the sink's work on each match (context, slots). What a
  // match costs beyond finding where matches may be (docs/performance.md).
  std::uint64_t confirm_ns = 0;
};

// Where the first stage says patterns may occur in one chunk.
struct Candidates {
  // Patterns to search for over the whole chunk, sorted and unique: those
  // RE2's set found (without the prefilter), a pattern the prefilter named
  // on too many lines, and the extra patterns (MatcherOptions).
  std::vector<int> whole;
  // A line on which a pattern may match (text[begin, end), without its
  // '\n'): only that line is searched for it. Sorted by line, then pattern.
  struct Line {
    std::uint32_t begin;
    std::uint32_t end;
    std::uint32_t pattern;
    // Where the last match of the prefilter's expression on this line ended:
    // no match of the pattern on the line ends later.
    std::uint32_t last_end;
  };
  std::vector<Line> lines;

  void clear() {
    whole.clear();
    lines.clear();
  }
  [[nodiscard]] bool empty() const { return whole.empty() && lines.empty(); }
  // Every pattern named either way, sorted and unique.
  [[nodiscard]] std::vector<int> patterns() const;
};

class Matcher {
public:
  // Compiles the catalog. A pattern RE2 rejects (already validated by the
  // catalog, so a bug) or a Set that does not compile is an error.
  static Expected<Matcher> compile(const catalog::Catalog& catalog, const MatcherOptions& options = {});

  Matcher(Matcher&&) noexcept;
  Matcher& operator=(Matcher&&) noexcept;
  ~Matcher();

  // Scans one chunk and calls sink.matched() for each hit in line order
  // (several signals on one line come in pattern order). Returns false if the
  // sink asked to stop. If the DFA runs out of memory the chunk is scanned
  // pattern by pattern instead (same results, slower) and a warning is added
  // to `diags` once. Thread-safe: one Matcher may scan on many threads.
  bool scan(const source::Chunk& chunk, MatchSink& sink, Diagnostics& diags, ScanStats* stats = nullptr) const;

  // scan() in two steps, so the expensive first one can run on other threads:
  // candidates() runs the prefilter (or the set) over `text` and stores where
  // patterns may occur (empty if nowhere); scan_candidates() then confirms
  // them and reports the matches, in line order. Both are thread-safe.
  // `presence` false: the caller's sink has every presence signal it wants
  // (presence_patterns()), and the prefilter's database of presence signals
  // alone is not run.
  void candidates(std::string_view text, Candidates& out, Diagnostics& diags, ScanStats* stats = nullptr,
                  bool presence = true) const;
  bool scan_candidates(const source::Chunk& chunk, const Candidates& candidates, MatchSink& sink,
                       ScanStats* stats = nullptr) const;

  [[nodiscard]] std::size_t pattern_count() const;
  // How many patterns are presence signals (catalog::Signal::presence).
  [[nodiscard]] std::size_t presence_patterns() const;
  // How chunks are matched, for -v: the prefilter and what RE2 scans alone.
  [[nodiscard]] std::string describe() const;
  // Index of the first extra pattern in candidates() (== the number of signal
  // patterns); equal to the total when there are none.
  [[nodiscard]] std::size_t extra_base() const;
  [[nodiscard]] bool has_extra_patterns() const;

  // Checks one line against one entry only (selftest, explain): calls `hit`
  // for each of the entry's signals that matches, with its captures.
  void match_entry_line(std::uint32_t signature, std::string_view line,
                        const std::function<void(std::uint32_t signal, const std::vector<Capture>&)>& hit) const;

private:
  // scan_candidates() without its clock.
  bool confirm(const source::Chunk& chunk, const Candidates& candidates, MatchSink& sink, ScanStats* stats) const;
  struct Impl;
  explicit Matcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

} // namespace denpex::matcher
