// Pass: causality. A cause that explains another turns it into collateral:
// the line's own words first ("caused by previous Xid 149"), then a line
// printed after its process ended joining what came before it
// (`joins_earlier`), then the catalog's `explains` relations (Xid 79 -> the
// CUDA errors on its node), then one failure reported by two layers (NCCL's
// WARN and PyTorch's exception for the same CUDA error). Never across
// failure episodes.
#include "passes.hpp"

#include <algorithm>
#include <array>

namespace denpex::correlate::detail {

namespace {

// Without comparable clocks, one file's line order is the clock, except that
// a detail printed right after its wrapper (NCCL's "Last error:" line, a few
// lines below the WARN it explains) still explains it.
constexpr std::uint64_t k_detail_lines = 10;

// Areas whose faults stay on their own node: a GPU or driver fault explains
// what happens on that node only, while a network fault (a link down) also
// explains what its peers report.
constexpr std::array<std::string_view, 2> k_node_local_areas{"hardware", "driver"};

// b becomes a's collateral.
void absorb(Work& a, Work& b) {
  Group g;
  g.signature = b.inc.signature;
  g.count = b.inc.count;
  g.ranks = b.inc.ranks;
  g.hosts = b.inc.hosts;
  g.first = b.inc.first;
  a.inc.collateral.push_back(std::move(g));
  b.absorbed = true;
}

// A line without a stamp of its own (a Python exception under the last
// logged step) took the nearest earlier one: it was printed at or after that
// time, so within one episode it may follow anything.

// b may follow a (or be concurrent within the skew window).
bool time_ok(const State& s, const Work& a, const Work& b) {
  if (comparable(a.first_time, b.first_time)) {
    return borrowed_stamp(b) || b.first_time->t + window(s, a.inc.hosts, b.inc.hosts) >= a.first_time->t;
  }
  if (a.inc.first.source == b.inc.first.source) {
    return b.inc.first.line_no >= a.inc.first.line_no || a.inc.first.line_no - b.inc.first.line_no <= k_detail_lines;
  }
  return true;
}

bool same_gpu(const Work& a, const Work& b) { return a.inc.pci.empty() || b.inc.pci.empty() || a.inc.pci == b.inc.pci; }

bool same_episode(const Work& a, const Work& b) {
  return !a.inc.episode || !b.inc.episode || *a.inc.episode == *b.inc.episode;
}

bool same_node(const State& s, const Work& a, const Work& b) {
  const auto& area = s.cat.at(a.inc.signature).area;
  if (std::find(k_node_local_areas.begin(), k_node_local_areas.end(), area) == k_node_local_areas.end()) {
    return true;
  }
  if (a.inc.hosts.empty() || b.inc.hosts.empty()) {
    return true;
  }
  return std::any_of(b.inc.hosts.begin(), b.inc.hosts.end(), [&](const std::string& h) { return a.inc.hosts.count(h) != 0; });
}

// One failure reported by two layers: same ranks, within the skew window,
// and `a` is the more specific entry.
bool same_event(const State& s, const Work& a, const Work& b) {
  if (!comparable(a.first_time, b.first_time) || a.inc.ranks.empty() || b.inc.ranks.empty()) {
    return false;
  }
  const auto dt = b.first_time->t - a.first_time->t;
  const auto w = window(s, a.inc.hosts, b.inc.hosts);
  if (dt < -w || dt > w) {
    return false;
  }
  if (s.cat.at(a.inc.signature).priority <= s.cat.at(b.inc.signature).priority || !same_gpu(a, b)) {
    return false;
  }
  return std::includes(a.inc.ranks.begin(), a.inc.ranks.end(), b.inc.ranks.begin(), b.inc.ranks.end());
}

// The line names its cause: "caused by previous Xid 149".
bool absorb_named(State& s, Work& b) {
  if (b.inc.caused_by.empty()) {
    return false;
  }
  const auto id = xid_entry(s.cat, b.inc.caused_by);
  if (!id) {
    return false;
  }
  for (auto& a : s.work) {
    if (&a != &b && !a.absorbed && a.inc.signature == *id && same_gpu(a, b)) {
      absorb(a, b);
      return true;
    }
  }
  return false;
}

// a's first line came before b's: by time when both have comparable stamps
// that differ, else by line order in one file (a line that borrowed the
// stamp above it shares it with the lines it follows); equal stamps in two
// files are concurrent, which counts as before.
bool precedes(const Work& a, const Work& b) {
  const bool same_file = a.inc.first.source == b.inc.first.source;
  if (comparable(a.first_time, b.first_time) && (a.first_time->t != b.first_time->t || !same_file)) {
    return a.first_time->t <= b.first_time->t;
  }
  return same_file && a.inc.first.line_no < b.inc.first.line_no;
}

// A line printed after a process ended (`joins_earlier`: srun's "task N:
// Exited with exit code C") is collateral of the earliest incident before it
// in its episode that still stands (not recovered from, not another such
// line). It stands alone only when nothing precedes it: then it names the
// first task that failed.
bool absorb_into_earlier(State& s, Work& b) {
  if (!s.cat.at(b.inc.signature).joins_earlier) {
    return false;
  }
  Work* first = nullptr;
  for (auto& a : s.work) {
    if (&a == &b || a.absorbed || a.inc.recovered || s.cat.at(a.inc.signature).joins_earlier ||
        !same_episode(a, b) || !precedes(a, b)) {
      continue;
    }
    if (first == nullptr || precedes(a, *first)) {
      first = &a;
    }
  }
  if (first == nullptr) {
    return false;
  }
  absorb(*first, b);
  return true;
}

} // namespace

void pass_causality(State& s) {
  for (auto& b : s.work) {
    if (b.absorbed || absorb_named(s, b) || absorb_into_earlier(s, b)) {
      continue;
    }
    for (auto& a : s.work) {
      if (&a == &b || a.absorbed || !same_episode(a, b)) {
        continue;
      }
      const bool explained = s.cat.explains(a.inc.signature, b.inc.signature) && time_ok(s, a, b) && same_gpu(a, b) &&
                             same_node(s, a, b);
      if (explained || same_event(s, a, b)) {
        absorb(a, b);
        break;
      }
    }
  }
}

} // namespace denpex::correlate::detail
