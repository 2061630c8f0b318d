// denpex::util — a sink for problems that must not stop the run.
//
// One corrupt .gz among 300 files, one bad signature in a team's directory, a
// DFA that ran out of memory: each is recorded here and the run goes on. The
// CLI logs them as `denpex: error: <where>: <what>` and turns any error into
// exit code 2 (mold's "report every error, then stop at a checkpoint").
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <denpex/util/expected.hpp>

namespace denpex {

enum class Level { warning, error };

struct Diagnostic {
  Level level = Level::error;
  Error error;
};

// Thread-safe: readers on several threads may report at once.
class Diagnostics {
public:
  void add(Level level, Error error);
  void error(Error e) { add(Level::error, std::move(e)); }
  void warning(Error e) { add(Level::warning, std::move(e)); }

  // A snapshot, in the order the problems were reported.
  [[nodiscard]] std::vector<Diagnostic> items() const;
  [[nodiscard]] bool has_errors() const;
  [[nodiscard]] std::size_t size() const;

private:
  mutable std::mutex m_mutex;
  std::vector<Diagnostic> m_items;
};

// "where: what", then "\n  help: help" when there is help (no trailing
// newline): the body of a diagnostic, as the command line logs it.
std::string describe(const Error& e);
// "denpex: error: " or "denpex: warning: " followed by describe(d.error).
std::string format_diagnostic(const Diagnostic& d);

} // namespace denpex
