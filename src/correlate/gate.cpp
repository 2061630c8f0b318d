// Pass: gate. What fails `denpex diagnose --fail-on LEVEL` (exit 1), decided
// once here and carried as data (Incident::counts_against_gate and
// gate_severity, Diagnosis::gate), so the exit status and GitHub's
// annotation levels read one rule and printers decide nothing (issue 33).
//
//   - What the run went on past does not count: a generic exception that
//     training progressed after, or a run of downstream reports only whose
//     training went on past every one of them (the fallback pass marks its
//     head recovered). A catalog cause the run recovered from still counts:
//     an ECC error or an Xid is worth failing a job's epilogue for.
//   - An incident is as severe as the worst report it explains: a
//     warning-level cause (an IB port error) that a rank's watchdog timeout
//     followed ended the job.
//   - Reports no incident explains count with their own severity.
#include "passes.hpp"

#include <algorithm>

namespace denpex::correlate::detail {

namespace {

// Only downstream reports, and training went on past every one of them.
bool recovered_symptoms_only(const Diagnosis& d) {
  return !d.incidents.empty() && d.incidents.front().decision &&
         d.incidents.front().decision->rule == Rule::upstream_symptom && d.incidents.front().recovered;
}

} // namespace

void pass_gate(State& s) {
  auto& d = s.d;
  const bool nothing_counts = recovered_symptoms_only(d);
  auto raise = [&](catalog::Severity level) { d.gate = d.gate ? std::max(*d.gate, level) : level; };
  for (auto& inc : d.incidents) {
    const auto& sig = s.cat.at(inc.signature);
    inc.gate_severity = sig.severity;
    for (const auto& g : inc.collateral) {
      inc.gate_severity = std::max(inc.gate_severity, s.cat.at(g.signature).severity);
    }
    inc.counts_against_gate = !nothing_counts && !(inc.recovered && !sig.headline.empty());
    if (inc.counts_against_gate) {
      raise(inc.gate_severity);
    }
  }
  if (nothing_counts) {
    return;
  }
  for (const auto& g : d.unexplained) {
    raise(s.cat.at(g.signature).severity);
  }
}

} // namespace denpex::correlate::detail
