#include <denpex/matcher/matcher.hpp>
#include <denpex/util/strings.hpp>
#include <denpex/matcher/prefilter.hpp>

#include "prefilter_impl.hpp"

#include <algorithm>
#include <optional>
#include <deque>
#include <mutex>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>

#include <re2/re2.h>
#include <re2/set.h>

namespace denpex::matcher {

namespace {

// One signal's own RE2, compiled on first use (most patterns never hit a
// given log, and compiling ~500 of them is a third of start-up), or taken
// from the loader when it already compiled one. Thread-safe.
class Pattern {
public:
  Pattern(std::uint32_t signature_, std::uint32_t signal_, std::string pattern,
          std::shared_ptr<const RE2> compiled, std::optional<catalog::Condition> when_ = std::nullopt,
          bool presence_ = false)
      : signature(signature_), signal(signal_), when(std::move(when_)), presence(presence_),
        m_pattern(std::move(pattern)), m_re(std::move(compiled)) {}

  // Compiled on first use. The flag spares the hot path std::call_once's
  // own cost (it sets thread-locals before it looks at the once_flag).
  const RE2& re() const {
    if (m_ready.load(std::memory_order_acquire)) {
      return *m_re;
    }
    std::call_once(m_once, [this] {
      if (!m_re) {
        RE2::Options o;
        o.set_log_errors(false);
        m_re = std::make_shared<const RE2>(m_pattern, o);
      }
      m_groups = m_re->NumberOfCapturingGroups();
      for (const auto& [name, idx] : m_re->NamedCapturingGroups()) {
        m_names.emplace_back(name, idx);
      }
      std::sort(m_names.begin(), m_names.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
      m_never_empty = never_matches_empty(m_pattern);
      m_prefix = literal_prefix(m_pattern);
      if (m_prefix.size() < 3) {
        m_prefix.clear(); // too short to say where a match starts
      }
      m_ready.store(true, std::memory_order_release);
    });
    return *m_re;
  }
  // Named groups in group order; valid after re().
  const std::vector<std::pair<std::string, int>>& names() const {
    re();
    return m_names;
  }
  int groups() const {
    re();
    return m_groups;
  }
  // never_matches_empty() of the pattern.
  bool never_empty() const {
    re();
    return m_never_empty;
  }
  // literal_prefix() of the pattern, if 3 bytes or more; else empty.
  const std::string& prefix() const {
    re();
    return m_prefix;
  }

  const std::uint32_t signature;
  const std::uint32_t signal;
  // The signal's `when`: a match whose captures fail it is no match.
  const std::optional<catalog::Condition> when;
  // catalog::Signal::presence: its first match is all a sink wants.
  const bool presence;

  // Whether these captures satisfy `when` (true without one).
  bool accepts(const std::vector<Capture>& captures) const {
    if (!when) {
      return true;
    }
    std::vector<std::pair<std::string_view, std::string_view>> named;
    named.reserve(captures.size());
    for (const auto& c : captures) {
      named.emplace_back(c.name, c.value);
    }
    return when->holds(named);
  }

private:
  std::string m_pattern; // "(?m)" + the signal's pattern
  mutable std::once_flag m_once;
  mutable std::atomic<bool> m_ready{false};
  mutable std::shared_ptr<const RE2> m_re;
  mutable std::vector<std::pair<std::string, int>> m_names;
  mutable int m_groups = 0;
  mutable bool m_never_empty = false;
  mutable std::string m_prefix;
};

struct Hit {
  std::size_t line_start;
  std::size_t line_end;
  std::size_t match_begin;
  std::size_t match_end;
  std::uint32_t pattern;
};

// One hit's captures, taken on first use: RE2 again over exactly the match,
// anchored at both ends, which is the step RE2's own capturing Match() runs
// after its DFA found the match (the same engine, the same span and the
// same surrounding text for ^ and \b, so the same captures).
class HitCaptures final : public LazyCaptures {
public:
  void reset(const Pattern& pat, std::string_view text, const Hit& h) {
    m_pat = &pat;
    m_text = text;
    m_begin = h.match_begin;
    m_end = h.match_end;
    m_done = false;
  }
  const std::vector<Capture>& get() const override {
    if (!m_done) {
      take();
      m_done = true;
    }
    return m_values;
  }
  bool declares(std::string_view name) const override {
    const auto& names = m_pat->names();
    return std::any_of(names.begin(), names.end(), [&](const auto& n) { return n.first == name; });
  }

private:
  void take() const {
    m_values.clear();
    const int n = m_pat->groups() + 1;
    if (n == 1) {
      return;
    }
    thread_local std::vector<re2::StringPiece> sub;
    sub.assign(static_cast<std::size_t>(n), re2::StringPiece());
    if (!m_pat->re().Match(re2::StringPiece(m_text.data(), m_text.size()), m_begin, m_end, RE2::ANCHOR_BOTH,
                           sub.data(), n)) {
      return; // cannot happen: the same pattern matched exactly this span
    }
    for (const auto& [name, idx] : m_pat->names()) {
      const auto& g = sub[static_cast<std::size_t>(idx)];
      if (g.data() != nullptr) {
        m_values.push_back(Capture{name, std::string_view(g.data(), g.size())});
      }
    }
  }

