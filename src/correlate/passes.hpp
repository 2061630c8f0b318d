// denpex::correlate — the passes and the state they share (private).
//
// correlate() is this list, in this order; each pass is a function of the
// State with its own unit tests (tests/unit/test_correlate_passes.cpp):
//
//   pass_clocks       year for year-less stamps, clock domains       clocks.cpp
//   pass_runs         logs of separate runs read together            runs.cpp
//   pass_identity     rank, host, GPU of every record; the identity  identity.cpp
//                     map (NCCL init lines: process, bus id -> rank)
//   pass_fold         raised entries, one line one cause, one        fold.cpp
//                     incident per (entry, GPU), supporting signals
//   pass_episodes     progress and quiet gaps split the timeline     episodes.cpp
//   pass_causality    named causes, `explains`, same event twice     causality.cpp
//   pass_choose       the initiating failure in the terminal episode choose.cpp
//   pass_attach       symptoms and context join incidents            attach.cpp
//   pass_missing      evidence that would confirm each incident      missing.cpp
//   pass_symptoms_only  with no cause: who is missing or behind      symptoms_only.cpp
//   pass_fallback     with no cause: the most upstream report heads  fallback.cpp
//   pass_who          a head that names no rank: its other lines',   who.cpp
//                     or the launcher's first failed worker
//   pass_stack        the stacks the logs show (fixes in their form) stack.cpp
//   pass_gate         what fails --fail-on, and at which severity    gate.cpp
//   pass_starting_points  with nothing found: error-looking lines    starting_points.cpp
//                     no entry named, and the line above a first report
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>

