// The words for the correlator's decisions (describe.hpp).
#include <denpex/correlate/describe.hpp>

#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace denpex::correlate {

namespace {

std::string utc(std::int64_t us) {
  std::time_t t = us / 1'000'000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string duration(std::int64_t us) {
  const auto minutes = us / 60'000'000;
  if (minutes >= 120) {
    return fmt::format("{} h {} min", minutes / 60, minutes % 60);
  }
  return fmt::format("{} min", minutes);
}

std::string count_of(std::size_t n, std::string_view one) {
  return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s");
}

} // namespace

std::string format_ranks(const std::vector<int>& ranks) {
  std::string out;
  std::size_t i = 0;
  while (i < ranks.size()) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) {
      ++j;
    }
    if (!out.empty()) {
      out += ",";
    }
    out += j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string describe(const Decision& dec, const Diagnosis& d) {
  // One candidate left once recovered causes were set aside says so itself.
  const bool only_unrecovered = dec.rule == Rule::only_cause && dec.recovered_skipped > 0 && dec.generic_skipped == 0;
  std::string out;
  switch (dec.rule) {
  case Rule::only_cause:
    out = only_unrecovered ? "the only cause the run did not recover from" : "the only cause in the logs";
    break;
  case Rule::earliest_by_time:
    out = "earliest cause by timestamp";
    break;
  case Rule::concurrent_most_specific:
    out = fmt::format("earliest cause by timestamp; causes within {:.1f} s of it{} are treated as concurrent and the "
                      "most specific one (priority {}) wins",
                      static_cast<double>(dec.skew_us) / 1e6,
                      dec.clock_risk ? fmt::format(" ({:.1f} s on another node)",
                                                   static_cast<double>(dec.skew_us + dec.node_skew_us) / 1e6)
                                     : std::string(),
                      dec.priority);
    break;
  case Rule::earliest_in_file:
    out = "earliest cause in its file (no comparable timestamps; line order used)";
    break;
  case Rule::priority_across_clocks:
    out = "clocks are not comparable across these lines: highest priority, then first in the input";
    break;
  case Rule::upstream_symptom:
    out = "no cause is in these logs: this is the earliest downstream report (a symptom), shown so the run has a "
          "headline; the evidence that would name the cause is listed below";
    break;
  case Rule::only_generic:
    out = "only generic reports were found (a wrapper such as an NCCL error code); the concrete cause is not in these "
          "logs";
    break;
  }
  if (dec.generic_skipped > 0) {
    out += "; generic announcements were not considered";
  }
  if (dec.recovered_skipped > 0 && !only_unrecovered) {
    out += "; causes that training recovered from were not considered";
  }
  if (dec.nonfatal_skipped > 0) {
    out += fmt::format("; {} before a failure in the same episode not considered",
                       count_of(dec.nonfatal_skipped, "warning-level cause"));
  }
  if (const auto& r = dec.clock_risk) {
    const auto delta = static_cast<double>(r->delta_us) / 1e6;
    out += fmt::format("; a cause on {} ({}:{}) is stamped {:.1f} s {} it, inside the window for different nodes "
                       "({:.1f} s concurrency plus {:.1f} s clock tolerance): which node initiated rests on their "
                       "clocks agreeing",
                       r->host, d.source_name(r->first.source), r->first.line_no, std::abs(delta),
                       delta < 0 ? "before" : "after", static_cast<double>(dec.skew_us) / 1e6,
                       static_cast<double>(dec.node_skew_us) / 1e6);
  }
  if (dec.episode && d.episodes.size() > 1) {
    const auto& e = d.episodes[*dec.episode];
    out += dec.fell_back ? fmt::format("; the last failure episode holds no cause, so the latest earlier one decided ({})",
                                       describe(e, *dec.episode, d))
                         : fmt::format("; decided in the failure episode that ended the run ({})",
                                       describe(e, *dec.episode, d));
    if (dec.earlier_skipped > 0) {
      out += fmt::format("; {} in earlier episodes reported as earlier incidents",
                         count_of(dec.earlier_skipped, "cause"));
    }
  }
  return out;
}

std::string describe(const Episode& e, std::size_t index, const Diagnosis& d) {
  std::size_t n = 0;
  std::size_t nth = 0;
  for (std::size_t i = 0; i < d.episodes.size(); ++i) {
    if (d.episodes[i].domain == e.domain) {
      ++n;
      if (i == index) {
        nth = n;
      }
    }
  }
  std::string out = fmt::format("episode {} of {}", nth, n);
  switch (e.started_by) {
  case Episode::Start::first:
    break;
  case Episode::Start::progress:
    out += fmt::format(", after training progress at {}:{}", d.source_name(e.progress_source), e.progress_line);
    break;
  case Episode::Start::quiet_gap:
    out += fmt::format(", after {} without failure evidence", duration(e.gap_us));
    break;
  }
  if (e.start_us) {
    out += fmt::format(", from {}", utc(*e.start_us));
  }
  return out;
}

std::string describe_recovered(const Incident& inc, const Diagnosis& d) {
  if (!inc.recovered) {
    return {};
  }
  if (inc.recovered->completed) {
    return fmt::format("printed after the run said it had completed ({}:{}): part of its shutdown, not its failure",
                       d.source_name(inc.recovered->source), inc.recovered->line_no);
  }
  if (inc.recovered->relaunch) {
    return fmt::format("the same file began again after it ({}:{}): it ended an earlier run, not the last one",
                       d.source_name(inc.recovered->source), inc.recovered->line_no);
  }
  return fmt::format("training progressed after it ({}:{}): the run recovered from this one",
                     d.source_name(inc.recovered->source), inc.recovered->line_no);
}

std::string describe_earlier_episode(const Incident& inc, const Diagnosis& d) {
  if (!inc.earlier_episode || !inc.episode) {
    return {};
  }
  return fmt::format("an earlier failure episode ({}); a later one ended the run, so this is not its cause",
                     describe(d.episodes[*inc.episode], *inc.episode, d));
}

std::string describe_inferred(const Incident& inc) {
  if (inc.inferred_xid.empty()) {
    return {};
  }
  if (inc.inferred_from_tool) {
    return fmt::format("inferred: the kernel's Xid {} line itself is not in these logs; a GPU monitoring tool's "
                       "report of it is",
                       inc.inferred_xid);
  }
  return fmt::format("inferred: the Xid {} line itself is not in these logs; a later report names it as its cause",
                     inc.inferred_xid);
}

std::string describe_simultaneous(const Incident& inc) {
  if (!inc.simultaneous) {
    return {};
  }
  return fmt::format("raised by ranks {} at the same time: no single rank started it, so the cause is shared "
                     "(configuration, code, input data or environment), not one host",
                     format_ranks(std::vector<int>(inc.ranks.begin(), inc.ranks.end())));
}

std::string describe_chain(const Incident& inc, const Diagnosis& d) {
  const auto& file = d.source_name(inc.first.source);
  std::string out;
  if (inc.traceback && !inc.traceback->chain.empty()) {
    const auto& chain = inc.traceback->chain;
    const auto& root = chain.front();
    const auto& last = chain.back();
    const std::string how = last.link == context::ChainLink::direct_cause ? "raised from" : "raised while handling";
    out = chain.size() == 1 ? fmt::format("{} {} ({}:{})", how, root.text, file, root.line_no)
                            : fmt::format("{} {} ({}:{}); the chain of {} exceptions began with {} ({}:{})", how,
                                          last.text, file, last.line_no, chain.size() + 1, root.text, file,
                                          root.line_no);
  }
  if (!inc.later.empty()) {
    const auto& final = inc.later.back();
    out += fmt::format("{}it caused {} ({}:{})", out.empty() ? "" : "; ", final.text, file, final.line_no);
    if (inc.later.size() > 1) {
      out += fmt::format(", through {} more", inc.later.size() - 1);
    }
  }
  return out;
}

std::string describe_identity(const Evidence& e, const Diagnosis& d) {
  const auto* l = d.identity_of(e);
  if (l == nullptr) {
    return {};
  }
  std::string who = l->pid ? fmt::format("pid {} on {}", *l->pid, l->host) : l->host;
  if (!l->pci.empty()) {
    who += fmt::format(" (GPU {})", l->pci);
  }
  return fmt::format("rank {} from NCCL's init line {}:{}: {} is rank {} of {}", l->rank, d.source_name(l->source),
                     l->line_no, who, l->rank, l->nranks);
}

std::string describe_rank_from(const Incident& inc, const Diagnosis& d) {
  if (!inc.rank_from || !inc.first.ctx.rank) {
    return {};
  }
  const auto& from = *inc.rank_from;
  const auto where = fmt::format("{}:{}", d.source_name(from.source), from.line_no);
  if (inc.first.ctx.rank->origin == context::Origin::incident) {
    return fmt::format("rank {} from another line of the same failure, {}: this line names no rank", inc.first.ctx.rank->value,
                       where);
  }
  std::string worker = fmt::format("rank {}", inc.first.ctx.rank->value);
  if (from.ctx.local_rank) {
    worker += fmt::format(", local rank {}", from.ctx.local_rank->value);
  }
  if (from.ctx.host) {
    worker += " on " + from.ctx.host->value;
  }
  return fmt::format("rank {} from the launcher's report at {}: the first worker it saw fail ({}); this line names "
                     "no rank, and nothing on it says otherwise",
                     inc.first.ctx.rank->value, where, worker);
}

std::string format_frame(const context::Frame& f) {
  return f.function.empty() ? fmt::format("{}:{}", f.file, f.line) : fmt::format("{}:{} in {}", f.file, f.line, f.function);
}

std::string describe(const ClockFacts& clocks, int year) {
  std::vector<std::string> notes;
  if (clocks.yearless) {
    std::string_view from = "stamps with a year";
    switch (clocks.year_from) {
    case ClockFacts::YearFrom::stamps:
      break;
    case ClockFacts::YearFrom::option:
      from = "--year";
      break;
    case ClockFacts::YearFrom::mtime:
      from = "file modification time";
      break;
    case ClockFacts::YearFrom::now:
      from = "the current year";
      break;
    }
    notes.push_back(fmt::format("stamps without a year were placed in {} (from {})", year, from));
  }
  if (clocks.zoneless) {
    notes.emplace_back("stamps without a zone are read as one local clock");
  }
  if (clocks.monotonic) {
    notes.emplace_back("dmesg seconds-since-boot compare only within their own file");
  }
  std::string out;
  for (const auto& n : notes) {
    out += out.empty() ? n : "; " + n;
  }
  return out;
}

std::string summary(const Inference& inf) {
  switch (inf.kind) {
  case Inference::Kind::collective_mismatch:
    return fmt::format("ranks disagree on which collective comes next ({}): a collective mismatch, usually a code "
                       "path that only some ranks take",
                       inf.mismatches.front());
  case Inference::Kind::missing_partial:
    return fmt::format("{} rank(s) ({}) reported a collective timeout; rank(s) {} did not report in these logs, which "
                       "may be partial (no NCCL init lines give the world size): if their logs are complete, they are "
                       "the suspects",
                       inf.reporting_ranks.size(), format_ranks(inf.reporting_ranks), format_ranks(inf.missing_ranks));
  case Inference::Kind::missing_ranks:
    return fmt::format("{} of {} ranks reported a collective timeout; rank(s) {} never did: the suspect is what "
                       "stopped them{}",
                       inf.reporting_ranks.size(), inf.world_size, format_ranks(inf.missing_ranks),
                       inf.absent_ranks.empty()
                           ? std::string()
                           : fmt::format(" (rank(s) {} have no line in these logs at all: their logs are not here)",
                                         format_ranks(inf.absent_ranks)));
  case Inference::Kind::lagging_ranks:
    return fmt::format("rank(s) {} are behind (lower SeqNum than the others, {}): they stopped earlier and are the "
                       "suspects",
                       format_ranks(inf.lagging_ranks), inf.max_seq);
  case Inference::Kind::all_same:
    return fmt::format("every rank ({} of {}) timed out in the same collective (SeqNum {}): no rank in these logs "
                       "stands out as the initiator",
                       inf.reporting_ranks.size(), inf.world_size, inf.max_seq);
  case Inference::Kind::desync_report:
    return fmt::format("PyTorch's desync report names rank(s) {}: they {}; the other ranks waited for them",
                       format_ranks(inf.lagging_ranks), inf.desync_said);
  case Inference::Kind::absent_ranks:
    return fmt::format("{} of {} ranks reported a collective timeout; rank(s) {} have no line in these logs: their "
                       "own logs are not here, and the suspect is in them",
                       inf.reporting_ranks.size(), inf.world_size, format_ranks(inf.missing_ranks));
  }
  return {};
}

namespace {

std::string transport_list(const Inference& inf) {
  std::string out;
  for (const auto& t : inf.transport) {
    out += (out.empty() ? "" : ", ") + t;
  }
  return out;
}

} // namespace

std::string hang_who(const Inference& inf) {
  switch (inf.kind) {
  case Inference::Kind::missing_ranks:
    return fmt::format("{} {} (never reported)", inf.missing_ranks.size() == 1 ? "rank" : "ranks",
                       format_ranks(inf.missing_ranks));
  case Inference::Kind::missing_partial:
    return fmt::format("{} {} (no report in these logs)", inf.missing_ranks.size() == 1 ? "rank" : "ranks",
                       format_ranks(inf.missing_ranks));
  case Inference::Kind::lagging_ranks:
    return fmt::format("{} {} (behind)", inf.lagging_ranks.size() == 1 ? "rank" : "ranks",
                       format_ranks(inf.lagging_ranks));
  case Inference::Kind::desync_report:
    return fmt::format("{} {} (named by the desync report)", inf.lagging_ranks.size() == 1 ? "rank" : "ranks",
                       format_ranks(inf.lagging_ranks));
  case Inference::Kind::absent_ranks:
    return fmt::format("rank unknown: the logs of {} {} are not here", inf.missing_ranks.size() == 1 ? "rank" : "ranks",
                       format_ranks(inf.missing_ranks));
  case Inference::Kind::collective_mismatch:
    return "ranks disagree on the next collective";
  case Inference::Kind::all_same:
    break;
  }
  return "no rank stands out";
}

std::string hang_what(const Inference& inf) {
  if (inf.kind == Inference::Kind::collective_mismatch) {
    return "collective mismatch: " + inf.mismatches.front();
  }
  std::string what = inf.op.empty() ? "a collective" : inf.op;
  if (inf.max_seq >= 0) {
    what += fmt::format(" SeqNum {}", inf.max_seq);
  }
  what += " timed out";
  if (inf.timeout_ms > 0) {
    what += inf.timeout_ms % 1000 == 0 ? fmt::format(" after {} s", inf.timeout_ms / 1000)
                                       : fmt::format(" after {} ms", inf.timeout_ms);
  }
  if (inf.at_max_seq > 0) {
    what += inf.world_size > 0 ? fmt::format(" on {} of {} ranks", inf.at_max_seq, inf.world_size)
                               : fmt::format(" on {} ranks", inf.at_max_seq);
  }
  if (inf.first_collective) {
    what += "; no collective ever completed (SeqNum 1): the transport never worked, or a rank never got there";
    if (!inf.transport.empty()) {
      what += " (transport settings in the log: " + transport_list(inf) + ")";
    }
  }
  return what;
}

std::string world_size_from(const Inference& inf) {
  return inf.world_size_from_init ? "nRanks in NCCL's init lines"
                                  : "the highest rank that reported (the real world size may be larger)";
}

std::vector<std::string> next_steps(const Inference& inf) {
  std::vector<std::string> steps;
  switch (inf.kind) {
  case Inference::Kind::collective_mismatch:
    steps.emplace_back("rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL to get the collective fingerprints");
    break;
  case Inference::Kind::missing_partial:
    steps.push_back(inf.nccl_info ? fmt::format("collect rank {}'s own log", format_ranks(inf.missing_ranks))
                                  : fmt::format("collect rank {}'s own log, or rerun with NCCL_DEBUG=INFO so the "
                                                "world size is in the log",
                                                format_ranks(inf.missing_ranks)));
    break;
  case Inference::Kind::missing_ranks:
    steps.push_back(fmt::format("read rank {}'s own log (stderr, --log-dir of torchrun)", format_ranks(inf.missing_ranks)));
    steps.emplace_back("read the kernel log (dmesg -T, journalctl -k) of the node that ran it, for an Xid, an OOM kill "
                       "or a link-down at the time of the hang");
    break;
  case Inference::Kind::lagging_ranks:
    steps.push_back(fmt::format("read rank {}'s log before its last collective", format_ranks(inf.lagging_ranks)));
    break;
  case Inference::Kind::all_same:
    steps.emplace_back("collect the Flight Recorder dumps (TORCH_NCCL_TRACE_BUFFER_SIZE=2000, "
                       "TORCH_NCCL_DUMP_ON_TIMEOUT=1) and compare each rank's last collective");
    steps.emplace_back("check every node's kernel log (dmesg -T) for Xid, OOM kills or NIC link-down events in the "
                       "minutes before the timeout");
    break;
  case Inference::Kind::desync_report:
    steps.push_back(fmt::format("read rank {}'s own log and its node's kernel log (dmesg -T) before the timeout",
                                format_ranks(inf.lagging_ranks)));
    break;
  case Inference::Kind::absent_ranks:
    steps.push_back(fmt::format("collect the logs of rank {} (torchrun --log-dir, per-node job output) and run denpex "
                                "on all of them together",
                                format_ranks(inf.missing_ranks)));
    break;
  }
  if (inf.first_collective) {
    // SeqNum 1: nothing ever went through. Either the path between the
    // ranks is broken, or one rank had not reached the first collective
    // (rank 0 preparing data while the others wait at a barrier).
    steps.push_back(
        std::string("no collective ever completed: if the transport never worked, ") +
        (inf.transport.empty() ? "check NCCL_SOCKET_IFNAME / NCCL_IB_HCA against the nodes' interfaces"
                               : "check the transport settings these logs show (" + transport_list(inf) +
                                     ") against the nodes' interfaces and HCAs and rerun without each one") +
        "; nccl-tests (all_reduce_perf) between the same nodes tells in seconds");
    steps.emplace_back("if nccl-tests passes, a rank was still busy before its first collective (a long dataset "
                       "preparation on rank 0 while the others wait at a barrier): compare each rank's last line before "
                       "the timeout, move that work before init_process_group, or raise the process group's timeout");
  }
  // Advice never repeats what the logs already have.
  if (!inf.nccl_info) {
    steps.emplace_back("rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=INIT,NET) so the log shows each rank's "
                       "communicator, transport and the failing NCCL call");
  }
  return steps;
}

} // namespace denpex::correlate

