// Pass: missing facts. For each incident, the evidence that would confirm
// it and was not seen: every signal of its entry with an `if_missing` text
// that did not hit (signals without one are alternative wordings of the
// anchor, not corroboration), and an earlier Xid that a line names as its
// cause when the catalog has no entry for it.
#include "passes.hpp"

#include <algorithm>

namespace denpex::correlate::detail {

void pass_missing(State& s) {
  using Kind = MissingFact::Kind;
  for (auto& inc : s.d.incidents) {
    const auto& sig = s.cat.at(inc.signature);
    for (const auto& st : inc.signals) {
      if (st.count == 0 && !sig.signals[st.signal].if_missing.empty()) {
        MissingFact m;
        m.kind = Kind::signal;
        m.signal = st.signal;
        inc.missing.push_back(std::move(m));
      }
    }
    // An exception with no traceback above it: where it was raised would
    // sharpen it (the launcher kept only the last line, or stderr was cut).
    const bool reads_traceback = std::any_of(sig.signals.begin(), sig.signals.end(), [](const catalog::Signal& sl) {
      return sl.lookback == catalog::Signal::Lookback::python_traceback;
    });
    if (reads_traceback && !inc.traceback) {
      inc.missing.push_back(MissingFact{Kind::traceback});
    }
    if (inc.decision && inc.decision->clock_risk) {
      const auto& r = *inc.decision->clock_risk;
      MissingFact m;
      m.kind = Kind::clock_offset;
      m.host = inc.hosts.empty() ? std::string("this node") : *inc.hosts.begin();
      m.other_host = r.host;
      m.other_signature = r.signature;
      m.delta_us = r.delta_us;
      inc.missing.push_back(std::move(m));
    }
    if (!inc.caused_by.empty() && !xid_entry(s.cat, inc.caused_by)) {
      MissingFact m;
      m.kind = Kind::named_xid;
      m.xid = inc.caused_by;
      inc.missing.push_back(std::move(m));
    }
  }
}

} // namespace denpex::correlate::detail