  const Pattern* m_pat = nullptr;
  std::string_view m_text;
  std::size_t m_begin = 0;
  std::size_t m_end = 0;
  mutable bool m_done = false;
  mutable std::vector<Capture> m_values;
};

// Up to this many patterns in a chunk are each searched over the whole
// chunk; beyond it, the chunk is matched line by line (scan_candidates).
constexpr std::size_t k_whole_chunk_max = 8;

// A pattern the prefilter names on more lines of one chunk than this is
// searched over the whole chunk instead: one RE2 pass over 1 MiB costs about
// what a thousand single-line searches do (a line that only looks like a
// match, e.g. when the expression had to be relaxed, costs a search too).
constexpr std::size_t k_max_lines_per_pattern = 1024;

RE2::Options base_options() {
  RE2::Options o;
  o.set_log_errors(false);
  return o;
}

} // namespace

struct Matcher::Impl {
  std::deque<Pattern> patterns; // a deque: Pattern holds a once_flag and never moves
  std::size_t extra_count = 0;  // MatcherOptions::extra_patterns, numbered after the signals
  // Finds which patterns may occur in a chunk; nullptr without Hyperscan.
  std::unique_ptr<detail::Prefilter> prefilter;
  // The patterns the prefilter does not cover (all of them without it), in
  // one RE2::Set that runs over every byte; set index k is pattern set_to_pattern[k].
  std::unique_ptr<RE2::Set> set;
  std::vector<std::uint32_t> set_to_pattern;
  mutable std::atomic<bool> warned_oom{false};
  mutable std::atomic<bool> warned_prefilter{false};

  std::size_t total() const { return patterns.size() + extra_count; }

  // The slow path, when a faster one failed: every signal pattern's own RE2
  // over the whole text. `which` limits it to those indexes (nullptr: all).
  void match_one_by_one(std::string_view text, const std::vector<std::uint32_t>* which, std::vector<int>& out) const {
    auto one = [&](std::uint32_t p) {
      if (p < patterns.size() && RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), patterns[p].re())) {
        out.push_back(static_cast<int>(p));
      }
    };
    if (which != nullptr) {
      for (const auto p : *which) {
        one(p);
      }
    } else {
      for (std::uint32_t p = 0; p < patterns.size(); ++p) {
        one(p);
      }
    }
  }

