// denpex::correlate — the rules the fold pass decides by, exported for the
// findings writer (findings/findings.hpp), whose compaction must leave every
// decision they make unchanged. One definition each: the pass and the writer
// call the same code, and tests/unit/test_cluster_merge.cpp checks the
// result end to end (a merge decides as one run over all the logs would).
#pragma once

#include <cstdint>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/scan/hit.hpp>

namespace denpex::correlate {

// Which entries a set of hits raises. An entry is raised by a hit of one of
// its anchor signals when it requires no other evidence, or when some hit of
// a signal it requires (`requires_any`) was seen too: nccl.nvls.cuda-700
// needs NVLS in use. Hits may come in any order.
class RaisedEntries {
public:
  explicit RaisedEntries(const catalog::Catalog& cat) : m_cat(cat), m_anchor(cat.size()), m_required(cat.size()) {}

  void add(const scan::Hit& h);

  [[nodiscard]] bool raised(std::uint32_t entry) const {
    return m_anchor[entry] && (m_cat.at(entry).requires_any.empty() || m_required[entry]);
  }

private:
  const catalog::Catalog& m_cat;
  std::vector<bool> m_anchor;   // an anchor signal hit
  std::vector<bool> m_required; // a required signal hit
};

// What is on one line, for the rule that settles it: generic evidence (an
// entry with a headline: an exception's own words) on a line where every
// cause is generic and a raised symptom also matched is that symptom's
// collateral, never a cause (a what() under a watchdog's own report).
struct LineCauses {
  int causes = 0;           // cause hits counted on the line
  bool only_generic = true; // ... every one of them generic evidence
  int raised_symptoms = 0;  // hits of raised symptom entries on it

  void add_cause(const catalog::Signature& entry) {
    ++causes;
    only_generic = only_generic && !entry.headline.empty();
  }
  void add_raised_symptom() { ++raised_symptoms; }

  // The line's causes, all generic, are overruled by a symptom beside them.
  [[nodiscard]] bool overruled() const { return causes > 0 && only_generic && raised_symptoms > 0; }
};

} // namespace denpex::correlate
