// Pass: stack. Which launchers and frameworks the logs show, so that a fix
// can be given in the form the user's stack takes (issue 32): a Slurm job
// exports variables with #SBATCH --export, a pod sets them in its env:, a
// DeepSpeed multi-node launch forwards only some prefixes. A stack is shown
// when an entry tagged with its name matched: the launchers' own failure
// reports (torchelastic's, slurmstepd's, kubelet's) and the stack.* context
// entries that recognise a stack by its ordinary start-up lines.
#include "passes.hpp"

#include <algorithm>
#include <set>

namespace denpex::correlate::detail {

namespace {

// Tags that name a stack by another word.
std::string_view stack_of_tag(std::string_view tag) {
  if (tag == "torchelastic") {
    return "torchrun";
  }
  if (tag == "k8s") {
    return "kubernetes";
  }
  const auto& known = catalog::known_stacks();
  return std::find(known.begin(), known.end(), tag) != known.end() ? tag : std::string_view();
}

} // namespace

void pass_stack(State& s) {
  std::set<std::string_view> seen;
  std::set<std::uint32_t> entries;
  for (const auto& r : s.records) {
    entries.insert(r.hit->signature);
  }
  for (const auto e : entries) {
    for (const auto& tag : s.cat.at(e).tags) {
      if (const auto stack = stack_of_tag(tag); !stack.empty()) {
        seen.insert(stack);
      }
    }
  }
  for (const auto stack : catalog::known_stacks()) {
    if (seen.count(stack) != 0) {
      s.d.stacks.emplace_back(stack);
    }
  }
}

} // namespace denpex::correlate::detail