  bool find_on_line(std::uint32_t p, std::string_view text, std::size_t from, std::size_t to,
                    std::vector<Hit>& hits) const;
  // Searches text[from, to) for pattern p (find_all), unless p is a presence
  // signal already found in this chunk (`present`) or no longer wanted by
  // the sink.
  void search(std::uint32_t p, std::string_view text, std::size_t from, std::size_t to, std::vector<Hit>& hits,
              std::vector<std::uint32_t>& present, MatchSink& sink,
              std::size_t last_end = std::string_view::npos) const {
    const Pattern& pat = patterns[p];
    if (!pat.presence) {
      find_all(p, text, from, to, hits, last_end);
      return;
    }
    if (std::find(present.begin(), present.end(), p) != present.end() || !sink.wants(pat.signature, pat.signal)) {
      return;
    }
    const auto before = hits.size();
    find_all(p, text, from, to, hits, last_end); // one line, but for the first chunk of a source without the prefilter
    if (hits.size() > before) {
      hits.resize(before + 1); // the first match is all a sink wants
      present.push_back(p);
    }
  }

  // Finds every hit of pattern `p` in text[from, to) (whole lines) and
  // appends it to `hits`. Only where each match is: one DFA search (the
  // captures are taken later, for the hits that need them). No match ends
  // after `last_end` (the prefilter's last report on a line): a match that
  // ends there is the last, unless an empty one could follow it.
  void find_all(std::uint32_t p, std::string_view text, std::size_t from, std::size_t to, std::vector<Hit>& hits,
                std::size_t last_end = std::string_view::npos) const {
    const RE2& re = patterns[p].re();
    const re2::StringPiece all(text.data(), text.size());
    re2::StringPiece m;
    if (last_end != std::string_view::npos && find_on_line(p, text, from, to, hits)) {
      return;
    }
    std::size_t pos = from;
    while (pos < to) {
      if (!re.Match(all, pos, to, RE2::UNANCHORED, &m, 1)) {
        return;
      }
      auto begin = static_cast<std::size_t>(m.data() - text.data());
      auto end = begin + m.size();
      // memrchr: string_view::rfind walks back one byte at a time.
      const void* nl = begin > 0 ? ::memrchr(text.data(), '\n', begin) : nullptr;
      std::size_t line_start = nl == nullptr ? 0 : static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) + 1;
      std::size_t line_end = text.find('\n', begin);
      if (line_end == std::string_view::npos || line_end > to) {
        line_end = to;
      }
      if (end > line_end) {
        // The match crossed a newline (\s or [^x] in the pattern): confirm it
        // on the rest of the line alone (never before `pos`, or a hit already
        // recorded would be found again). See: tests/fuzz/regressions.
        if (!re.Match(all, std::max(pos, line_start), line_end, RE2::UNANCHORED, &m, 1)) {
          pos = line_end + 1;
          continue;
        }
        begin = static_cast<std::size_t>(m.data() - text.data());
        end = begin + m.size();
      }
      hits.push_back(Hit{line_start, line_end, begin, end, p});
      if (end > last_end || (end == last_end && patterns[p].never_empty())) {
        return;
      }
      // Several messages can share one line when a paste lost its newlines:
      // keep searching the rest of the line.
      const std::size_t next = (end > begin && end < line_end) ? end : line_end + 1;
      pos = next > pos ? next : line_end + 1; // always forward
    }
  }
};

// One line the prefilter named, text[from, to), for a pattern whose every
// match starts with its literal prefix. Where the prefix occurs once on the
// line, that is where the only possible match starts: RE2 runs anchored
// there (its forward DFA alone, no search for the start), and no second
// match can follow (it would need a second prefix). True when that settled
// the line; false to search it the general way.
bool Matcher::Impl::find_on_line(std::uint32_t p, std::string_view text, std::size_t from, std::size_t to,
                                 std::vector<Hit>& hits) const {
  const std::string& prefix = patterns[p].prefix();
  if (prefix.empty()) {
    return false;
  }
  const std::string_view line = text.substr(from, to - from);
  const auto at = line.find(prefix);
  if (at == std::string_view::npos) {
    return true; // no match can start anywhere
  }
  if (line.find(prefix, at + 1) != std::string_view::npos) {
    return false; // two places a match could start
  }
  re2::StringPiece m;
  if (patterns[p].re().Match(re2::StringPiece(text.data(), text.size()), from + at, to, RE2::ANCHOR_START, &m, 1)) {
    const auto begin = static_cast<std::size_t>(m.data() - text.data());
    hits.push_back(Hit{from, to, begin, begin + m.size(), p});
  }
  return true;
}

