// Pass: choose. The initiating failure is chosen inside the terminal
// episode, in tiers:
//   1. the episode: causes in the terminal episode on their clock (if it
//      holds none, the latest earlier episode that does, said so);
//   2. recovery: a cause followed by training progress does not initiate
//      while another one exists;
//   3. fatality: a warning-level cause (a non-fatal or corrected event) does
//      not initiate when an error-level one follows it in the same episode;
//   4. specificity: a catalogued cause beats generic evidence (an exception
//      named only by its own words, an entry with a headline), which beats
//      wrappers (priority <= k_generic_priority);
//   5. order: the earliest by time, concurrent ones by priority; without
//      comparable clocks, line order in one file, else priority.
// The result is a Decision (a Rule and the facts it used), worded by
// describe.hpp.
#include "passes.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace denpex::correlate::detail {

namespace {

using catalog::Severity;

struct Choice {
  std::vector<std::size_t> cand;
  Decision decision;
};

bool in_terminal(const State& s, const Incident& inc) {
  return !inc.episode || s.d.episodes[*inc.episode].terminal;
}

// Tier 1: the terminal episode's causes, else the latest episode with one.
std::vector<std::size_t> episode_pool(const State& s, Decision& dec) {
  const auto& incs = s.d.incidents;
  std::vector<std::size_t> pool;
  for (std::size_t i = 0; i < incs.size(); ++i) {
    if (in_terminal(s, incs[i])) {
      pool.push_back(i);
    }
  }
  if (pool.empty()) {
    dec.fell_back = true;
    std::vector<std::size_t> latest; // per domain: the latest episode with an incident
    for (const auto& inc : incs) {
      const auto dom = s.d.episodes[*inc.episode].domain;
      auto it = std::find_if(latest.begin(), latest.end(), [&](std::size_t e) { return s.d.episodes[e].domain == dom; });
      if (it == latest.end()) {
        latest.push_back(*inc.episode);
      } else {
        *it = std::max(*it, *inc.episode);
      }
    }
    for (std::size_t i = 0; i < incs.size(); ++i) {
      if (std::find(latest.begin(), latest.end(), *incs[i].episode) != latest.end()) {
        pool.push_back(i);
      }
    }
  }
  for (std::size_t i = 0; i < incs.size(); ++i) {
    if (std::find(pool.begin(), pool.end(), i) == pool.end()) {
      ++(incs[i].recovered ? dec.recovered_skipped : dec.earlier_skipped);
    }
  }
  return pool;
}

// Keeps the members of `pool` that pass `keep`, unless none would.
template <typename Keep> std::size_t narrow(std::vector<std::size_t>& pool, Keep keep) {
  std::vector<std::size_t> kept;
  std::copy_if(pool.begin(), pool.end(), std::back_inserter(kept), keep);
  if (kept.empty()) {
    return 0;
  }
  const auto dropped = pool.size() - kept.size();
  pool = std::move(kept);
  return dropped;
}

// Tier 3: a warning-level cause is not why the run died when an error-level
// one follows it on the same clock.
bool superseded_nonfatal(const State& s, const std::vector<std::size_t>& pool, std::size_t i) {
  if (s.cat.at(s.d.incidents[i].signature).severity > Severity::warning) {
    return false;
  }
  const auto& a = s.d.incidents[i].first;
  return std::any_of(pool.begin(), pool.end(), [&](std::size_t j) {
    if (s.cat.at(s.d.incidents[j].signature).severity < Severity::error) {
      return false;
    }
    if (comparable(s.times[i], s.times[j])) {
      return s.times[j]->t >= s.times[i]->t;
    }
    // Without comparable stamps, line order in one file.
    const auto& b = s.d.incidents[j].first;
    return a.source == b.source && b.line_no > a.line_no;
  });
}

Choice candidates(const State& s) {
  Choice c;
  auto pool = episode_pool(s, c.decision);
  c.decision.recovered_skipped += narrow(pool, [&](std::size_t i) { return !s.d.incidents[i].recovered; });
  const auto snapshot = pool;
  c.decision.nonfatal_skipped = narrow(pool, [&](std::size_t i) { return !superseded_nonfatal(s, snapshot, i); });
  // Tier 4: a catalogued cause, else generic evidence (an exception named
  // only by its own words), else a wrapper.
  const auto& incs = s.d.incidents;
  c.decision.generic_skipped = narrow(pool, [&](std::size_t i) {
    return s.cat.at(incs[i].signature).priority > k_generic_priority && s.cat.at(incs[i].signature).headline.empty();
  });
  if (c.decision.generic_skipped == 0) {
    c.decision.generic_skipped =
        narrow(pool, [&](std::size_t i) { return s.cat.at(incs[i].signature).priority > k_generic_priority; });
  }
  c.cand = std::move(pool);
  return c;
}

// The other node's candidate closest in time to the chosen one, when it is
// within the cross-node window: a clock difference inside the stated
// tolerance could then reverse their order.
std::optional<ClockRisk> clock_risk(const State& s, const std::vector<std::size_t>& cand, std::size_t best) {
  const auto& incs = s.d.incidents;
  const auto& times = s.times;
  std::optional<ClockRisk> risk;
  for (auto i : cand) {
    const auto w = window(s, incs[best].hosts, incs[i].hosts);
    const bool other_node = w > s.options.skew_us;
    if (i == best || !other_node || !comparable(times[i], times[best]) || times[i]->domain != 0) {
      continue;
    }
    const auto delta = times[i]->t - times[best]->t;
    if (std::abs(delta) > w || (risk && std::abs(risk->delta_us) <= std::abs(delta))) {
      continue;
    }
    risk = ClockRisk{incs[i].signature, *incs[i].hosts.begin(), delta, incs[i].first};
  }
  return risk;
}

// Tier 5: order among the remaining candidates.
std::size_t order(const State& s, const std::vector<std::size_t>& cand, Decision& dec) {
  const auto& incs = s.d.incidents;
  const auto& times = s.times;
  auto prio = [&](std::size_t i) { return s.cat.at(incs[i].signature).priority; };
  auto pos_less = [&](std::size_t a, std::size_t b) {
    return std::tie(incs[a].first.source, incs[a].first.line_no) < std::tie(incs[b].first.source, incs[b].first.line_no);
  };
  std::size_t best = cand[0];
  if (cand.size() == 1) {
    dec.rule = Rule::only_cause;
  } else if (std::all_of(cand.begin(), cand.end(), [&](std::size_t i) { return comparable(times[i], times[cand[0]]); })) {
    for (auto i : cand) {
      if (times[i]->t < times[best]->t) {
        best = i;
      }
    }
    dec.rule = Rule::earliest_by_time;
    const auto earliest = best;
    for (auto i : cand) {
      if (i != earliest && times[i]->t - times[earliest]->t <= window(s, incs[earliest].hosts, incs[i].hosts)) {
        dec.rule = Rule::concurrent_most_specific;
        if (prio(i) > prio(best) || (prio(i) == prio(best) && pos_less(i, best))) {
          best = i;
        }
      }
    }
  } else if (std::all_of(cand.begin(), cand.end(),
                         [&](std::size_t i) { return incs[i].first.source == incs[cand[0]].first.source; })) {
    for (auto i : cand) {
      if (pos_less(i, best)) {
        best = i;
      }
    }
    dec.rule = Rule::earliest_in_file;
  } else {
    for (auto i : cand) {
      if (prio(i) > prio(best) || (prio(i) == prio(best) && pos_less(i, best))) {
        best = i;
      }
    }
    dec.rule = Rule::priority_across_clocks;
  }
  if (std::all_of(cand.begin(), cand.end(), [&](std::size_t i) { return prio(i) <= k_generic_priority; })) {
    dec.rule = Rule::only_generic;
  }
  dec.priority = prio(best);
  dec.skew_us = s.options.skew_us;
  dec.node_skew_us = s.options.node_skew_us;
  dec.clock_risk = clock_risk(s, cand, best);
  return best;
}

Confidence confidence_of(const State& s, const Incident& init, const Decision& dec) {
  switch (dec.rule) {
  case Rule::only_generic:
  case Rule::upstream_symptom:
    return Confidence::low;
  case Rule::concurrent_most_specific:
  case Rule::earliest_in_file:
  case Rule::priority_across_clocks:
    return Confidence::medium;
  case Rule::only_cause:
  case Rule::earliest_by_time:
    break;
  }
  for (const auto& st : init.signals) {
    if (st.count == 0 && !s.cat.at(init.signature).signals[st.signal].if_missing.empty()) {
      return Confidence::medium; // corroboration is missing
    }
  }
  // Generic evidence (an exception no entry names) is the log's own words,
  // not a diagnosis: never more than medium.
  if (!init.inferred_xid.empty() || dec.fell_back || !init.headline.empty()) {
    return Confidence::medium;
  }
  return Confidence::high;
}

// Initiating first, then by time, else input position.
void sort_incidents(State& s, std::size_t best) {
  auto& incs = s.d.incidents;
  std::vector<std::size_t> idx(incs.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    if (a == best || b == best) {
      return a == best && b != best;
    }
    if (comparable(s.times[a], s.times[b]) && s.times[a]->t != s.times[b]->t) {
      return s.times[a]->t < s.times[b]->t;
    }
    return std::tie(incs[a].first.source, incs[a].first.line_no) < std::tie(incs[b].first.source, incs[b].first.line_no);
  });
  std::vector<Incident> sorted;
  std::vector<Time> sorted_times;
  for (auto i : idx) {
    sorted.push_back(std::move(incs[i]));
    sorted_times.push_back(s.times[i]);
  }
  incs = std::move(sorted);
  s.times = std::move(sorted_times);
}

} // namespace

void pass_choose(State& s) {
  // Episodes count the incidents that survived causality.
  for (auto& w : s.work) {
    if (!w.absorbed) {
      if (w.inc.episode) {
        ++s.d.episodes[*w.inc.episode].incidents;
      }
      s.d.incidents.push_back(std::move(w.inc));
      s.times.push_back(w.first_time);
    }
  }
  s.work.clear();
  if (s.d.incidents.empty()) {
    return;
  }
  auto choice = candidates(s);
  const auto best = order(s, choice.cand, choice.decision);
  if (s.d.incidents[best].recovered) {
    // Training went on past every cause: nothing here ended the run.
    sort_incidents(s, best);
    return;
  }
  auto& init = s.d.incidents[best];
  choice.decision.candidates = choice.cand.size();
  choice.decision.episode = init.episode;
  init.initiating = true;
  init.confidence = confidence_of(s, init, choice.decision);
  init.decision = choice.decision;
  sort_incidents(s, best);
}

} // namespace denpex::correlate::detail