namespace denpex::correlate {

namespace {

std::string run_name(const Diagnosis& d, std::size_t i) {
  return d.runs[i].job.empty() ? fmt::format("run {}", i + 1) : "job " + d.runs[i].job;
}

} // namespace

std::string describe_runs(const Diagnosis& d) {
  if (d.runs.size() < 2) {
    return {};
  }
  std::string out = fmt::format("these logs hold {} separate runs:", d.runs.size());
  const auto* init = d.initiating();
  std::optional<std::size_t> initiating_run;
  for (std::size_t i = 0; i < d.runs.size(); ++i) {
    const auto& r = d.runs[i];
    out += i == 0 ? " " : "; ";
    out += run_name(d, i);
    out += " (" + (r.sources.size() == 1 ? d.source_name(r.sources.front()) : count_of(r.sources.size(), "file"));
    if (r.start_us) {
      const auto from = utc(*r.start_us);
      auto to = utc(*r.end_us);
      if (to.compare(0, 11, from, 0, 11) == 0) {
        to.erase(0, 11); // the same day: its time only
      }
      out += fmt::format(", {} to {}", from, to);
    }
    out += ")";
    if (init && std::binary_search(r.sources.begin(), r.sources.end(), init->first.source)) {
      initiating_run = i;
    }
  }
  if (initiating_run) {
    out += fmt::format(". The initiating failure is {}'s", run_name(d, *initiating_run));
  }
  return out + "; diagnose one run's files alone for a report of that run only";
}

std::string describe_runs_briefly(const Diagnosis& d) {
  if (d.runs.size() < 2) {
    return {};
  }
  std::string out = fmt::format("these logs hold {} separate runs", d.runs.size());
  if (const auto* init = d.initiating()) {
    for (std::size_t i = 0; i < d.runs.size(); ++i) {
      const auto& r = d.runs[i];
      if (std::binary_search(r.sources.begin(), r.sources.end(), init->first.source)) {
        out += fmt::format("; the initiating failure is {}'s", run_name(d, i));
      }
    }
  }
  return out;
}

std::string describe(const MissingFact& m, const Incident& inc, const catalog::Catalog& cat) {
  using Kind = MissingFact::Kind;
  switch (m.kind) {
  case Kind::signal: {
    const auto& signal = cat.at(inc.signature).signals.at(m.signal);
    return fmt::format("{} ({}): {}", signal.id, signal.description.empty() ? "not seen" : signal.description,
                       signal.if_missing);
  }
  case Kind::traceback:
    return "the traceback above the exception (the frames that say where it was raised): the failing rank's whole "
           "stderr, or its torchelastic error file";
  case Kind::clock_offset: {
    const auto delta = std::abs(static_cast<double>(m.delta_us)) / 1e6;
    const auto& other = cat.at(m.other_signature).id;
    return m.delta_us >= 0
               ? fmt::format("the clock offset between {} and {} when the job failed (`chronyc tracking` or the PTP "
                             "daemon's log on each): if {}'s clock ran ahead of {}'s by more than {:.1f} s, its {} "
                             "came first",
                             m.host, m.other_host, m.other_host, m.host, delta, other)
               : fmt::format("the clock offset between {} and {} when the job failed (`chronyc tracking` or the PTP "
                             "daemon's log on each): unless {}'s clock ran behind {}'s by more than {:.1f} s, its {} "
                             "came first and only specificity chose this one",
                             m.host, m.other_host, m.other_host, m.host, delta, other);
  }
  case Kind::named_xid:
    return fmt::format("the line names an earlier Xid {} as its cause; look for it in the node's kernel log "
                       "(`dmesg -T | grep Xid`)",
                       m.xid);
  case Kind::xid_line:
    return fmt::format("the Xid {} line on GPU {}: read the node's kernel log for the minutes before "
                       "(`dmesg -T | grep 'Xid'`, `journalctl -k`)",
                       m.xid, m.gpu);
  case Kind::cause_itself:
    return m.causes.empty()
               ? std::string("the cause itself: this is a downstream report; look in the logs of the rank or node "
                             "that failed first (its stderr, the kernel log)")
               : fmt::format("the cause itself: this is a downstream report, usually of {}; look in the logs of the "
                             "rank or node that failed first (its stderr, the kernel log)",
                             m.causes);
  }
  return {};
}

std::vector<std::string> describe_missing(const Incident& inc, const catalog::Catalog& cat) {
  std::vector<std::string> out;
  out.reserve(inc.missing.size());
  for (const auto& m : inc.missing) {
    out.push_back(describe(m, inc, cat));
  }
  return out;
}

} // namespace denpex::correlate
