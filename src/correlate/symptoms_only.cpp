// Pass: symptoms only. With no cause at all, watchdog timeouts are compared
// by rank: ranks that never reported a timeout are the suspects, ranks at a
// lower SeqNum are behind, ranks at one SeqNum with different OpTypes are a
// collective mismatch; if every rank stopped in the same collective, no rank
// stands out. The world size comes from NCCL's nRanks, else the highest rank
// seen (said so). describe.hpp words the result and its next steps.
#include "passes.hpp"

#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include <denpex/correlate/describe.hpp>

namespace denpex::correlate::detail {

namespace {

struct RankReport {
  std::int64_t seq = -1;
  std::string op;
};

// Each rank's latest collective from the hits that name a SeqNum; the world
// size from NCCL's init lines (0 when none says it).
std::map<int, RankReport> rank_reports(const State& s, int& world) {
  std::map<int, RankReport> reports;
  for (const auto& r : s.records) {
    const Hit& h = *r.hit;
    if (h.ctx.nranks && h.ctx.nranks->value > world) {
      world = h.ctx.nranks->value;
    }
    if (auto n = capture(h, "nranks"); !n.empty() && std::atoi(n.c_str()) > world) {
      world = std::atoi(n.c_str());
    }
    const auto seq = capture(h, "seq");
    if (seq.empty()) {
      continue;
    }
    std::set<int> ranks;
    insert_ranks(ranks, r);
    const auto n = std::atoll(seq.c_str());
    const auto op = capture(h, "op");
    for (const int rank : ranks) {
      auto& rep = reports[rank];
      if (n > rep.seq) {
        rep.seq = n;
        rep.op = op;
      } else if (n == rep.seq && rep.op.empty()) {
        rep.op = op; // another line about the same collective may name its type
      }
    }
  }
  return reports;
}

std::vector<std::string> mismatches(const std::map<int, RankReport>& reports) {
  std::map<std::int64_t, std::map<std::string, std::vector<int>>> ops;
  for (const auto& [rank, rep] : reports) {
    if (!rep.op.empty()) { // a line that names no OpType cannot disagree
      ops[rep.seq][rep.op].push_back(rank);
    }
  }
  std::vector<std::string> out;
  for (const auto& [seq, by_op] : ops) {
    if (by_op.size() < 2) {
      continue;
    }
    std::string line = fmt::format("SeqNum {}:", seq);
    bool first = true;
    for (const auto& [op, ranks] : by_op) {
      line += fmt::format("{} {} on rank(s) {}", first ? "" : ",", op, format_ranks(ranks));
      first = false;
    }
    out.push_back(std::move(line));
  }
  return out;
}

} // namespace

void pass_symptoms_only(State& s) {
  if (!s.d.incidents.empty()) {
    return;
  }
  int world = 0;
  const auto reports = rank_reports(s, world);
  if (reports.empty()) {
    return;
  }
  Inference inf;
  inf.world_size_from_init = world != 0;
  inf.world_size = world != 0 ? world : reports.rbegin()->first + 1;
  for (const auto& [rank, rep] : reports) {
    inf.max_seq = std::max(inf.max_seq, rep.seq);
    inf.reporting_ranks.push_back(rank);
  }
  // --node: one node's logs, whose findings a merge will read with the
  // others' (docs/cluster.md). The other nodes' ranks are not missing from
  // them; only this node's own ranks (any of its lines names them, NCCL's
  // init line among them) can be. Listing every other rank of a large job
  // would also make each node's findings as long as the job is wide.
  std::set<int> own;
  if (!s.options.node.empty()) {
    for (const auto& r : s.records) {
      insert_ranks(own, r);
    }
  }
  for (int r = 0; r < inf.world_size; ++r) {
    if (reports.count(r) == 0 && (s.options.node.empty() || own.count(r) != 0)) {
      inf.missing_ranks.push_back(r);
    }
  }
  for (const auto& [rank, rep] : reports) {
    if (rep.seq < inf.max_seq) {
      inf.lagging_ranks.push_back(rank);
    }
  }
  inf.mismatches = mismatches(reports);
  if (!inf.mismatches.empty()) {
    inf.kind = Inference::Kind::collective_mismatch;
  } else if (!inf.missing_ranks.empty()) {
    inf.kind = inf.world_size_from_init ? Inference::Kind::missing_ranks : Inference::Kind::missing_partial;
  } else if (!inf.lagging_ranks.empty()) {
    inf.kind = Inference::Kind::lagging_ranks;
  } else {
    inf.kind = Inference::Kind::all_same;
  }
  s.d.inference = std::move(inf);
}

} // namespace denpex::correlate::detail
