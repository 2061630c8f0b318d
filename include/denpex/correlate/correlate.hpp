// denpex::correlate — turns matched lines into incidents.
//
// Pure: takes hits (matched lines with their context) and the catalog, and
// returns a Diagnosis. No I/O. Correlation is a short list of named passes
// over one shared state (src/correlate/passes.hpp; docs/correlator.md):
//
//   clocks -> runs -> identity -> fold -> episodes -> causality -> choose
//          -> attach -> missing facts -> symptoms only -> fallback -> who
//          -> stack -> gate -> starting points
//
// Decisions are data: an initiating incident carries a Decision (an
// enumerated rule and the facts it used); describe.hpp turns decisions into
// words for the printers. Nothing here compares sentences.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/context/context.hpp>
#include <denpex/context/traceback.hpp>
#include <denpex/scan/hit.hpp>

namespace denpex::correlate {

// Where something was seen.
struct Evidence {
  std::uint32_t source = 0;
  std::uint64_t line_no = 0;
  std::string text;
  context::LineContext ctx;
  std::optional<std::int64_t> time_us; // normalised wall clock, when known
  std::uint32_t signal = 0;
};

struct Group {
  std::uint32_t signature = 0;
  std::uint64_t count = 0;
  std::set<int> ranks;
  std::set<std::string> hosts;
  Evidence first;
};

struct SignalStatus {
  std::uint32_t signal = 0;
  std::uint64_t count = 0;
  std::optional<Evidence> first;
};

enum class Confidence { low, medium, high };
std::string_view to_string(Confidence c);

// Why the initiating incident was chosen among the candidates of its
// episode. The ids are stable (JSON `rule_id`); see describe.hpp for words.
enum class Rule {
  only_cause,               // one candidate
  earliest_by_time,         // all candidates on one clock; the earliest
  concurrent_most_specific, // several within the skew window; highest priority
  earliest_in_file,         // one file without comparable stamps: line order
  priority_across_clocks,   // clocks not comparable: priority, then input order
  only_generic,             // only wrappers (priority <= 30) were found
  upstream_symptom,         // no cause at all: the earliest error-level downstream report heads the diagnosis
};
std::string_view to_string(Rule r); // "earliest-by-time", ...

// A stretch of the run's failure evidence on one clock, split from the one
// before it by training progress or a long quiet gap. The terminal episode
// is the last one on its clock: it ends the run.
struct Episode {
  enum class Start { first, progress, quiet_gap };
  std::uint32_t domain = 0; // 0: the shared wall clock; N+1: source N's dmesg seconds
  Start started_by = Start::first;
  std::optional<std::int64_t> start_us; // wall clock (domain 0) only
  std::optional<std::int64_t> end_us;
  std::int64_t gap_us = 0;                // quiet_gap: the length of the gap
  std::uint32_t progress_source = 0;      // progress: the progress line
  std::uint64_t progress_line = 0;
  bool terminal = false;
  std::size_t incidents = 0;              // incidents that start in it
};
std::string_view to_string(Episode::Start s);

// Another node's candidate cause stamped so close to the initiating one
// that a clock difference within the stated tolerance (--clock-skew) could
// reverse their order: which node initiated rests on the nodes' clocks.
struct ClockRisk {
  std::uint32_t signature = 0; // the other candidate's entry
  std::string host;            // its node
  std::int64_t delta_us = 0;   // its stamp minus the initiating one's (negative: stamped earlier)
  Evidence first;              // its first line
};

// The facts a choice used.
struct Decision {
  Rule rule = Rule::only_cause;
  std::size_t candidates = 0;
  int priority = 0;        // the winner's priority
  std::int64_t skew_us = 0;
  std::int64_t node_skew_us = 0; // the cross-node clock tolerance the order assumed
  std::optional<ClockRisk> clock_risk;
  std::optional<std::size_t> episode; // index into Diagnosis::episodes
  // Causes left out of the choice, by why.
  std::size_t generic_skipped = 0;   // wrappers while a concrete cause exists
  std::size_t recovered_skipped = 0; // followed by training progress
  std::size_t earlier_skipped = 0;   // in an earlier failure episode (quiet gap)
  std::size_t nonfatal_skipped = 0;  // warning-level, and a failure followed in the same episode
  bool fell_back = false;            // the terminal episode holds no cause: an earlier one decided
};

// Where training progress was seen after an incident (it was recovered from).
struct ProgressRef {
  std::uint32_t source = 0;
  std::uint64_t line_no = 0;
  bool relaunch = false;  // a new run of the same file, not progress of this one
  bool completed = false; // printed after the run said it had completed
};

// Evidence that would confirm an incident and was not seen: what it is,
// and the facts its words need (pass missing; fold and fallback add their
// own). describe.hpp words it, as it words decisions.
struct MissingFact {
  enum class Kind {
    signal,       // a signal of the entry with an `if_missing` text did not hit: `signal`
    traceback,    // an exception line with no traceback above it
    clock_offset, // the choice rests on two nodes' clocks (Decision::clock_risk): `host`, `other_host`,
                  // `other_signature`, `delta_us`
    named_xid,    // the line names an earlier Xid the catalog has no entry for: `xid`
    xid_line,     // an Xid inferred from a later report; its own line was not seen: `xid`, `gpu`
    cause_itself, // a downstream report heads the diagnosis: `causes` (the entries that usually cause it)
  };
  Kind kind = Kind::signal;
  std::uint32_t signal = 0;          // signal: index into the entry's signals
  std::string host;                  // clock_offset: the initiating node
  std::string other_host;            // clock_offset: the other candidate's node
  std::uint32_t other_signature = 0; // clock_offset: the other candidate's entry
  std::int64_t delta_us = 0;         // clock_offset: its stamp minus the initiating one's
  std::string xid;                   // named_xid, xid_line
  std::string gpu;                   // xid_line: its bus id, or "?"
  std::string causes;                // cause_itself: "a, b or c", or empty
};

struct Incident {
  std::uint32_t signature = 0;
  std::string headline;              // generic evidence: the entry's headline filled from the first line
  Evidence first;
  std::uint64_t count = 0;
  std::set<int> ranks;
  std::set<std::string> hosts;
  std::string pci;
  std::vector<SignalStatus> signals; // one per signal of the entry
  std::vector<Group> collateral;     // symptoms and explained causes
  std::vector<Group> context;        // context entries that refine it
  std::vector<MissingFact> missing;  // evidence that would confirm it (describe.hpp words it)
  bool initiating = false;
  std::optional<Decision> decision;  // initiating only
  Confidence confidence = Confidence::medium;
  std::optional<std::size_t> episode;      // index into Diagnosis::episodes
  std::optional<ProgressRef> recovered;    // training progressed after it: not the cause of the crash
  bool earlier_episode = false;            // a later failure episode ended the run
  // Generic evidence raised by several ranks within the skew window (or
  // with no clock to tell them apart): no rank started it.
  bool simultaneous = false;
  std::shared_ptr<const context::Traceback> traceback; // above the first line: frames and chain
  // The exceptions raised from this one, in order (a direct-cause chain whose
  // root this is: "raise RuntimeError('worker exited unexpectedly') from e").
  std::vector<context::ChainedException> later;
  std::string caused_by;                   // the line itself names an earlier cause (an Xid number)
  // A first report that heads a run with no cause (Rule::upstream_symptom):
  // the last error-looking line no entry named, printed just above it in
  // its own file (pass starting_points). A launcher's summary says a process
  // failed; that line is often what the process said.
  std::optional<Evidence> said_above;
  // The line that said whose failure this is, when the first line names no
  // rank (pass who): another line of the same failure (first.ctx.rank's
  // origin is `incident`) or the launcher's report of the first worker that
  // failed (`launcher`).
  std::optional<Evidence> rank_from;
  std::string inferred_xid;                // set when no line of the cause itself was seen: the Xid a report named
  bool inferred_from_tool = false;         // ... a monitoring tool's report (gpud, DCGM, NVSentinel), not a later Xid line
  // The --fail-on gate (pass gate): whether it counts at all (what the run
  // went on past does not), and the severity it counts with: the worst of
  // its own and the reports it explains (a warning-level IB port error that
  // a watchdog timeout followed ended the job).
  bool counts_against_gate = true;
  catalog::Severity gate_severity = catalog::Severity::info;
};

// One process (and its GPU) tied to a global rank by a line that states it:
// NCCL's init line "host:pid:tid [dev] NCCL INFO ... comm 0x.. rank R nranks N
// ... busId B". Of a process's communicators, the one with the most ranks
// gives the global rank (the others are subgroups: tensor or pipeline
// parallel).
struct IdentityLink {
  std::string host;
  std::optional<std::int64_t> pid;
  std::string pci; // "0000:91:00", "" when the line names no bus id
  int rank = 0;
  int nranks = 0;
  std::uint32_t source = 0;
  std::uint64_t line_no = 0;
};

// What symptom-only logs still say (symptoms-only pass).
struct Inference {
  enum class Kind {
    collective_mismatch, // ranks disagree on the next collective
    missing_partial,     // ranks missing, but the world size is a guess
    missing_ranks,       // ranks that never reported a timeout
    lagging_ranks,       // ranks at a lower SeqNum
    all_same,            // every rank stuck in one collective
    desync_report,       // PyTorch's desync report named the ranks (lagging_ranks)
    absent_ranks,        // ranks that did not report have no line at all here: their logs are missing
  };
  Kind kind = Kind::all_same;
  std::vector<int> reporting_ranks;
  std::vector<int> missing_ranks;
  std::vector<int> absent_ranks; // of the world size, with no line in these logs (missing_ranks, with absent_ranks kind)
  std::vector<int> lagging_ranks;
  std::vector<std::string> mismatches; // "SeqNum 12: ALLREDUCE on rank(s) 0-6, BROADCAST on rank(s) 7"
  std::int64_t max_seq = -1;
  int world_size = 0;
  bool world_size_from_init = false;   // from NCCL's nRanks; else the highest rank seen
  // The collective the reports were stuck in: the OpType at max_seq when the
  // reports name one, and the watchdog's timeout (-1 when no line says).
  std::string op;
  std::int64_t timeout_ms = -1;
  std::size_t at_max_seq = 0; // reporting ranks stuck at max_seq
  // max_seq is 1: the first collective of its process group never completed,
  // so the transport never worked (issue 32).
  bool first_collective = false;
  // The transport settings the logs show, "NCCL_SOCKET_IFNAME=eth0",
  // "network IB" (entry nccl.env-setting): a first-collective hang's suspects.
  std::vector<std::string> transport;
  // NCCL's INFO lines are in the logs: advice never asks for NCCL_DEBUG=INFO.
  bool nccl_info = false;
  // desync_report: what PyTorch's report said, and where.
  std::string desync_said; // "never joined any collective", "joined but did not finish collective #41207"
  std::uint32_t desync_source = 0;
  std::uint64_t desync_line = 0;
};
std::string_view to_string(Inference::Kind k);

// Error-looking lines grouped by message template (numbers masked).
struct StartingPoint {
  std::string template_text;
  std::uint64_t count = 0;
  std::set<int> ranks;
  Evidence first;
};

// How times were normalised (words in describe.hpp).
struct ClockFacts {
  bool yearless = false;  // some stamps print no year
  bool zoneless = false;  // some stamps print no zone
  bool monotonic = false; // raw dmesg seconds-since-boot
  enum class YearFrom { stamps, option, mtime, now } year_from = YearFrom::stamps;
};

// Logs of separate runs read together (issue 32): a directory that holds
// unrelated jobs, told apart by the scheduler's job id in their file names
// (slurm-4711.out, train.o4711, job_4711/) or by wall-clock spans a day or
// more apart. The correlator still decides over all of them (a later run's
// failure is the terminal one); the report says that it mixed them.
struct Run {
  std::string job;                       // the job id a file name gives, or ""
  std::vector<std::uint32_t> sources;    // indices into Diagnosis::sources, ascending
  std::optional<std::int64_t> start_us;  // the earliest and latest wall-clock stamps of its lines
  std::optional<std::int64_t> end_us;
};

struct Diagnosis {
  std::vector<scan::SourceRef> sources;
  std::vector<Incident> incidents;  // the initiating one first, then by time
  std::vector<Group> unexplained;   // symptoms no incident explains
  std::optional<Inference> inference;
  std::vector<StartingPoint> starting_points; // only when nothing else was found
  std::vector<Episode> episodes;    // by clock, then time; empty without failure evidence
  std::vector<IdentityLink> identities; // by host, then rank
  // The stacks the logs show (catalog::known_stacks() order): entries tagged
  // with a stack's name matched (pass stack). A fix is shown in their form.
  std::vector<std::string> stacks;
  // The worst severity that fails the --fail-on gate (pass gate): the run
  // fails a gate at or below it; none when nothing counts.
  std::optional<catalog::Severity> gate;
  // The separate runs these logs hold (pass runs): empty unless more than one.
  std::vector<Run> runs;
  // What it was decided from: the hits and the progress marks given to
  // correlate() (hits without a host of their own carry --node's), kept so
  // that --format jsonl can write them and a merge of per-node findings
  // decides exactly as one run over all the logs (docs/cluster.md).
  std::vector<scan::Hit> evidence;
  std::vector<scan::ProgressMark> progress;
  std::uint64_t hits = 0;
  ClockFacts clocks;
  std::string clock_note;           // describe(clocks, assumed_year), kept for the printers
  int assumed_year = 0;

