// Pass: who. The first line of the initiating incident (or of the first
// report, with no cause) names no rank of its own. Two places may still
// say whose failure it was, in this order:
//
//  1. The failure's own other lines: every line of the incident that names
//     a rank names the same one (eval33/01: an exception printed without a
//     prefix, and "[Rank 1] NCCL watchdog thread terminated with exception"
//     with the same CUDA error).
//  2. The launcher's report of the first worker that failed: entries tagged
//     `launcher-report` (torchelastic's failure records and its "failed
//     (exitcode: N) local_rank: L" line, mpirun's "The first process to do
//     so was", horovodrun's "Process N exit with status code"). The
//     earliest such report that names a rank, when nothing about the
//     incident's line contradicts it (its host, pid or local rank).
//
// A rank found so is marked by its origin (Origin::incident,
// Origin::launcher) and the line it came from (Incident::rank_from), so
// the report says where it came from. Nothing is guessed: a line with a
// rank, or a local rank only, keeps what it says.
#include "passes.hpp"

#include <algorithm>

namespace denpex::correlate::detail {

namespace {

bool has_tag(const catalog::Signature& sig, std::string_view tag) {
  return std::find(sig.tags.begin(), sig.tags.end(), tag) != sig.tags.end();
}

// Whether the launcher's report `r` can be about the process of `e`.
bool consistent(const Record& r, const Evidence& e) {
  const scan::Hit& h = *r.hit;
  if (e.ctx.host && !r.host.empty() && e.ctx.host->value != r.host) {
    return false;
  }
  if (e.ctx.pid) {
    const auto pid = capture(h, "pid");
    if (!pid.empty() && pid != std::to_string(e.ctx.pid->value)) {
      return false;
    }
  }
  if (e.ctx.local_rank && h.ctx.local_rank && e.ctx.local_rank->value != h.ctx.local_rank->value) {
    return false;
  }
  return true;
}

// The earliest launcher report that names a global rank.
const Record* first_launcher_report(const State& s) {
  const Record* best = nullptr;
  for (const auto& r : s.records) {
    if (!r.rank || !has_tag(s.cat.at(r.hit->signature), "launcher-report")) {
      continue;
    }
    if (best == nullptr) {
      best = &r;
      continue;
    }
    const bool on_one_clock = comparable(r.stamp, best->stamp);
    if (on_one_clock ? r.stamp->t < best->stamp->t
                     : std::tie(r.hit->source, r.hit->line_no) < std::tie(best->hit->source, best->hit->line_no)) {
      best = &r;
    }
  }
  return best;
}

// The one rank the incident's other lines name, if they name exactly one
// (and one host at most): the line that names it.
const Record* same_failure_rank(const State& s, const Incident& inc) {
  if (inc.ranks.size() != 1 || inc.hosts.size() > 1) {
    return nullptr;
  }
  for (const auto& r : s.records) {
    if (r.hit->signature == inc.signature && r.rank && *r.rank == *inc.ranks.begin() &&
        (inc.first.ctx.host ? r.host.empty() || r.host == inc.first.ctx.host->value : true)) {
      return &r;
    }
  }
  return nullptr;
}

} // namespace

void pass_who(State& s) {
  if (s.d.incidents.empty()) {
    return;
  }
  auto& inc = s.d.incidents.front();
  auto& ctx = inc.first.ctx;
  if (ctx.rank || ctx.local_rank || inc.simultaneous) {
    return;
  }
  const Record* from = same_failure_rank(s, inc);
  context::Origin origin = context::Origin::incident;
  if (from == nullptr) {
    from = first_launcher_report(s);
    origin = context::Origin::launcher;
    if (from != nullptr && !consistent(*from, inc.first)) {
      from = nullptr;
    }
  }
  if (from == nullptr) {
    return;
  }
  ctx.rank = context::Field<int>{*from->rank, origin};
  if (!ctx.host && !from->host.empty()) {
    ctx.host = context::Field<std::string>{from->host, origin};
  }
  if (!ctx.local_rank && from->hit->ctx.local_rank) {
    ctx.local_rank = context::Field<int>{from->hit->ctx.local_rank->value, origin};
  }
  inc.ranks.insert(*from->rank);
  inc.rank_from = evidence_of(*from);
}

} // namespace denpex::correlate::detail
