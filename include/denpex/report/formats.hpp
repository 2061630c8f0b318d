// denpex::report — machine-readable and paste-able printers of a finished
// Diagnosis: SARIF 2.1.0 (GitHub code scanning), GitHub Actions workflow
// commands, Markdown for a ticket, and JSON Lines (one finding per line).
//
// Like every printer they only format; they never decide anything. Every
// byte that comes from a log (lines, file names, hosts) is made valid UTF-8
// (util::sanitize_utf8) and escaped for the target format; JSON is dumped
// with error_handler_t::replace, so no printer throws on invalid UTF-8.
// Output is deterministic (no clock, no elapsed time), so golden tests can
// diff it. Formats are documented in docs/output-formats.md.
#pragma once

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <string_view>

#include <denpex/report/report.hpp>

namespace denpex::report {

// The SARIF schema URI written into `$schema` (OASIS errata01, the one
// GitHub code scanning validates against).
inline constexpr std::string_view k_sarif_schema_uri =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

// SARIF 2.1.0: one run; one rule per catalog entry that appears in a result;
// one result per incident (collateral and context as relatedLocations) and a
// `note` result per unexplained symptom group.
void print_sarif(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run);

// GitHub Actions workflow commands: one `::error|warning|notice file=..,line=..,title=..::msg`
// line per incident and per unexplained group; one `::notice` when nothing was found.
void print_github(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run);

// GitHub-flavoured Markdown to paste into a ticket.
void print_markdown(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat,
                    const RunInfo& run);

// JSON Lines: {"type":"incident"|"unexplained"|"inference"|"diagnostic"|"summary", ...}, one object per
// line, each carrying its own source file and host so per-node outputs can be concatenated.
void print_jsonl(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run);

// Prometheus text exposition for node_exporter's textfile collector: per
// incident a denpex_incident sample with bounded labels (signature,
// severity, area, node, rank, gpu, initiating; never log text), lines per
// signature, whether an initiating failure was found, and the failure's time
// span from the logs. docs/monitoring.md.
void print_prometheus(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat,
                      const RunInfo& run);

// FILE:LINE:COLUMN: SEVERITY: [id] message, one line per incident, per
// collateral group and per unexplained group: what VS Code problem matchers,
// Vim's quickfix and Emacs's compilation mode read. docs/editors.md.
void print_gcc(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run);

// One self-contained HTML page (inline CSS, JavaScript and SVG; no network
// fetch): the headline incident with fix and verify, an SVG timeline of the
// terminal episode (details on hover and click), collateral, evidence and
// missing facts; light and dark themes; every log byte escaped.
void print_html(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run);

// `denpex grep`, one matched line. Text: `FILE:LINE: ID rank=R time=T: TEXT`
// (escaped for a terminal). JSON: one object per line
// (schemas/denpex-grep.schema.json).
void print_grep_line(std::ostream& out, const scan::Hit& h, const scan::SourceRef& src,
                     const catalog::Signature& sig);
void print_grep_json(std::ostream& out, const scan::Hit& h, const scan::SourceRef& src,
                     const catalog::Signature& sig);

// --- Escaping helpers (exposed for tests) ---------------------------------

// GitHub workflow-command escaping of a message: % -> %25, \r -> %0D, \n -> %0A.
std::string github_escape_data(std::string_view s);
// ... of a property value (file, title): additionally : -> %3A and , -> %2C.
std::string github_escape_property(std::string_view s);

// A Markdown code span holding `s` literally: fenced by a backtick run longer
// than any inside it, padded with spaces when `s` starts or ends with a
// backtick. Newlines become spaces; with `in_table`, `|` becomes `\|` (GFM
// tables split cells on `|` even inside code spans).
std::string markdown_code_span(std::string_view s, bool in_table = false);
// A fence (``` or longer) that does not occur at the start of any line of `s`.
std::string markdown_fence_for(std::string_view s);

// Percent-encodes a path as a relative SARIF artifact URI: unreserved
// characters and '/' stay, everything else (':', ' ', '%', '#', '?', bytes
// >= 0x80) becomes %XX. A path with no name ("") becomes "unknown".
std::string sarif_uri(std::string_view path);

// A stable fingerprint (16 hex digits, FNV-1a 64) of signature id, file and line.
std::string finding_fingerprint(std::string_view signature_id, std::string_view file, std::uint64_t line);

} // namespace denpex::report
