// Pass: missing facts. For each incident, the evidence that would confirm
// it and was not seen: every signal of its entry with an `if_missing` text
// that did not hit (signals without one are alternative wordings of the
// anchor, not corroboration), and an earlier Xid that a line names as its
// cause when the catalog has no entry for it.
#include "passes.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace denpex::correlate::detail {

void pass_missing(State& s) {
  for (auto& inc : s.d.incidents) {
    const auto& sig = s.cat.at(inc.signature);
    for (const auto& st : inc.signals) {
      const auto& signal = sig.signals[st.signal];
      if (st.count == 0 && !signal.if_missing.empty()) {
        inc.missing.push_back(fmt::format("{} ({}): {}", signal.id,
                                          signal.description.empty() ? "not seen" : signal.description,
                                          signal.if_missing));
      }
    }
    // An exception with no traceback above it: where it was raised would
    // sharpen it (the launcher kept only the last line, or stderr was cut).
    const bool reads_traceback = std::any_of(sig.signals.begin(), sig.signals.end(), [](const catalog::Signal& sl) {
      return sl.lookback == catalog::Signal::Lookback::python_traceback;
    });
    if (reads_traceback && !inc.traceback) {
      inc.missing.push_back("the traceback above the exception (the frames that say where it was raised): the "
                            "failing rank's whole stderr, or its torchelastic error file");
    }
    if (inc.decision && inc.decision->clock_risk) {
      const auto& r = *inc.decision->clock_risk;
      const auto here = inc.hosts.empty() ? std::string("this node") : *inc.hosts.begin();
      const auto delta = std::abs(static_cast<double>(r.delta_us)) / 1e6;
      const auto& other = s.cat.at(r.signature).id;
      inc.missing.push_back(
          r.delta_us >= 0
              ? fmt::format("the clock offset between {} and {} when the job failed (`chronyc tracking` or the PTP "
                            "daemon's log on each): if {}'s clock ran ahead of {}'s by more than {:.1f} s, its {} "
                            "came first",
                            here, r.host, r.host, here, delta, other)
              : fmt::format("the clock offset between {} and {} when the job failed (`chronyc tracking` or the PTP "
                            "daemon's log on each): unless {}'s clock ran behind {}'s by more than {:.1f} s, its {} "
                            "came first and only specificity chose this one",
                            here, r.host, r.host, here, delta, other));
    }
    if (!inc.caused_by.empty() && !xid_entry(s.cat, inc.caused_by)) {
      inc.missing.push_back(fmt::format("the line names an earlier Xid {} as its cause; look for it in the node's "
                                        "kernel log (`dmesg -T | grep Xid`)",
                                        inc.caused_by));
    }
  }
}

} // namespace denpex::correlate::detail
