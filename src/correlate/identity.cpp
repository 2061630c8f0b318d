// Pass: identity. Who printed each record: rank, host and GPU from the
// line's context (launcher prefixes, NCCL's host:pid, file names), else from
// the run's identity map, else from the entry's own named captures.
//
// The identity map is built from the records themselves, so lines read
// before the line that defines a mapping resolve too: a line that states its
// own rank among N and carries NCCL's host:pid prefix (NCCL's communicator
// init line) ties that process, and the GPU bus id it names, to a rank. Of a
// process's communicators the largest gives the global rank; the others are
// tensor- or pipeline-parallel subgroups whose "rank" is a position within
// the subgroup. One entry per process and per GPU, never per line.
#include "passes.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace denpex::correlate::detail {

namespace {

using ProcessKey = std::pair<std::string, std::int64_t>; // host, pid
using GpuKey = std::pair<std::string, std::string>;      // host, pci

// NCCL prints a bus id as the hex digits of "0000:91:00.0" run together
// ("91000"): domain, bus, device, one digit of function.
std::string pci_from_nccl_bus_id(std::string_view hex) {
  if (hex.empty() || hex.size() > 9) {
    return {};
  }
  const std::string digits = std::string(9 - hex.size(), '0') + std::string(hex);
  return context::normalize_pci(digits.substr(0, 4) + ":" + digits.substr(4, 2) + ":" + digits.substr(6, 2) + "." +
                                digits.substr(8, 1));
}

struct Maps {
  std::map<ProcessKey, std::size_t> by_process; // into State::d.identities
  std::map<GpuKey, std::size_t> by_gpu;
  std::map<std::string, std::vector<std::size_t>> by_pci; // pci -> links on any host
};

// Every record that states its rank among nranks with a host:pid prefix.
Maps build(State& s) {
  Maps m;
  auto& links = s.d.identities;
  for (const auto& r : s.records) {
    const scan::Hit& h = *r.hit;
    const auto rank = capture(h, "rank");
    const auto nranks = capture(h, "nranks");
    if (rank.empty() || nranks.empty() || !h.ctx.host || !h.ctx.pid) {
      continue;
    }
    IdentityLink link;
    link.host = h.ctx.host->value;
    link.pid = h.ctx.pid->value;
    link.pci = pci_from_nccl_bus_id(capture(h, "bus_id"));
    link.rank = std::atoi(rank.c_str());
    link.nranks = std::atoi(nranks.c_str());
    link.source = h.source;
    link.line_no = h.line_no;
    const ProcessKey key{link.host, *link.pid};
    auto it = m.by_process.find(key);
    if (it == m.by_process.end()) {
      m.by_process.emplace(key, links.size());
      links.push_back(std::move(link));
    } else if (link.nranks > links[it->second].nranks) {
      links[it->second] = std::move(link);
    }
  }
  std::sort(links.begin(), links.end(), [](const IdentityLink& a, const IdentityLink& b) {
    return std::tie(a.host, a.rank, a.pid) < std::tie(b.host, b.rank, b.pid);
  });
  m.by_process.clear();
  for (std::size_t i = 0; i < links.size(); ++i) {
    m.by_process.emplace(ProcessKey{links[i].host, *links[i].pid}, i);
    if (!links[i].pci.empty()) {
      m.by_gpu.emplace(GpuKey{links[i].host, links[i].pci}, i);
      m.by_pci[links[i].pci].push_back(i);
    }
  }
  return m;
}

// The link for a record: by its process, else by its GPU on its host, else
// by its GPU alone when exactly one host has that bus id (a kernel log
// without a host name, from a one-node dump).
std::optional<std::size_t> link_for(const Maps& m, const Record& r, const scan::Hit& h) {
  if (h.ctx.host && h.ctx.pid) {
    if (auto it = m.by_process.find({h.ctx.host->value, h.ctx.pid->value}); it != m.by_process.end()) {
      return it->second;
    }
  }
  if (r.pci.empty()) {
    return std::nullopt;
  }
  if (!r.host.empty()) {
    if (auto it = m.by_gpu.find({r.host, r.pci}); it != m.by_gpu.end()) {
      return it->second;
    }
    return std::nullopt;
  }
  if (auto it = m.by_pci.find(r.pci); it != m.by_pci.end() && it->second.size() == 1) {
    return it->second.front();
  }
  return std::nullopt;
}

} // namespace

void pass_identity(State& s) {
  for (auto& r : s.records) {
    const scan::Hit& h = *r.hit;
    r.host = h.ctx.host ? h.ctx.host->value : capture(h, "host");
    r.pci = h.ctx.pci ? h.ctx.pci->value : context::normalize_pci(capture(h, "pci"));
  }
  const Maps m = build(s);
  for (auto& r : s.records) {
    const scan::Hit& h = *r.hit;
    const auto link = link_for(m, r, h);
    if (h.ctx.rank) {
      r.rank = h.ctx.rank->value;
    } else if (link) {
      r.rank = s.d.identities[*link].rank;
      r.rank_origin = context::Origin::identity;
    } else if (auto v = capture(h, "rank"); !v.empty()) {
      r.rank = std::atoi(v.c_str());
    }
    if (link) {
      // The process's GPU is shown, not matched on: a GPU named by the line
      // itself decides which GPU a failure is on (causality, attach).
      const auto& l = s.d.identities[*link];
      if (r.pci.empty()) {
        r.shown_pci = l.pci;
      }
      if (r.host.empty()) {
        r.host = l.host;
        r.host_origin = context::Origin::identity;
      }
    }
    if (r.host.empty() && !s.options.node.empty()) {
      r.host = s.options.node; // --node: a run over one node's own logs
      r.host_origin = context::Origin::option;
    }
  }
}

} // namespace denpex::correlate::detail
