// denpex::report — the verdict: the one line that answers "what failed, who,
// and what do I do", printed first by the text report, alone by
// `diagnose --brief`, live by `--follow`, and carried by the JSON, Markdown
// and HTML reports (issue 32; docs/output-formats.md).
//
// It words a finished Diagnosis; it decides nothing. Fields that come from a
// log (a host name, an exception's message) are raw: escape them for the
// output (verdict_line does, for a terminal).
#pragma once

#include <string>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>

namespace denpex::report {

struct Verdict {
  // Whether a failure heads the diagnosis (an initiating incident or, with no
  // cause in the logs, the first report of one). False: the text in `status`.
  bool failure = false;
  bool no_cause = false;     // the head is a downstream report: the logs hold no cause
  bool hang = false;         // ... and the reports say the run hung (who and what come from the inference)
  std::string who;           // "rank 3 (node-017, GPU 3)", "local rank 1 on node-017", "node-017 GPU 0000:3b:00 (rank unknown)"
  std::string id;            // the entry's id
  std::string what;          // its title, or generic evidence's own words (raw log text)
  std::vector<std::string> fix; // commands to run ("export NCCL_NVLS_ENABLE=0"); may be empty
  std::string status;        // no failure: "no known failure signature found", ...
};

Verdict verdict(const correlate::Diagnosis& d, const catalog::Catalog& cat);

// "denpex: rank 3 (node-017, GPU 3) nccl.nvls.cuda-700: NCCL kernel hit ...
// · fix: export NCCL_NVLS_ENABLE=0", not wrapped (wrap_verdict wraps it
// without ever breaking the id or the rank). Log text is escaped for a
// terminal unless `escape` is false (JSON carries it raw).
std::string verdict_line(const Verdict& v, bool escape = true);
// The line wrapped to `width` columns, continuation lines indented by two;
// ends in '\n'.
std::string wrap_verdict(const Verdict& v, std::size_t width);

// What the diagnosis found, in a few words: "1 failure diagnosed", "2 errors
// the run recovered from", "no known failure signature found", ...
std::string summary_of(const correlate::Diagnosis& d);

// "rank 3 (node-017, GPU 3)": who printed an incident's first line, in the
// verdict's words (issue 32: only what identifies the line).
std::string describe_who(const correlate::Incident& inc, const catalog::Catalog& cat);

} // namespace denpex::report
