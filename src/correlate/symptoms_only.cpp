// Pass: symptoms only. With no cause at all, watchdog timeouts are compared
// by rank: ranks that never reported a timeout are the suspects, ranks at a
// lower SeqNum are behind, ranks at one SeqNum with different OpTypes are a
// collective mismatch; if every rank stopped in the same collective, no rank
// stands out. The world size comes from NCCL's nRanks, else the highest rank
// seen (said so). describe.hpp words the result and its next steps.
#include "passes.hpp"

#include <denpex/util/strings.hpp>

#include <algorithm>
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
  std::int64_t timeout_ms = -1;
};

// Each rank's latest collective from the hits that name a SeqNum; the world
// size from NCCL's init lines (0 when none says it).
std::map<int, RankReport> rank_reports(const State& s, int& world) {
  std::map<int, RankReport> reports;
  for (const auto& r : s.records) {
    const scan::Hit& h = *r.hit;
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
    const auto timeout = capture(h, "timeout_ms");
    for (const int rank : ranks) {
      auto& rep = reports[rank];
      if (n > rep.seq) {
        rep.seq = n;
        rep.op = op;
      } else if (n == rep.seq && rep.op.empty()) {
        rep.op = op; // another line about the same collective may name its type
      }
      if (n == rep.seq && !timeout.empty() && timeout.size() < 12) {
        rep.timeout_ms = util::parse_int(timeout).value_or(-1);
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

// "1, 5" -> {1, 5}.
std::vector<int> parse_rank_list(std::string_view list) {
  std::vector<int> ranks;
  std::size_t at = 0;
  while (at < list.size()) {
    while (at < list.size() && (list[at] == ',' || list[at] == ' ')) {
      ++at;
    }
    std::size_t end = at;
    while (end < list.size() && list[end] >= '0' && list[end] <= '9') {
      ++end;
    }
    if (end == at || end - at > 7) {
      break;
    }
    ranks.push_back(std::atoi(std::string(list.substr(at, end - at)).c_str()));
    at = end;
  }
  return ranks;
}

bool is_entry(const State& s, const Record& r, std::string_view id) { return s.cat.at(r.hit->signature).id == id; }

// PyTorch's desync report (TORCH_NCCL_DESYNC_DEBUG=1) names the ranks the
// others waited for: the earliest such line decides.
void read_desync_report(const State& s, Inference& inf) {
  for (const auto& r : s.records) {
    if (!is_entry(s, r, "pytorch.nccl.desync-report")) {
      continue;
    }
    const auto lagging = parse_rank_list(capture(*r.hit, "lagging"));
    if (lagging.empty()) {
      continue;
    }
    inf.kind = Inference::Kind::desync_report;
    inf.lagging_ranks = lagging;
    const auto lag_seq = capture(*r.hit, "lag_seq");
    inf.desync_said = lag_seq.empty() ? "never joined any collective of the group"
                                      : "joined but did not finish collective #" + lag_seq;
    inf.desync_source = r.hit->source;
    inf.desync_line = r.hit->line_no;
    return;
  }
}

// Settings that decide how NCCL moves data between ranks: the suspects of a
// hang in the first collective.
bool transport_setting(std::string_view name) {
  for (const std::string_view p : {"NCCL_SOCKET_", "NCCL_IB_", "NCCL_NET", "NCCL_P2P_", "NCCL_SHM_", "NCCL_CROSS_NIC",
                                   "NCCL_CUMEM", "NCCL_NVLS_", "NCCL_COLLNET", "NCCL_PROTO", "NCCL_ALGO"}) {
    if (name.substr(0, p.size()) == p) {
      return true;
    }
  }
  return false;
}

// The transport settings and the network NCCL chose, each once, in the
// order the logs show them; and whether NCCL's INFO lines are there at all.
void read_transport(const State& s, Inference& inf) {
  std::set<std::string> seen;
  for (const auto& r : s.records) {
    const scan::Hit& h = *r.hit;
    if (h.text.find("NCCL INFO") != std::string::npos) {
      inf.nccl_info = true;
    }
    if (!is_entry(s, r, "nccl.env-setting")) {
      continue;
    }
    std::string shown;
    if (const auto setting = capture(h, "setting"); !setting.empty() && transport_setting(setting)) {
      shown = setting + "=" + capture(h, "value");
    } else if (const auto network = capture(h, "network"); !network.empty()) {
      shown = "network " + network;
    }
    if (!shown.empty() && seen.insert(shown).second && inf.transport.size() < 12) {
      inf.transport.push_back(std::move(shown));
    }
  }
}

} // namespace

void pass_symptoms_only(State& s) {
  if (!s.d.incidents.empty()) {
    return;
  }
  int world = 0;
  const auto reports = rank_reports(s, world);
  Inference inf;
  read_desync_report(s, inf);
  if (reports.empty() && inf.kind != Inference::Kind::desync_report) {
    return;
  }
  inf.world_size_from_init = world != 0;
  inf.world_size = world != 0 ? world : reports.empty() ? 0 : reports.rbegin()->first + 1;
  for (const auto& [rank, rep] : reports) {
    inf.max_seq = std::max(inf.max_seq, rep.seq);
    inf.reporting_ranks.push_back(rank);
  }
  std::set<std::string> ops;
  for (const auto& [rank, rep] : reports) {
    if (rep.seq == inf.max_seq) {
      ++inf.at_max_seq;
      if (!rep.op.empty()) {
        ops.insert(rep.op);
      }
      inf.timeout_ms = std::max(inf.timeout_ms, rep.timeout_ms);
    }
  }
  if (ops.size() == 1) {
    inf.op = *ops.begin();
  }
  inf.first_collective = inf.max_seq == 1;
  read_transport(s, inf);
  if (inf.kind == Inference::Kind::desync_report) {
    s.d.inference = std::move(inf); // the report's own analysis decides
    return;
  }
  // --node: one node's logs, whose findings a merge will read with the
  // others' (docs/cluster.md). The other nodes' ranks are not missing from
  // them; only this node's own ranks (any of its lines names them, NCCL's
  // init line among them) can be. Listing every other rank of a large job
  // would also make each node's findings as long as the job is wide.
  // A rank that did not report is a suspect only when these logs hold some
  // line of it (its NCCL init line, say): one with no line at all is a log
  // that is not here, which says nothing about the rank (issue 32).
  std::set<int> own;
  for (const auto& r : s.records) {
    insert_ranks(own, r);
  }
  std::vector<int> absent;
  for (int r = 0; r < inf.world_size; ++r) {
    if (reports.count(r) != 0) {
      continue;
    }
    if (own.count(r) != 0) {
      inf.missing_ranks.push_back(r);
    } else if (s.options.node.empty()) {
      absent.push_back(r);
    }
  }
  if (inf.missing_ranks.empty() && !absent.empty() && inf.world_size_from_init) {
    inf.missing_ranks = absent; // kind absent_ranks, below
    inf.absent_ranks = std::move(absent);
  } else if (inf.world_size_from_init) {
    inf.absent_ranks = std::move(absent);
  } else {
    inf.missing_ranks.insert(inf.missing_ranks.end(), absent.begin(), absent.end());
    std::sort(inf.missing_ranks.begin(), inf.missing_ranks.end());
  }
  for (const auto& [rank, rep] : reports) {
    if (rep.seq < inf.max_seq) {
      inf.lagging_ranks.push_back(rank);
    }
  }
  inf.mismatches = mismatches(reports);
  if (!inf.mismatches.empty()) {
    inf.kind = Inference::Kind::collective_mismatch;
  } else if (!inf.missing_ranks.empty() && inf.world_size_from_init &&
             std::none_of(inf.missing_ranks.begin(), inf.missing_ranks.end(), [&](int r) { return own.count(r) != 0; })) {
    inf.kind = Inference::Kind::absent_ranks;
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
