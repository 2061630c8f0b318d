// The fold pass's rules, shared with the findings writer (rules.hpp).
#include <denpex/correlate/rules.hpp>

#include <algorithm>

namespace denpex::correlate {

void RaisedEntries::add(const scan::Hit& h) {
  const auto& sig = m_cat.at(h.signature);
  const auto& signal = sig.signals[h.signal];
  m_anchor[h.signature] = m_anchor[h.signature] || signal.anchor;
  if (std::find(sig.requires_any.begin(), sig.requires_any.end(), signal.id) != sig.requires_any.end()) {
    m_required[h.signature] = true;
  }
}

} // namespace denpex::correlate
