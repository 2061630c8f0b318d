// correlate(): the list of passes (passes.hpp says where each rule lives),
// the helpers they share, and the starting points for runs where nothing
// was found.
#include <denpex/correlate/correlate.hpp>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include <denpex/util/strings.hpp>

#include "passes.hpp"

namespace denpex::correlate {

namespace detail {

std::string capture(const scan::Hit& h, std::string_view name) {
  for (const auto& [k, v] : h.captures) {
    if (k == name) {
      return v;
    }
  }
  return {};
}

Time stamp_of(const Evidence& e) {
  if (e.time_us) {
    return Stamp{*e.time_us, 0};
  }
  if (e.ctx.time.kind == context::ClockKind::monotonic) {
    return Stamp{e.ctx.time.mono_micros, e.source + 1};
  }
  return std::nullopt;
}

bool earlier_than(const Record& r, const Evidence& e) {
  const Time te = stamp_of(e);
  if (comparable(r.stamp, te) && r.stamp->t != te->t) {
    return r.stamp->t < te->t;
  }
  return std::tie(r.hit->source, r.hit->line_no) < std::tie(e.source, e.line_no);
}

Evidence evidence_of(const Record& r) {
  Evidence e;
  e.source = r.hit->source;
  e.line_no = r.hit->line_no;
  e.text = r.hit->text;
  e.ctx = r.hit->ctx;
  e.time_us = r.wall_us;
  e.signal = r.hit->signal;
  if (r.rank && !e.ctx.rank) {
    e.ctx.rank = context::Field<int>{*r.rank, r.rank_origin};
  }
  if (!r.host.empty() && !e.ctx.host) {
    e.ctx.host = context::Field<std::string>{r.host, r.host_origin};
  }
  if (!r.pci.empty() && !e.ctx.pci) {
    e.ctx.pci = context::Field<std::string>{r.pci, context::Origin::capture};
  } else if (!r.shown_pci.empty() && !e.ctx.pci) {
    e.ctx.pci = context::Field<std::string>{r.shown_pci, context::Origin::identity};
  }
  return e;
}

void insert_ranks(std::set<int>& ranks, const Record& r) {
  if (r.rank) {
    ranks.insert(*r.rank);
  }
  ranks.insert(r.hit->also_ranks.begin(), r.hit->also_ranks.end());
}

void add_to_group(std::vector<Group>& groups, const Record& r) {
  auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.signature == r.hit->signature; });
  if (it == groups.end()) {
    Group g;
    g.signature = r.hit->signature;
    g.first = evidence_of(r);
    groups.push_back(std::move(g));
    it = groups.end() - 1;
  } else if (earlier_than(r, it->first)) {
    it->first = evidence_of(r);
  }
  it->count += r.hit->count;
  insert_ranks(it->ranks, r);
  if (!r.host.empty()) {
    it->hosts.insert(r.host);
  }
}

std::optional<std::size_t> xid_entry(const catalog::Catalog& cat, std::string_view n) {
  return cat.find(fmt::format("xid.{}", n));
}

std::int64_t window(const State& s, const std::set<std::string>& a, const std::set<std::string>& b) {
  const bool other_nodes = !a.empty() && !b.empty() &&
                           std::none_of(b.begin(), b.end(), [&](const std::string& h) { return a.count(h) != 0; });
  return s.options.skew_us + (other_nodes ? s.options.node_skew_us : 0);
}

std::int64_t window(const State& s, const std::set<std::string>& a, const std::string& b) {
  const bool other_node = !a.empty() && !b.empty() && a.count(b) == 0;
  return s.options.skew_us + (other_node ? s.options.node_skew_us : 0);
}

} // namespace detail

const std::string& Diagnosis::source_name(std::uint32_t id) const {
  static const std::string k_unknown = "?";
  return id < sources.size() ? sources[id].name : k_unknown;
}

const IdentityLink* Diagnosis::identity_of(const Evidence& e) const {
  if (!e.ctx.rank || e.ctx.rank->origin != context::Origin::identity) {
    return nullptr;
  }
  for (const auto& l : identities) {
    const bool same_host = e.ctx.host && e.ctx.host->value == l.host;
    const bool by_process = same_host && e.ctx.pid && l.pid && e.ctx.pid->value == *l.pid;
    const bool by_gpu = e.ctx.pci && !l.pci.empty() && e.ctx.pci->value == l.pci && (same_host || !e.ctx.host);
    if (l.rank == e.ctx.rank->value && (by_process || by_gpu)) {
      return &l;
    }
  }
  return nullptr;
}

std::string_view to_string(Confidence c) {
  switch (c) {
  case Confidence::low:
    return "low";
  case Confidence::medium:
    return "medium";
  case Confidence::high:
    return "high";
  }
  return "?";
}

