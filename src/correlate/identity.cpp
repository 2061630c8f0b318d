// Pass: identity. Who printed each record: rank, host and GPU from the
// line's context (launcher prefixes, NCCL's host:pid, file names), else from
// the entry's own named captures.
//
// Cross-source identity (pid and bus id to rank through NCCL's init lines)
// will resolve here too (issue 15).
#include "passes.hpp"

#include <cstdlib>

namespace denpex::correlate::detail {

void pass_identity(State& s) {
  for (auto& r : s.records) {
    const Hit& h = *r.hit;
    if (h.ctx.rank) {
      r.rank = h.ctx.rank->value;
    } else if (auto v = capture(h, "rank"); !v.empty()) {
      r.rank = std::atoi(v.c_str());
    }
    r.host = h.ctx.host ? h.ctx.host->value : capture(h, "host");
    r.pci = h.ctx.pci ? h.ctx.pci->value : context::normalize_pci(capture(h, "pci"));
  }
}

} // namespace denpex::correlate::detail
