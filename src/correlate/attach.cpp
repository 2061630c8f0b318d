// Pass: attach. Symptoms and context join the incidents chosen so far.
//  - A context entry joins the first incident it `refines`.
//  - A symptom joins the most recent incident that started before it
//    (within the skew window, widened by the cross-node clock tolerance
//    when they come from different nodes), explains it (or any incident, for a generic
//    wrapper such as ChildFailedError) and is on the same GPU when both name
//    one. Without comparable clocks it joins the initiating incident if that
//    one qualifies. Symptoms no incident explains are listed as unexplained.
// "Most recent" rather than "earliest": a watchdog timeout fires a timeout
// after its collective started, so when two causes precede it, the later one
// is what it follows.
#include "passes.hpp"

#include <algorithm>

namespace denpex::correlate::detail {

namespace {

using catalog::Role;

// A report this many lines above an incident's first line in the same file
// can still belong to it (the line before an exception's message).
constexpr std::uint64_t k_detail_lines = 10;

std::optional<std::size_t> symptom_target(const State& s, const Record& r) {
  const auto& sig = s.cat.at(r.hit->signature);
  const auto& incs = s.d.incidents;
  std::optional<std::size_t> target;
  for (std::size_t i = 0; i < incs.size(); ++i) {
    const bool explains = sig.generic || s.cat.explains(incs[i].signature, r.hit->signature);
    const bool gpu_ok = r.pci.empty() || incs[i].pci.empty() || r.pci == incs[i].pci;
    if (!explains || !gpu_ok) {
      continue;
    }
    const bool timed = comparable(s.times[i], r.stamp);
    if (timed && s.times[i]->t > r.stamp->t + window(s, incs[i].hosts, r.host)) {
      // The incident started after this report, unless the report has no
      // stamp of its own and sits right above the incident's line (the
      // "terminate called" line above a what()): it was printed at or after
      // its borrowed time.
      const bool just_above = borrowed_stamp(*r.hit) && incs[i].first.source == r.hit->source &&
                              r.hit->line_no + k_detail_lines >= incs[i].first.line_no;
      if (!just_above) {
        continue;
      }
    }
    if (!target) {
      target = i;
      continue;
    }
    const auto t = *target;
    const bool both_timed = timed && comparable(s.times[t], s.times[i]);
    if (both_timed && s.times[i]->t > s.times[t]->t) {
      target = i;
    } else if (!both_timed && incs[i].initiating) {
      target = i;
    }
  }
  return target;
}

} // namespace

void pass_attach(State& s) {
  auto& incs = s.d.incidents;
  for (const auto& r : s.records) {
    const auto role = s.cat.at(r.hit->signature).role;
    if (role == Role::cause || r.folded) {
      continue; // causes are incidents; a folded line counts in its cause
    }
    if (role == Role::context) {
      auto it = std::find_if(incs.begin(), incs.end(),
                             [&](const Incident& inc) { return s.cat.refines(r.hit->signature, inc.signature); });
      if (it != incs.end()) {
        add_to_group(it->context, r);
      }
      continue;
    }
    if (const auto target = symptom_target(s, r)) {
      add_to_group(incs[*target].collateral, r);
    } else {
      add_to_group(s.d.unexplained, r);
    }
  }
  // Stable: groups of one count keep the order they were first seen in, on
  // every standard library (the WebAssembly core's libc++ breaks ties as
  // libstdc++ does not).
  auto by_count = [](const Group& a, const Group& b) { return a.count > b.count; };
  for (auto& inc : incs) {
    std::stable_sort(inc.collateral.begin(), inc.collateral.end(), by_count);
  }
  std::stable_sort(s.d.unexplained.begin(), s.d.unexplained.end(), by_count);
}

} // namespace denpex::correlate::detail
