// denpex::correlate — turns matched lines into incidents.
//
// Pure: takes hits (matched lines with their context) and the catalog, and
// returns a Diagnosis. No I/O. Rules (docs/correlator.md):
//  1. Causes seed incidents, one per (entry, GPU bus id when the line names
//     one); repeats across ranks and lines fold into one with counts.
//  2. On one line, the most specific cause wins; symptoms on that line fold in.
//  3. The initiating failure is the earliest cause where clocks compare,
//     else by priority and input position. Generic announcements (priority
//     <= 30) never initiate while a concrete cause exists.
//  4. A cause that `explains` another entry turns later hits of it into its
//     collateral (Xid 79 -> Xid 45); symptoms join the earliest preceding
//     incident that explains them (generic ones join the initiating one).
//  5. Symptom-only runs: watchdog timeouts are compared by rank, SeqNum and
//     OpType to name the missing or lagging rank.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/context/context.hpp>

namespace denpex::correlate {

// One matched line, owned (copied out of the reader's buffer).
struct Hit {
  std::uint32_t signature = 0;
  std::uint32_t signal = 0;
  std::uint32_t source = 0;
  std::uint64_t line_no = 0;
  std::string text; // clipped
  std::vector<std::pair<std::string, std::string>> captures;
  context::LineContext ctx;
  std::uint64_t count = 1;        // this hit plus the repeats folded into it
  std::uint64_t last_line_no = 0; // of the last folded repeat
};

struct SourceRef {
  std::string name;
  std::optional<std::int64_t> mtime;
};

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

struct Incident {
  std::uint32_t signature = 0;
  Evidence first;
  std::uint64_t count = 0;
  std::set<int> ranks;
  std::set<std::string> hosts;
  std::string pci;
  std::vector<SignalStatus> signals; // one per signal of the entry
  std::vector<Group> collateral;     // symptoms and explained causes
  std::vector<Group> context;        // context entries that refine it
  std::vector<std::string> missing;  // evidence that would confirm it
  bool initiating = false;
  std::string rule;                  // why this one initiates (initiating only)
  Confidence confidence = Confidence::medium;
  std::string recovered;             // training progressed after it: not the cause of the crash
  std::string caused_by;             // the line itself names an earlier cause
  std::string inferred;              // set when no line of the cause itself was seen
};

// What symptom-only logs still say (rule 5).
struct Inference {
  std::string summary;
  std::vector<int> missing_ranks;
  std::vector<int> lagging_ranks;
  std::vector<std::string> mismatches; // "SeqNum 12: ALLREDUCE on ranks 0-6, BROADCAST on rank 7"
  int world_size = 0;
  std::string world_size_from;
  std::vector<std::string> next_steps;
};

// A line that looks like an error but matched no signature (rule 10).
struct ErrorLine {
  std::uint32_t source = 0;
  std::uint64_t line_no = 0;
  std::string text;
  context::LineContext ctx;
};

// The last training-progress line seen in a source (a step/iteration with a
// finite loss, a tqdm bar): a cause followed by progress was recovered from.
struct ProgressMark {
  std::uint32_t source = 0;
  std::uint64_t line_no = 0;
  context::Timestamp time;
  std::string text;
};

// Error-looking lines grouped by message template (numbers masked).
struct StartingPoint {
  std::string template_text;
  std::uint64_t count = 0;
  std::set<int> ranks;
  Evidence first;
};

struct Diagnosis {
  std::vector<SourceRef> sources;
  std::vector<Incident> incidents;  // the initiating one first, then by time
  std::vector<Group> unexplained;   // symptoms no incident explains
  std::optional<Inference> inference;
  std::vector<StartingPoint> starting_points; // only when nothing else was found
  std::uint64_t hits = 0;
  std::string clock_note;           // how times were normalised
  int assumed_year = 0;
};

struct CorrelateOptions {
  std::int64_t skew_us = 2'000'000; // causes this close count as concurrent
  std::int64_t progress_margin_us = 60'000'000; // progress this long after a cause means it was recovered from
  int now_year = 2026;              // last resort for year-less stamps
  int assume_year = 0;              // --year: the year of stamps that print none (0 = infer)
};

Diagnosis correlate(std::vector<Hit> hits, std::vector<SourceRef> sources, const catalog::Catalog& catalog,
                    const CorrelateOptions& options = {}, const std::vector<ProgressMark>& progress = {});

// Rule 10: when the diagnosis found no incident and no inference, groups the
// sampled error-looking lines by template (numbers masked) and keeps the
// earliest `max_groups`, so the reader still gets a starting point.
void add_starting_points(Diagnosis& d, const std::vector<ErrorLine>& lines, const CorrelateOptions& options = {},
                         std::size_t max_groups = 10);

} // namespace denpex::correlate