  // The name of source `id`, "?" for an id this diagnosis does not hold.
  [[nodiscard]] const std::string& source_name(std::uint32_t id) const;
  // The identity link that gave `e` its rank (where.from.rank = identity), or null.
  [[nodiscard]] const IdentityLink* identity_of(const Evidence& e) const;
  // The initiating incident (always the first), or null when there is none:
  // nothing was found, or the run recovered from everything that was.
  [[nodiscard]] const Incident* initiating() const {
    return !incidents.empty() && incidents.front().initiating ? &incidents.front() : nullptr;
  }
};

struct CorrelateOptions {
  std::int64_t skew_us = 2'000'000; // causes this close count as concurrent
  // Nodes' wall clocks are assumed to agree within this (--clock-skew):
  // stamps from different nodes are concurrent within skew_us + node_skew_us.
  std::int64_t node_skew_us = 1'000'000;
  std::int64_t progress_margin_us = 60'000'000; // progress this long after a cause means it was recovered from
  // Failure evidence this far apart with nothing between starts a new
  // episode. Long enough that a hang ended by a default 10-minute NCCL
  // watchdog stays one episode even without its Timeout(ms) (the watchdog's
  // own lines say when the collective began, and that is used first).
  std::int64_t quiet_gap_us = 30LL * 60 * 1'000'000;
  int now_year = 2026;              // last resort for year-less stamps
  int assume_year = 0;              // --year: the year of stamps that print none (0 = infer)
  std::string node;                 // --node: the host of lines that name none (a run over one node's own logs)
  std::size_t max_starting_points = 10; // groups of error-looking lines kept when nothing was found
};

// Whether the diagnosis fails `denpex diagnose --fail-on LEVEL` (exit 1).
inline bool fails_gate(const Diagnosis& d, catalog::Severity level) { return d.gate && *d.gate >= level; }

// The diagnosis of these hits. `progress` holds the scan's progress and
// relaunch marks; `error_lines` the error-looking lines it sampled: where
// nothing was found, or only a first report, they become the starting
// points (pass starting_points).
Diagnosis correlate(std::vector<scan::Hit> hits, std::vector<scan::SourceRef> sources, const catalog::Catalog& catalog,
                    const CorrelateOptions& options = {}, const std::vector<scan::ProgressMark>& progress = {},
                    const std::vector<scan::ErrorLine>& error_lines = {});

} // namespace denpex::correlate
