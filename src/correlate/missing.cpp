// Pass: missing facts. For each incident, the evidence that would confirm
// it and was not seen: every signal of its entry with an `if_missing` text
// that did not hit (signals without one are alternative wordings of the
// anchor, not corroboration), and an earlier Xid that a line names as its
// cause when the catalog has no entry for it.
#include "passes.hpp"

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
    if (!inc.caused_by.empty() && !xid_entry(s.cat, inc.caused_by)) {
      inc.missing.push_back(fmt::format("the line names an earlier Xid {} as its cause; look for it in the node's "
                                        "kernel log (`dmesg -T | grep Xid`)",
                                        inc.caused_by));
    }
  }
}

} // namespace denpex::correlate::detail