namespace denpex::correlate::detail {

// Causes at or below this priority are wrappers (an NCCL error code, a
// generic "unhandled CUDA error"): they never initiate while a concrete
// cause exists (docs/signature-format.md, "priority").
constexpr int k_generic_priority = 30;

// A time on one clock: domain 0 is the normalised wall clock shared by all
// sources; domain N+1 is source N's own seconds-since-boot (raw dmesg), which
// compares only with itself.
struct Stamp {
  std::int64_t t = 0;
  std::uint32_t domain = 0;
};
using Time = std::optional<Stamp>;

inline bool comparable(const Time& a, const Time& b) { return a && b && a->domain == b->domain; }

// One piece of evidence: a hit with its clock and identity resolved.
struct Record {
  const scan::Hit* hit = nullptr;
  std::optional<std::int64_t> wall_us; // wall clock only (for the report)
  Time stamp;                          // when the line was printed
  Time began;                          // when what it reports began (a watchdog's Timeout(ms) before it)
  std::optional<int> rank;
  context::Origin rank_origin = context::Origin::capture; // when the line's context had none
  std::string host;
  context::Origin host_origin = context::Origin::capture; // when the line's context had none
  std::string pci;       // the GPU the line names (its own bus id, or its entry's capture)
  std::string shown_pci; // the GPU of its process, from the identity map (reported, never matched on)
  bool raised = false; // its entry was raised (an anchor signal, required evidence seen)
  bool folded = false; // a more specific cause on the same line took it, or a later exception of its chain
  std::shared_ptr<const context::Traceback> traceback; // of its line (whichever entry's hit read it)
  std::vector<context::ChainedException> later;        // exceptions raised from this one (a direct-cause chain)
};

// An incident while the passes build it.
struct Work {
  Incident inc;
  Time first_time;
  // The earliest and latest stamps its lines printed themselves (borrowed
  // ones say little about when): how far apart its ranks raised it.
  Time own_earliest;
  Time own_latest;
  // The last line of it in each file: a file that began again below all of
  // them ran it in an earlier run (relaunch marks).
  std::map<std::uint32_t, std::uint64_t> last_lines;
  bool absorbed = false; // became another incident's collateral
};

// The state changes shape once. Before pass_choose the incidents are
// `work` (absorbed ones included) and Diagnosis::incidents is empty; choose
// moves the live ones into Diagnosis::incidents, the initiating one first,
// with `times` parallel to them (each one's first_time), and empties `work`.
// check_state asserts what each shape promises; correlate() calls it after
// every pass.
enum class Shape { working, chosen };

struct State {
  const catalog::Catalog& cat;
  const CorrelateOptions& options;
  const std::vector<scan::ProgressMark>& progress;
  Diagnosis& d;
  int ref_year = 0;
  std::optional<std::int64_t> latest_us; // the latest stamp with a year (or file mtime)
  std::vector<Record> records;           // one per hit, in hit order
  std::vector<Work> work;                // incidents, absorbed ones included until choose
  std::vector<Time> times;               // after choose: first_time of d.incidents[i]
  // After runs: source id -> index into d.runs (-1: in no run); empty when
  // the logs hold one run or none.
  std::vector<int> run_of_source;
};

// Asserts the invariants of `shape` (above) and of every incident: at most
// one initiates, and it is the first; a decision belongs to the initiating
// incident only; one signal status per signal of its entry; episode indexes
// in range. A broken one is a bug, never a diagnosis (DENPEX_ASSERT).
void check_state(const State& s, Shape shape);

// Whether sources `a` and `b` belong to different runs (pass runs): one
// run's training progress says nothing about another run's failure.
inline bool different_runs(const State& s, std::uint32_t a, std::uint32_t b) {
  if (s.run_of_source.empty() || a >= s.run_of_source.size() || b >= s.run_of_source.size()) {
    return false;
  }
  return s.run_of_source[a] >= 0 && s.run_of_source[b] >= 0 && s.run_of_source[a] != s.run_of_source[b];
}

// The progress marks the passes use: every progress line; of each source's
// relaunch marks (the file began again) the last one with failure evidence
// below it (a run that began again and printed no failure says nothing
// about the runs before it: it may still be starting); and a completion
// mark for each hit of an entry tagged run-completed.
std::vector<scan::ProgressMark> marks_that_split(const std::vector<scan::ProgressMark>& progress, const std::vector<scan::Hit>& hits,
                                          const catalog::Catalog& cat);

// The passes, in order (see the table above).
void pass_clocks(State& s, const std::vector<scan::Hit>& hits);
void pass_identity(State& s);
void pass_fold(State& s);
void pass_episodes(State& s);
void pass_causality(State& s);
void pass_choose(State& s);
void pass_attach(State& s);
void pass_missing(State& s);
void pass_symptoms_only(State& s);
void pass_fallback(State& s);
void pass_who(State& s);
void pass_stack(State& s);
void pass_gate(State& s);
void pass_runs(State& s);
void pass_starting_points(State& s, const std::vector<scan::Hit>& hits, const std::vector<scan::ErrorLine>& lines);
// The scheduler job id a log's path names (slurm-4711.out, train.o4711,
// job_4711/rank0.log), or "" (pass runs).
std::string job_of_path(std::string_view path);

// A line without a stamp of its own took the nearest earlier one: it was
// printed at or after that time (docs/correlator.md, "Episodes").
inline bool borrowed_stamp(const scan::Hit& h) { return h.ctx.time.origin == context::Origin::neighbour; }
inline bool borrowed_stamp(const Work& w) { return w.inc.first.ctx.time.origin == context::Origin::neighbour; }

// How close two stamps must be to count as concurrent: the skew window, plus
// the cross-node clock tolerance when they come from different nodes (both
// name hosts, and none in common).
std::int64_t window(const State& s, const std::set<std::string>& a, const std::set<std::string>& b);
std::int64_t window(const State& s, const std::set<std::string>& a, const std::string& b);

// Shared helpers.
std::string capture(const scan::Hit& h, std::string_view name);
Time stamp_of(const Evidence& e);
Time stamp_of_mark(const scan::ProgressMark& m, int ref_year);
// The training progress printed well after `e` (its stamp `first_time`, or,
// without one, enough lines later in its own file), if any: the run went on.
// With `relaunch`, also a relaunch mark below `e` in its own file.
std::optional<ProgressRef> progress_after(const State& s, const Evidence& e, const Time& first_time,
                                          bool relaunch = true);
// Whether record `r` comes before the line kept as `e`: by time where both
// are on one clock, else by input position.
bool earlier_than(const Record& r, const Evidence& e);
Evidence evidence_of(const Record& r);
// The ranks that reported record `r`: its own, and those of the same report
// a findings file folded into its hit (Hit::also_ranks).
void insert_ranks(std::set<int>& ranks, const Record& r);
void add_to_group(std::vector<Group>& groups, const Record& r);
// The catalog entry for Xid `n` ("xid.79"), if the catalog has one.
std::optional<std::size_t> xid_entry(const catalog::Catalog& cat, std::string_view n);

} // namespace denpex::correlate::detail
