// denpex::catalog — signature entries: what a failure looks like in a log and
// what to do about it. Data only; loading and validation live in catalog.hpp.
// This module never matches lines (that is the matcher's job).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <denpex/catalog/condition.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include <denpex/catalog/condition.hpp>

namespace re2 {
class RE2;
} // namespace re2

namespace denpex::catalog {

enum class Role { cause, symptom, context };
enum class Severity { info, warning, error, critical };

std::string_view to_string(Role r);
std::string_view to_string(Severity s);
std::optional<Role> parse_role(std::string_view s);
std::optional<Severity> parse_severity(std::string_view s);

// The areas an entry can belong to (design brief).
const std::vector<std::string_view>& known_areas();

struct Signal {
  std::string id;
  std::string pattern;     // RE2 syntax, matched against one line
  // "(?m)" + pattern, compiled once by the loader (which must check the
  // syntax anyway) and used by the matcher; shared, RE2 is immutable.
  std::shared_ptr<const re2::RE2> compiled;
  std::string description;
  std::string if_missing;  // the evidence to look for when this signal is absent
  bool anchor = true;      // false: never raises the entry alone
  // The entry needs only to know that the line occurs (a context entry that
  // recognises a stack by its per-iteration line): the matcher reports its
  // first match in each source and does not look for the others.
  bool presence = false;
  // What to read above a matched line (context/traceback.hpp): the Python
  // traceback it ends, or the C++ "terminate called" line naming its type.
  enum class Lookback { none, python_traceback, cxx_terminate } lookback = Lookback::none;
  // What the captures of a match must also satisfy (condition.hpp), or
  // nullopt: a match that fails it is no match, for every consumer.
  std::optional<Condition> when;
};

struct Example {
  std::string line;
  std::string signal;                          // expected signal id ("" = any)
  std::map<std::string, std::string> captures; // expected named captures
  // Expected identity the line's own context gives (context::parse_line):
  // rank, nranks, host, pid, gpu, pci. NCCL's "host:pid:tid [gpu]" prefix is
  // read there, not captured by each pattern.
  std::map<std::string, std::string> context;
  // log (a real log line), source (a format string from source code), doc
  // (a documentation page's own line), synthetic (built by us in a real
  // format: a documented layout with another code), or "" (unsaid).
  std::string origin;
};

struct Reference {
  std::string title;
  std::string url;
};

struct Fix {
  std::string summary;
  std::vector<std::pair<std::string, std::string>> env; // in file order
  std::vector<std::string> steps;
  std::vector<std::string> commands;
  // The fix in the form one stack takes where it has its own (a DeepSpeed
  // config key, a Megatron-LM flag, a vLLM or SGLang engine argument): stack
  // name (known_stacks()) -> what to set. Shown when the logs show that stack.
  std::vector<std::pair<std::string, std::string>> stacks;
};

// The stacks a fix may name, in the order a report prefers them when the
// logs show several: torchrun, accelerate, deepspeed, megatron, vllm,
// sglang, slurm, kubernetes.
const std::vector<std::string_view>& known_stacks();

struct Verify {
  std::string summary;
  std::vector<std::string> commands;
};

struct Signature {
  std::string id;
  std::string title;
  std::string area;
  Role role = Role::cause;
  Severity severity = Severity::error;
  int priority = 50;
  bool generic = false; // symptom that any cause can produce (a crash wrapper)
  // A cause whose line is printed after a process ended (srun's "task N:
  // Exited with exit code C"): it joins the incident that precedes it in
  // its episode as collateral, and stands alone only when none does.
  bool joins_earlier = false;
  std::vector<std::string> tags;
  std::vector<Signal> signals;
  std::vector<std::string> explains;
  std::vector<std::string> refines;
  // Signal ids of which at least one must also be seen before an anchor
  // raises the entry (nccl.nvls.cuda-700 needs evidence that NVLS was in use).
  std::vector<std::string> requires_any;
  std::string root_cause;
  Fix fix;
  Verify verify;
  std::string prevention;
  std::string affected;
  // Generic evidence (an exception, a process death) names its incident from
  // the line: "{type}: {message}" filled from the first hit's captures.
  // Incidents of such an entry fold by their filled headline, not by entry.
  std::string headline;
  std::vector<std::string> related;
  std::vector<Reference> references;
  std::vector<Example> match_examples;
  std::vector<std::string> no_match_examples;

  std::string file;     // where it was loaded from (display path)
  bool builtin = false; // embedded in the binary
};

} // namespace denpex::catalog
