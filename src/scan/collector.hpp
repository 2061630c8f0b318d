// denpex::scan — the match sink of one source (private to the scan stage):
// hits with their context, kept in bounded memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <denpex/context/context.hpp>
#include <denpex/context/traceback.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/scan/scan.hpp>
#include <denpex/util/diagnostics.hpp>

namespace denpex::scan::detail {

// What one input unit produced; merged in input order for determinism.
struct UnitResult {
  std::vector<scan::SourceRef> sources;
  std::vector<scan::Hit> hits; // source ids are local to the unit
  std::vector<scan::ErrorLine> error_lines;
  std::vector<scan::ProgressMark> progress; // the last progress line of each source
  ScanTotals totals;
  matcher::ScanStats matcher;
  std::vector<Diagnostic> diags;
};

// The slot a hit is kept in (Collector::key_of).
using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, int, std::string>;

// Collects hits from one source with bounded memory: per key, the first
// `keep` hits are kept; later ones are folded into the last kept one.
class Collector final : public matcher::MatchSink {
public:
  Collector(UnitResult& out, std::uint32_t source, context::SourceContext& ctx, const ScanOptions& options,
            std::size_t presence_patterns);

  // Whether a presence signal is still to be found in this source (read by
  // the threads that look for the next chunks' candidates: a late answer
  // only costs a chunk's scan of the presence signals' database).
  [[nodiscard]] bool presence_wanted() const { return m_presence_wanted.load(std::memory_order_relaxed); }

  bool wants(std::uint32_t signature, std::uint32_t signal) override;

  bool matched(const matcher::MatchEvent& ev) override;

  std::function<void(const scan::Hit&)> m_on_hit;

  void end_chunk(std::string_view chunk);

private:

  // The line's context. Several entries matching one line (NCCL's NVLS
  // line, an exception two entries name) read it once.
  const context::LineContext& context_of(const matcher::MatchEvent& ev);

  // The slot a hit is kept in: entry, signal, source, rank and what tells
  // hits of one rank apart (the GPU; the message, for generic entries; the
  // process and communicator size, for a line without a rank).
  Key key_of(const matcher::MatchEvent& ev, const context::LineContext& ctx);

  // An exception line that a logger printed below the error level
  // ("[WARNING] FileNotFoundError: ...", torch._dynamo reporting a compile
  // it fell back from) was caught and logged: not evidence of a failure.
  bool logged_exception(const matcher::MatchEvent& ev) const;

  // What the hit's signal reads above its line; nothing known without a catalog.
  std::optional<catalog::Signal::Lookback> lookback_of(const matcher::MatchEvent& ev) const;

  // A capture the slot depends on; the captures are only taken when the
  // pattern has a group of that name.
  static std::optional<std::string_view> capture_of(const matcher::MatchEvent& ev, std::string_view name);

  void count_into(const std::vector<std::size_t>& slot, const matcher::MatchEvent& ev);

  // What the signal wants read above its line: the traceback an exception
  // line ends, or the type a C++ what() line was thrown as (a capture).
  void read_above(const matcher::MatchEvent& ev, scan::Hit& hit);

  // An exception line that names no one takes who printed it from its
  // traceback's header line: a logger prints "[stamp TP3] Scheduler hit an
  // exception: Traceback ..." with its prefix once, above the frames.
  static void rank_from_header(const context::Traceback& tb, scan::Hit& hit);

  static constexpr std::size_t k_max_messages = 256;
  std::map<std::tuple<std::uint32_t, std::uint32_t, int>, std::set<std::string>> m_messages;
  context::TracebackReader m_above;
  UnitResult& m_out;
  std::uint32_t m_source;
  context::SourceContext& m_ctx;
  const ScanOptions& m_options;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> m_present; // presence signals found (a handful)
  std::size_t m_presence_patterns;
  std::atomic<bool> m_presence_wanted;
  std::map<Key, std::vector<std::size_t>> m_kept;
  struct LineContextCache {
    std::uint64_t offset; // the line's, in its source
    std::size_t match_pos;
    context::LineContext ctx;
  };
  std::optional<LineContextCache> m_line_ctx;
};

} // namespace denpex::scan::detail