std::string_view to_string(Rule r) {
  switch (r) {
  case Rule::only_cause:
    return "only-cause";
  case Rule::earliest_by_time:
    return "earliest-by-time";
  case Rule::concurrent_most_specific:
    return "concurrent-most-specific";
  case Rule::earliest_in_file:
    return "earliest-in-file";
  case Rule::priority_across_clocks:
    return "priority-across-clocks";
  case Rule::upstream_symptom:
    return "upstream-symptom";
  case Rule::only_generic:
    return "only-generic";
  }
  return "?";
}

std::string_view to_string(Episode::Start s) {
  switch (s) {
  case Episode::Start::first:
    return "first";
  case Episode::Start::progress:
    return "progress";
  case Episode::Start::quiet_gap:
    return "quiet-gap";
  }
  return "?";
}

std::string_view to_string(Inference::Kind k) {
  switch (k) {
  case Inference::Kind::collective_mismatch:
    return "collective-mismatch";
  case Inference::Kind::missing_partial:
    return "missing-ranks-partial";
  case Inference::Kind::missing_ranks:
    return "missing-ranks";
  case Inference::Kind::lagging_ranks:
    return "lagging-ranks";
  case Inference::Kind::all_same:
    return "all-same-collective";
  case Inference::Kind::desync_report:
    return "desync-report";
  case Inference::Kind::absent_ranks:
    return "absent-ranks";
  }
  return "?";
}

namespace detail {

void check_state(const State& s, Shape shape) {
  const auto& d = s.d;
  if (shape == Shape::working) {
    DENPEX_ASSERT(d.incidents.empty() && s.times.empty());
    return;
  }
  DENPEX_ASSERT(s.work.empty());
  DENPEX_ASSERT(s.times.size() == d.incidents.size());
  for (std::size_t i = 0; i < d.incidents.size(); ++i) {
    const auto& inc = d.incidents[i];
    DENPEX_ASSERT(!inc.initiating || i == 0);         // the initiating incident is the first
    DENPEX_ASSERT(inc.decision.has_value() == inc.initiating); // and only it carries a decision
    DENPEX_ASSERT(inc.signals.size() == s.cat.at(inc.signature).signals.size());
    DENPEX_ASSERT(!inc.episode || *inc.episode < d.episodes.size());
    DENPEX_ASSERT(!inc.decision || !inc.decision->episode || *inc.decision->episode < d.episodes.size());
  }
}

} // namespace detail

Diagnosis correlate(std::vector<scan::Hit> hits, std::vector<scan::SourceRef> sources, const catalog::Catalog& cat,
                    const CorrelateOptions& options, const std::vector<scan::ProgressMark>& progress,
                    const std::vector<scan::ErrorLine>& error_lines) {
  Diagnosis d;
  d.sources = std::move(sources);
  for (const auto& h : hits) {
    d.hits += h.count;
  }
  const auto marks = detail::marks_that_split(progress, hits, cat);
  detail::State s{cat, options, marks, d};
  using detail::Shape;
  auto pass = [&](auto&& run, Shape after) {
    run();
    detail::check_state(s, after);
  };
  pass([&] { detail::pass_clocks(s, hits); }, Shape::working);
  pass([&] { detail::pass_runs(s); }, Shape::working);
  pass([&] { detail::pass_identity(s); }, Shape::working);
  pass([&] { detail::pass_fold(s); }, Shape::working);
  pass([&] { detail::pass_episodes(s); }, Shape::working);
  pass([&] { detail::pass_causality(s); }, Shape::working);
  pass([&] { detail::pass_choose(s); }, Shape::chosen);
  pass([&] { detail::pass_attach(s); }, Shape::chosen);
  pass([&] { detail::pass_missing(s); }, Shape::chosen);
  pass([&] { detail::pass_symptoms_only(s); }, Shape::chosen);
  pass([&] { detail::pass_fallback(s); }, Shape::chosen);
  pass([&] { detail::pass_who(s); }, Shape::chosen);
  pass([&] { detail::pass_stack(s); }, Shape::chosen);
  pass([&] { detail::pass_gate(s); }, Shape::chosen);
  pass([&] { detail::pass_starting_points(s, hits, error_lines); }, Shape::chosen);
  // Kept for --format jsonl: a merge reads these back as its hits. A line
  // that named no host was --node's (pass_identity); the kept hit says so.
  if (!options.node.empty()) {
    for (auto& h : hits) {
      if (!h.ctx.host) {
        h.ctx.host = context::Field<std::string>{options.node, context::Origin::option};
      }
    }
  }
  s.records.clear();
  d.evidence = std::move(hits);
  d.progress = progress;
  return d;
}

} // namespace denpex::correlate
