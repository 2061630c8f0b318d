// The match sink of one source (collector.hpp).
#include "collector.hpp"

#include <algorithm>
#include <memory>

#include <denpex/util/strings.hpp>

namespace denpex::scan::detail {

Collector::Collector(UnitResult& out, std::uint32_t source, context::SourceContext& ctx, const ScanOptions& options,
          std::size_t presence_patterns)
    : m_out(out), m_source(source), m_ctx(ctx), m_options(options), m_presence_patterns(presence_patterns),
      m_presence_wanted(presence_patterns > 0) {
}

bool Collector::wants(std::uint32_t signature, std::uint32_t signal) {
  return std::find(m_present.begin(), m_present.end(), std::make_pair(signature, signal)) == m_present.end();
}

bool Collector::matched(const matcher::MatchEvent& ev) {
  ++m_out.totals.matches;
  if (ev.presence) {
    m_present.emplace_back(ev.signature, ev.signal); // this source needs no more of it
    m_presence_wanted.store(m_present.size() < m_presence_patterns, std::memory_order_relaxed);
  }
  if (logged_exception(ev)) {
    return true;
  }
  const context::LineContext& ctx = context_of(ev);
  auto& slot = m_kept[key_of(ev, ctx)];
  const bool folded = slot.size() >= m_options.keep_per_key;
  // A traceback walk also keeps the chain state for later exceptions, so it
  // runs for every exception line; the hit is built only when it is kept
  // (or shown as it is read).
  const auto lookback = lookback_of(ev);
  if (folded && !m_on_hit && lookback && *lookback != catalog::Signal::Lookback::python_traceback) {
    count_into(slot, ev);
    return true;
  }
  scan::Hit hit;
  hit.signature = ev.signature;
  hit.signal = ev.signal;
  hit.source = m_source;
  hit.line_no = ev.line_no;
  hit.last_line_no = ev.line_no;
  hit.ctx = ctx;
  for (const auto& c : ev.captures()) {
    hit.captures.emplace_back(std::string(c.name), std::string(util::clip(c.value, 256)));
  }
  read_above(ev, hit);
  if (hit.traceback && hit.traceback->ignored) {
    return true; // Python reported it and went on (atexit, unraisable): not evidence
  }
  if (m_on_hit) {
    hit.text = std::string(util::clip(ev.line, m_options.max_line_copy));
    m_on_hit(hit);
  }
  if (folded) {
    count_into(slot, ev);
    return true;
  }
  if (!m_on_hit) {
    hit.text = std::string(util::clip(ev.line, m_options.max_line_copy));
  }
  slot.push_back(m_out.hits.size());
  m_out.hits.push_back(std::move(hit));
  return true;
}

void Collector::end_chunk(std::string_view chunk) {
  if (m_options.catalog != nullptr) {
    m_above.end_chunk(chunk);
  }
}

const context::LineContext& Collector::context_of(const matcher::MatchEvent& ev) {
  if (!m_line_ctx || m_line_ctx->offset != ev.offset || m_line_ctx->match_pos != ev.match_pos) {
    m_line_ctx = LineContextCache{ev.offset, ev.match_pos, m_ctx.context_for(ev.chunk, ev.line_pos, ev.line, ev.match_pos)};
  }
  return m_line_ctx->ctx;
}

Key Collector::key_of(const matcher::MatchEvent& ev, const context::LineContext& ctx) {
  const int rank = ctx.rank ? ctx.rank->value : -1;
  std::string gpu = ctx.pci ? ctx.pci->value : "";
  if (const auto pci = capture_of(ev, "pci")) {
    gpu = context::normalize_pci(util::clip(*pci, 256));
  }
  // Generic evidence is kept per distinct message (numbers masked): a
  // rank's fatal exception is never folded into the recovered ones before it.
  // Distinct messages are unbounded (a warning naming a different file each
  // step): past k_max_messages per entry and rank in a source, the rest
  // share one slot, so memory and the correlator's work stay bounded.
  if (m_options.catalog != nullptr && !m_options.catalog->at(ev.signature).headline.empty()) {
    gpu = util::message_template(ev.line.substr(std::min(ev.match_pos, ev.line.size())));
    auto& seen = m_messages[{ev.signature, ev.signal, rank}];
    if (seen.count(gpu) == 0) {
      if (seen.size() >= k_max_messages) {
        gpu = "\x01more messages";
      } else {
        seen.insert(gpu);
      }
    }
  }
  // A line from a named process (NCCL's host:pid) is kept per process, and a
  // line that states its communicator's size per size: every process's
  // init line for its largest communicator says who it is (the identity map).
  if (rank < 0 && ctx.pid) {
    gpu += "|pid " + std::to_string(ctx.pid->value);
    if (const auto n = capture_of(ev, "nranks")) {
      gpu += "|n ";
      gpu += util::clip(*n, 256);
    }
  }
  return Key{ev.signature, ev.signal, m_source, rank, std::move(gpu)};
}

bool Collector::logged_exception(const matcher::MatchEvent& ev) const {
  return lookback_of(ev) == catalog::Signal::Lookback::python_traceback &&
         context::logged_below_error(ev.line.substr(0, std::min(ev.match_pos, ev.line.size())));
}

std::optional<catalog::Signal::Lookback> Collector::lookback_of(const matcher::MatchEvent& ev) const {
  if (m_options.catalog == nullptr) {
    return std::nullopt;
  }
  return m_options.catalog->at(ev.signature).signals[ev.signal].lookback;
}

std::optional<std::string_view> Collector::capture_of(const matcher::MatchEvent& ev, std::string_view name) {
  if (!ev.declares(name)) {
    return std::nullopt;
  }
  for (const auto& c : ev.captures()) {
    if (c.name == name) {
      return c.value;
    }
  }
  return std::nullopt;
}

void Collector::count_into(const std::vector<std::size_t>& slot, const matcher::MatchEvent& ev) {
  auto& last = m_out.hits[slot.back()];
  last.count += 1;
  last.last_line_no = ev.line_no;
}

void Collector::read_above(const matcher::MatchEvent& ev, scan::Hit& hit) {
  const auto lookback = lookback_of(ev);
  if (!lookback) {
    return;
  }
  using Lookback = catalog::Signal::Lookback;
  switch (*lookback) {
  case Lookback::none:
    break;
  case Lookback::python_traceback:
    if (auto tb = m_above.ending_at(ev.chunk, ev.line_pos, ev.line_no)) {
      rank_from_header(*tb, hit);
      hit.traceback = std::make_shared<const context::Traceback>(std::move(*tb));
    }
    break;
  case Lookback::cxx_terminate:
    // Without the "terminate called" line above it, the type is unknown.
    hit.captures.emplace_back("type", m_above.thrown_type(ev.chunk, ev.line_pos).value_or("uncaught C++ exception"));
    break;
  }
}

void Collector::rank_from_header(const context::Traceback& tb, scan::Hit& hit) {
  if (hit.ctx.rank || hit.ctx.local_rank || tb.header_line.empty()) {
    return;
  }
  const auto header = context::parse_line(tb.header_line);
  if (header.rank) {
    hit.ctx.rank = context::Field<int>{header.rank->value, context::Origin::neighbour};
  } else if (header.local_rank) {
    hit.ctx.local_rank = context::Field<int>{header.local_rank->value, context::Origin::neighbour};
  }
  if (!hit.ctx.pid && header.pid && (header.rank || header.local_rank)) {
    hit.ctx.pid = context::Field<std::int64_t>{header.pid->value, context::Origin::neighbour};
  }
}

} // namespace denpex::scan::detail
