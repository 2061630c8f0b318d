// denpex::correlate — the words for the correlator's decisions.
//
// The correlator decides with data (Decision, Episode, Inference, ClockFacts);
// every printer words them through these functions, so text, JSON, SARIF,
// Markdown and GitHub annotations say the same thing. Nothing here decides.
#pragma once

#include <string>
#include <vector>

#include <denpex/correlate/correlate.hpp>

namespace denpex::correlate {

// "0-3,5,7-9"
std::string format_ranks(const std::vector<int>& ranks);

// Why the initiating incident initiates: "earliest cause by timestamp; ...".
std::string describe(const Decision& decision, const Diagnosis& d);

// One line about an incident's episode when it matters: recovered from,
// or superseded by a later episode. Empty when there is nothing to say.
std::string describe_recovered(const Incident& inc, const Diagnosis& d);
std::string describe_earlier_episode(const Incident& inc, const Diagnosis& d);
// What would confirm an incident, in words: "the traceback above the
// exception (...)", one per MissingFact, in order.
std::string describe(const MissingFact& m, const Incident& inc, const catalog::Catalog& cat);
std::vector<std::string> describe_missing(const Incident& inc, const catalog::Catalog& cat);

// "inferred: the Xid 149 line itself is not in these logs; ..." or empty.
std::string describe_inferred(const Incident& inc);

// Generic evidence raised by several ranks at once: "raised by ranks 0-7
// at the same time: no single rank started it; ...", or empty.
std::string describe_simultaneous(const Incident& inc);
// An exception raised while handling (or from) an earlier one: "raised
// while handling KeyError: 'x' (train.log:9), the first exception of its
// chain", or empty.
std::string describe_chain(const Incident& inc, const Diagnosis& d);
// "rank 3 from NCCL's init line train.log:17: pid 40003 on node-000 (GPU
// 0000:91:00) is rank 3 of 16", or empty when the line named its own rank.
std::string describe_identity(const Evidence& e, const Diagnosis& d);
// "rank 4 from the launcher's report at train.log:26: the first worker it
// saw fail (...)", "rank 1 from another line of the same failure, ...", or
// empty when the incident's first line named its own rank (pass who).
std::string describe_rank_from(const Incident& inc, const Diagnosis& d);
// "/workspace/model.py:88 in build"
std::string format_frame(const context::Frame& f);

// "episode 2 of 2 (began after 72 min of quiet at 2024-11-29 06:14:00 UTC; ended the run)"
std::string describe(const Episode& e, std::size_t index, const Diagnosis& d);

// How stamps were normalised ("" when nothing needed saying).
std::string describe(const ClockFacts& clocks, int year);
// "these logs hold 2 separate runs: job 4711 (...); job 4802 (...). The
// initiating failure is job 4802's; ...", or "" with fewer than two runs.
std::string describe_runs(const Diagnosis& d);
// The same in one clause, for a report's first screen: "these logs hold 2
// separate runs; the initiating failure is job 4802's".
std::string describe_runs_briefly(const Diagnosis& d);

// Symptom-only inference.
std::string summary(const Inference& inf);
std::string world_size_from(const Inference& inf);
std::vector<std::string> next_steps(const Inference& inf);
// The verdict's words for a run that hung with no error line (issue 32):
// who the reports point at ("rank 5 (never reported)", "ranks 3,7 (behind)",
// "no rank stands out") and what hung ("ALLGATHER SeqNum 1207 timed out
// after 600 s on 7 of 8 ranks"; "the first collective (SeqNum 1) never
// completed: the transport never worked").
std::string hang_who(const Inference& inf);
std::string hang_what(const Inference& inf);

} // namespace denpex::correlate
