// Pass: fallback. A failed run always gets a headline. With no cause at
// all, the most upstream error-level report heads the diagnosis: the
// earliest (by time, else by input position) of the non-generic symptoms,
// generic wrappers only when nothing else was reported. It is marked as what
// it is (Rule::upstream_symptom, low confidence), and its missing evidence
// names the causes that usually produce it (the catalog's `explains`
// relations), so the reader knows what to look for and where.
#include "passes.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace denpex::correlate::detail {

namespace {

using catalog::Severity;

// At most this many likely causes are named.
constexpr std::size_t k_likely_causes = 5;

// Whether group a was reported before group b.
bool before(const Group& a, const Group& b) {
  const auto ta = stamp_of(a.first);
  const auto tb = stamp_of(b.first);
  if (comparable(ta, tb) && ta->t != tb->t) {
    return ta->t < tb->t;
  }
  return std::tie(a.first.source, a.first.line_no) < std::tie(b.first.source, b.first.line_no);
}

// The causes whose entries explain `symptom`, most specific first.
std::string likely_causes(const catalog::Catalog& cat, std::uint32_t symptom) {
  std::vector<std::size_t> causes;
  for (std::size_t i = 0; i < cat.size(); ++i) {
    if (cat.at(i).role == catalog::Role::cause && cat.explains(i, symptom)) {
      causes.push_back(i);
    }
  }
  if (causes.empty()) {
    return {};
  }
  if (causes.size() > k_likely_causes) {
    // A report that many failures produce (a collective timeout): naming five
    // of them would only mislead.
    return fmt::format("any of {} catalogued causes (`denpex explain {}` lists them)", causes.size(),
                       cat.at(symptom).id);
  }
  std::stable_sort(causes.begin(), causes.end(),
                   [&](std::size_t a, std::size_t b) { return cat.at(a).priority > cat.at(b).priority; });
  std::string out;
  for (std::size_t k = 0; k < causes.size(); ++k) {
    out += fmt::format("{}{} ({})", k == 0 ? "" : "; ", cat.at(causes[k]).title, cat.at(causes[k]).id);
  }
  return out;
}

} // namespace

void pass_fallback(State& s) {
  auto& d = s.d;
  if (!d.incidents.empty()) {
    return;
  }
  // Reports training went on past (a bootstrap retry, a stray WARN) cannot
  // be what ended the run: the head is the earliest report nothing followed.
  // When training went on past every one of them, the earliest still heads
  // the report, marked recovered: the run did not die of these.
  std::vector<std::optional<ProgressRef>> went_on(d.unexplained.size());
  bool all_went_on = true;
  for (std::size_t i = 0; i < d.unexplained.size(); ++i) {
    if (s.cat.at(d.unexplained[i].signature).severity >= Severity::error) {
      went_on[i] = progress_after(s, d.unexplained[i].first, stamp_of(d.unexplained[i].first));
      all_went_on = all_went_on && went_on[i].has_value();
    }
  }
  std::optional<std::size_t> head;
  for (std::size_t i = 0; i < d.unexplained.size(); ++i) {
    const auto& sig = s.cat.at(d.unexplained[i].signature);
    if (sig.severity < Severity::error || (went_on[i] && !all_went_on)) {
      continue;
    }
    if (!head) {
      head = i;
      continue;
    }
    const auto& best = s.cat.at(d.unexplained[*head].signature);
    if (best.generic != sig.generic ? best.generic : before(d.unexplained[i], d.unexplained[*head])) {
      head = i;
    }
  }
  if (!head) {
    return;
  }
  const Group g = d.unexplained[*head];
  const auto recovered = went_on[*head];
  d.unexplained.erase(d.unexplained.begin() + static_cast<std::ptrdiff_t>(*head));

  Incident inc;
  inc.signature = g.signature;
  inc.first = g.first;
  inc.count = g.count;
  inc.ranks = g.ranks;
  inc.hosts = g.hosts;
  const auto& sig = s.cat.at(g.signature);
  for (std::uint32_t k = 0; k < sig.signals.size(); ++k) {
    inc.signals.push_back(SignalStatus{k, 0, std::nullopt});
  }
  for (const auto& r : s.records) {
    if (r.hit->signature == g.signature && !r.folded) {
      auto& st = inc.signals[r.hit->signal];
      st.count += r.hit->count;
      if (!st.first) {
        st.first = evidence_of(r);
      }
    }
  }
  inc.initiating = true;
  inc.recovered = recovered;
  inc.confidence = Confidence::low;
  Decision dec;
  dec.rule = Rule::upstream_symptom;
  dec.candidates = 1;
  dec.priority = sig.priority;
  dec.skew_us = s.options.skew_us;
  dec.node_skew_us = s.options.node_skew_us;
  inc.decision = dec;
  MissingFact m;
  m.kind = MissingFact::Kind::cause_itself;
  m.causes = likely_causes(s.cat, g.signature);
  inc.missing.push_back(std::move(m));
  s.times.push_back(stamp_of(inc.first)); // parallel to the incidents (Shape::chosen)
  d.incidents.push_back(std::move(inc));
}

} // namespace denpex::correlate::detail