Matcher::Matcher(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;
Matcher::~Matcher() = default;

std::size_t Matcher::pattern_count() const { return m_impl->patterns.size(); }
std::size_t Matcher::extra_base() const { return m_impl->patterns.size(); }
bool Matcher::has_extra_patterns() const { return m_impl->extra_count > 0; }

Expected<Matcher> Matcher::compile(const catalog::Catalog& catalog, const MatcherOptions& options) {
  auto impl = std::make_unique<Impl>();
  std::vector<std::string_view> sources; // every pattern, signals then extras, without "(?m)"
  for (std::uint32_t s = 0; s < catalog.size(); ++s) {
    const auto& sig = catalog.entries()[s]; // signals only: no entry's details are read
    if (options.include && !options.include(sig)) {
      continue;
    }
    for (std::uint32_t k = 0; k < sig.signals.size(); ++k) {
      impl->patterns.emplace_back(s, k, "(?m)" + sig.signals[k].pattern, sig.signals[k].compiled, sig.signals[k].when,
                                  sig.signals[k].presence);
      sources.push_back(sig.signals[k].pattern);
    }
  }
  for (const auto& extra : options.extra_patterns) {
    sources.push_back(extra);
    ++impl->extra_count;
  }

  std::vector<std::uint32_t> unfiltered;
  if (options.prefilter) {
    std::vector<std::optional<std::string>> expressions;
    expressions.reserve(sources.size());
    for (std::size_t k = 0; k < sources.size(); ++k) {
      expressions.push_back(prefilter_expression(sources[k], k < impl->patterns.size() && impl->patterns[k].presence));
    }
    impl->prefilter = detail::Prefilter::build(expressions, options.prebuilt_prefilter, unfiltered);
  } else {
    for (std::size_t k = 0; k < sources.size(); ++k) {
      unfiltered.push_back(static_cast<std::uint32_t>(k));
    }
  }

  if (!unfiltered.empty()) {
    RE2::Options set_opts = base_options();
    set_opts.set_max_mem(options.set_max_mem);
    impl->set = std::make_unique<RE2::Set>(set_opts, RE2::UNANCHORED);
    for (const auto p : unfiltered) {
      std::string error;
      if (impl->set->Add("(?m)" + std::string(sources[p]), &error) < 0) {
        if (p >= impl->patterns.size()) {
          return make_error(ErrorKind::invalid, "matcher", "invalid extra pattern: " + error);
        }
        const auto& pat = impl->patterns[p];
        return make_error(ErrorKind::invalid,
                          catalog.at(pat.signature).file + ": /signals/" + std::to_string(pat.signal) + "/pattern",
                          "invalid regex: " + error);
      }
      impl->set_to_pattern.push_back(p);
    }
    if (!impl->set->Compile()) {
      return make_error(ErrorKind::invalid, "catalog",
                        "the signature set does not compile within the RE2 memory budget",
                        "raise MatcherOptions::set_max_mem");
    }
  }
  return Matcher(std::move(impl));
}

std::string Matcher::describe() const {
  const auto& impl = *m_impl;
  std::string s = impl.prefilter ? impl.prefilter->describe() : "no prefilter";
  s += "; " + std::to_string(impl.set_to_pattern.size()) + " patterns scanned by RE2 alone";
  return s;
}

std::vector<int> Candidates::patterns() const {
  std::vector<int> out = whole;
  for (const auto& l : lines) {
    out.push_back(static_cast<int>(l.pattern));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::size_t Matcher::presence_patterns() const {
  return static_cast<std::size_t>(std::count_if(m_impl->patterns.begin(), m_impl->patterns.end(),
                                                [](const Pattern& p) { return p.presence; }));
}

void Matcher::candidates(std::string_view text, Candidates& out, Diagnostics& diags, ScanStats* stats,
                         bool presence) const {
  const auto& impl = *m_impl;
  out.clear();
  if (impl.total() == 0 || text.empty()) {
    return;
  }
  if (stats != nullptr) {
    ++stats->chunks;
  }
  if (impl.prefilter && !impl.prefilter->scan(text, k_max_lines_per_pattern, out.lines, out.whole, presence)) {
    // Never a silent miss: without the prefilter's answer, ask RE2 for all.
    out.clear();
    if (!impl.warned_prefilter.exchange(true)) {
      diags.warning(Error{ErrorKind::invalid, "matcher",
                          "the Hyperscan prefilter failed; scanning pattern by pattern (same results, slower)"});
    }
    impl.match_one_by_one(text, nullptr, out.whole);
    std::sort(out.whole.begin(), out.whole.end());
    return;
  }
  // The extra patterns only ask whether the chunk holds one: no lines (the
  // lines are sorted below, so their order here does not matter).
  const auto extra = std::partition(out.lines.begin(), out.lines.end(), [&](const Candidates::Line& l) {
    return l.pattern < impl.patterns.size();
  });
  for (auto it = extra; it != out.lines.end(); ++it) {
    out.whole.push_back(static_cast<int>(it->pattern));
  }
  out.lines.erase(extra, out.lines.end());
  if (impl.set) {
    thread_local std::vector<int> set_out;
    RE2::Set::ErrorInfo info{};
    if (impl.set->Match(re2::StringPiece(text.data(), text.size()), &set_out, &info)) {
      for (const int k : set_out) {
        out.whole.push_back(static_cast<int>(impl.set_to_pattern[static_cast<std::size_t>(k)]));
      }
    } else if (info.kind != RE2::Set::kNoError) {
      // A silent miss is worse than a slow scan: try every pattern alone.
      if (stats != nullptr) {
        ++stats->dfa_fallbacks;
      }
      if (!impl.warned_oom.exchange(true)) {
        diags.warning(Error{ErrorKind::invalid, "matcher",
                            "the RE2 set's DFA ran out of memory; scanning pattern by pattern (same results, slower)"});
      }
      impl.match_one_by_one(text, &impl.set_to_pattern, out.whole);
    }
  }
  // Neither engine reports in order.
  std::sort(out.whole.begin(), out.whole.end());
  out.whole.erase(std::unique(out.whole.begin(), out.whole.end()), out.whole.end());
  std::sort(out.lines.begin(), out.lines.end(), [](const Candidates::Line& a, const Candidates::Line& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.pattern < b.pattern;
  });
  out.lines.erase(std::unique(out.lines.begin(), out.lines.end(),
                              [](const Candidates::Line& a, const Candidates::Line& b) {
                                return a.begin == b.begin && a.pattern == b.pattern;
                              }),
                  out.lines.end());
}

bool Matcher::scan(const source::Chunk& chunk, MatchSink& sink, Diagnostics& diags, ScanStats* stats) const {
  thread_local Candidates found;
  candidates(chunk.text, found, diags, stats);
  return scan_candidates(chunk, found, sink, stats);
}

bool Matcher::scan_candidates(const source::Chunk& chunk, const Candidates& found, MatchSink& sink,
                              ScanStats* stats) const {
  if (stats == nullptr || found.empty()) {
    return confirm(chunk, found, sink, stats);
  }
  const auto start = std::chrono::steady_clock::now();
  const bool go_on = confirm(chunk, found, sink, stats);
  stats->confirm_ns += static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  return go_on;
}

bool Matcher::confirm(const source::Chunk& chunk, const Candidates& found, MatchSink& sink, ScanStats* stats) const {
  const auto& impl = *m_impl;
  const std::string_view text = chunk.text;
  if (found.empty()) {
    return true;
  }
  if (stats != nullptr) {
    ++stats->chunks_with_hits;
    stats->lines_confirmed += found.lines.size();
  }

  thread_local std::vector<Hit> hits;
  thread_local std::vector<std::uint32_t> present; // presence signals found in this chunk
  hits.clear();
  present.clear();
  // The lines the prefilter named: one RE2 search of each.
  for (const auto& l : found.lines) {
    impl.search(l.pattern, text, l.begin, l.end, hits, present, sink, l.last_end);
  }
  // The patterns to search for over the whole chunk.
  const auto& whole = found.whole;
  const auto signals = static_cast<std::size_t>(
      std::lower_bound(whole.begin(), whole.end(), static_cast<int>(impl.patterns.size())) - whole.begin());
  if (signals <= k_whole_chunk_max) {
    // The usual case: a few patterns, each searched over the whole chunk.
    for (std::size_t k = 0; k < signals; ++k) {
      impl.search(static_cast<std::uint32_t>(whole[k]), text, 0, text.size(), hits, present, sink);
    }
  } else {
    // Many patterns in one chunk (a log that is all errors, without the
    // prefilter): one search per pattern over the whole chunk would cost
    // `signals` passes. Ask line by line which patterns occur, and search
    // only those lines.
    if (stats != nullptr) {
      ++stats->line_by_line;
    }
    thread_local Candidates on_line;
    Diagnostics ignored; // the same engines already ran over this chunk, and warned
    for (std::size_t start = 0; start < text.size();) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) {
        end = text.size();
      }
      candidates(text.substr(start, end - start), on_line, ignored);
      for (const int p : on_line.patterns()) {
        if (static_cast<std::size_t>(p) < impl.patterns.size() &&
            std::binary_search(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(signals), p)) {
          impl.search(static_cast<std::uint32_t>(p), text, start, end, hits, present, sink);
        }
      }
      start = end + 1;
    }
  }
  std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    if (a.line_start != b.line_start) {
      return a.line_start < b.line_start;
    }
    if (a.match_begin != b.match_begin) {
      return a.match_begin < b.match_begin;
    }
    return a.pattern < b.pattern;
  });

  HitCaptures captures;
  source::LineCounter lines(chunk);
  for (const Hit& h : hits) {
    const std::uint64_t line_no = lines.at(h.line_start);
    const Pattern& pat = impl.patterns[h.pattern];
    captures.reset(pat, text, h);
    if (!pat.accepts(pat.when ? captures.get() : std::vector<Capture>{})) {
      continue; // its `when` does not hold: not a match of this signal
    }
    std::size_t line_end = h.line_end;
    if (line_end > h.line_start && text[line_end - 1] == '\r') {
      --line_end;
    }
    MatchEvent ev;
    ev.signature = pat.signature;
    ev.signal = pat.signal;
    ev.line = text.substr(h.line_start, line_end - h.line_start);
    ev.line_no = line_no;
    ev.offset = chunk.offset + h.line_start;
    ev.lazy = &captures;
    ev.chunk = text;
    ev.line_pos = h.line_start;
    ev.match_pos = h.match_begin - h.line_start;
    ev.presence = pat.presence;
    if (!sink.matched(ev)) {
      return false;
    }
  }
  return true;
}

void Matcher::match_entry_line(std::uint32_t signature, std::string_view line,
                               const std::function<void(std::uint32_t, const std::vector<Capture>&)>& hit) const {
  for (const auto& pat : m_impl->patterns) {
    if (pat.signature != signature) {
      continue;
    }
    const int n = pat.groups() + 1;
    std::vector<re2::StringPiece> sub(static_cast<std::size_t>(n));
    if (!pat.re().Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, sub.data(), n)) {
      continue;
    }
    std::vector<Capture> caps;
    for (const auto& [name, idx] : pat.names()) {
      const auto& s = sub[static_cast<std::size_t>(idx)];
      if (s.data() != nullptr) {
        caps.push_back(Capture{name, std::string_view(s.data(), s.size())});
      }
    }
    if (!pat.accepts(caps)) {
      continue;
    }
    hit(pat.signal, caps);
  }
}

} // namespace denpex::matcher
