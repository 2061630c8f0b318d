// denpex::report — printers of a finished Diagnosis. They format; they never
// decide anything (that is correlate). Every byte that comes from a log goes
// through util::escape_for_terminal (text) or util::sanitize_utf8 (JSON).
#pragma once

#include <cstdint>
#include <ostream>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>
#include <denpex/util/diagnostics.hpp>

namespace denpex::report {

struct RunInfo {
  std::string version;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  std::uint64_t sources = 0;
  std::uint64_t long_lines_cut = 0;
  std::vector<Diagnostic> diagnostics;
  std::uint64_t findings_files = 0; // denpex's own JSON Lines findings merged in this run (docs/cluster.md)
  // The exit-status gate (--fail-on): GitHub annotations are errors only for
  // what fails it; nullopt for --fail-on never (nothing is an error).
  std::optional<catalog::Severity> fail_on = catalog::Severity::error;
  // The directory relative paths are relative to (absolute, ending in '/'):
  // SARIF's SRCROOT. Empty: unknown.
  std::string working_dir;
};

struct TextOptions {
  bool color = false;
  std::size_t width = 100;
  bool timeline = true; // the terminal episode as a picture, when two timed lanes are involved
  bool full = false;    // every row of long tables (--full, -v); else the top rows and how many more
  static constexpr std::size_t k_collateral_rows = 6;
};

inline constexpr int k_json_schema_version = 1;

void print_text(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run,
                const TextOptions& options);
void print_json(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run);

// Every output format of `diagnose`, in the order --help lists them: its
// name (--format, --output), what it is for (--help, the completions, the man
// page) and its printer. The one list the command line, its checks and its
// completions are built from.
struct OutputFormat {
  std::string_view name;
  std::string_view help;
  void (*print)(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run,
                const TextOptions& text);
};
const std::vector<OutputFormat>& output_formats();
// nullptr for a name that is not a format.
const OutputFormat* find_output_format(std::string_view name);
// "text, json, ..., html".
std::string output_format_names();

// `denpex explain`: one entry, for people.
void print_entry(std::ostream& out, const catalog::Signature& sig, const catalog::Catalog& cat,
                 const TextOptions& options);

// "0-2,4-7" for a set of ranks; "-" when empty.
std::string format_ranks(const std::set<int>& ranks);

// "file:line" for an evidence line.
std::string location(const correlate::Diagnosis& d, const correlate::Evidence& e);
// What to call an incident: generic evidence by its own words (its filled
// headline, raw log text: escape it for the output), else the entry's title.
std::string incident_title(const correlate::Incident& inc, const catalog::Catalog& cat);
// Where in the code and who, for generic evidence: "raised at FILE:LINE in
// FUNC", "in the caller's code at ...", the exception chain, "raised by
// ranks 0-7 at the same time ...". Raw log text: escape it for the output.
std::vector<std::string> code_notes(const correlate::Diagnosis& d, const correlate::Incident& inc);

// Who printed a line, in parts: "rank 3" (or "ranks 0-7 (together)" when
// `together` is given, or "local rank 1"), "host node-017", "GPU
// 0000:91:00" (the device noun of the line's entry), "pid 2339". Parts whose
// value came from the log (host, bus id) are marked: escape those for the
// output.
struct WhoPart {
  std::string label;
  std::string value;
  bool from_log = false;
};
std::vector<WhoPart> who_parts(const correlate::Evidence& e, std::string_view device = "GPU",
                               const std::set<int>* together = nullptr);
// The parts joined by `sep`, log values passed through `escape`.
template <typename Escape>
std::string join_who(const std::vector<WhoPart>& parts, std::string_view sep, Escape escape) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) {
      out += sep;
    }
    out += p.label;
    out += ' ';
    out += p.from_log ? escape(p.value) : p.value;
  }
  return out;
}
// How a fix is shown for one incident (issue 32): the log to name where a
// command says {log}, and the stacks the logs show (Diagnosis::stacks).
// Without a diagnosis (`explain`): "LOG" and no stack.
struct FixContext {
  std::string log = "LOG";
  std::vector<std::string> stacks;
};
FixContext fix_context(const correlate::Diagnosis& d, const correlate::Incident& inc);

// A command with its {log} replaced by the context's log (shell-quoted when
// it needs quoting).
std::string with_log(std::string_view command, const FixContext& c);

// The entry's environment settings in the form the run's launcher takes:
// a pod's `env:` (Kubernetes), `#SBATCH --export=ALL,K=V` (Slurm), `export
// K=V` plus `.deepspeed_env` for what DeepSpeed's multi-node launcher does
// not forward (its runner forwards NCCL*, PYTHON*, UCX*, MV2*, MLFLOW*), or
// `export K=V`.
std::vector<std::string> env_lines(const catalog::Signature& sig, const FixContext& c);

// The entry's own fix for the first stack the logs show that it has one
// for, as "deepspeed: <what>", or "".
std::string stack_fix(const catalog::Signature& sig, const FixContext& c);

// The fix as commands: the stack's own fix, the env lines, then the entry's
// commands ({log} replaced), each once (an entry may list the export among
// its commands too).
std::vector<std::string> fix_commands(const catalog::Signature& sig, const FixContext& c = {});
// The entry's verify commands, {log} replaced.
std::vector<std::string> verify_commands(const catalog::Signature& sig, const FixContext& c = {});

// What the PCI bus id on an entry's lines names: "NIC" for network entries,
// "device" for storage, else "GPU".
std::string_view device_noun(const catalog::Signature& sig);


// Whether an unseen signal of `inc` is worth listing as missing evidence:
// only supporting signals are (anchors are other wordings of the failure
// itself, one of which was seen), and not one of the entry's alternative
// required evidence (`requires`) when another of them was seen (NVLS in use
// from an INFO line, or from the WARN's own location).
bool worth_listing_missing(const catalog::Signature& sig, const correlate::Incident& inc, std::uint32_t signal);

// "2024-11-29 17:59:58.123" (UTC-as-local), "+12345.678901s since boot", or "".
std::string format_time(const correlate::Evidence& e);
// A stamp as printed (no year inference): "11-29 17:59:58.000", "2024-11-29 ...Z".
std::string format_stamp(const context::Timestamp& t);

} // namespace denpex::report
