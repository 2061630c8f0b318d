// Exit codes (docs/cli.md): diagnose 0 = nothing at or above --fail-on,
// 1 = failure diagnosed, 2 = usage or input error; grep 0 = matched,
// 1 = no match, 2 = error. An error wins, except grep -q with a match.
#pragma once

namespace denpex::cli {

enum ExitCode : int {
  k_exit_ok = 0,
  k_exit_found = 1,
  k_exit_error = 2,
};

} // namespace denpex::cli
