// Exit codes (docs/cli.md): diagnose 0 = nothing at or above --fail-on,
// 1 = failure diagnosed, 2 = usage or input error; grep 0 = matched,
// 1 = no match, 2 = error. An error wins, except grep -q with a match and
// an interrupted run (128 + the signal).
//
// Subcommands say what they found (an Outcome); main alone turns it, the
// error that stopped a subcommand and the diagnostics it left into the
// process's exit status (exit_status below), so no subcommand can print
// "denpex: error:" and still exit 0.
#pragma once

#include <denpex/util/diagnostics.hpp>
#include <denpex/util/expected.hpp>

namespace denpex::cli {

enum ExitCode : int {
  k_exit_ok = 0,
  k_exit_found = 1,
  k_exit_error = 2,
};

// What a finished subcommand found. `final` marks an answer no later error
// changes: grep -q with a match (grep's convention) and an interrupted run,
// whose status is the shell's 128 + signal.
struct Outcome {
  int code = k_exit_ok;
  bool final = false;

  Outcome(ExitCode c) : code(c) {} // NOLINT(google-explicit-constructor): `return k_exit_ok;`
  static Outcome answered(int code) {
    Outcome o(k_exit_ok);
    o.code = code;
    o.final = true;
    return o;
  }
};

// A finished command: what it found, or the error that stopped it.
using Status = Expected<Outcome>;

// The one exit-code decision: a stopping error is 2; an error in `diags`
// wins over what was found unless the answer is final.
inline int exit_status(const Status& status, const Diagnostics& diags) {
  if (!status) {
    return k_exit_error;
  }
  if (status->final) {
    return status->code;
  }
  return diags.has_errors() ? k_exit_error : status->code;
}

} // namespace denpex::cli
