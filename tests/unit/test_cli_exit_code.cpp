// The one exit-code decision (src/cli/exit_code.hpp; issue 33): what a
// subcommand found, the error that stopped it and the errors it reported.
#include <catch2/catch.hpp>

#include "../../src/cli/exit_code.hpp"

using denpex::Diagnostics;
using denpex::Error;
using denpex::ErrorKind;
using namespace denpex::cli;

TEST_CASE("cli::exit_status: what was found, when nothing went wrong", "[cli]") {
  Diagnostics clean;
  CHECK(exit_status(Status(k_exit_ok), clean) == 0);
  CHECK(exit_status(Status(k_exit_found), clean) == 1);
}

TEST_CASE("cli::exit_status: a stopping error is 2", "[cli]") {
  Diagnostics clean;
  const Status stopped = tl::unexpected(Error{ErrorKind::usage, "x", "bad", {}});
  CHECK(exit_status(stopped, clean) == 2);
}

TEST_CASE("cli::exit_status: a reported error wins over what was found", "[cli]") {
  Diagnostics diags;
  diags.error(Error{ErrorKind::io, "a.log", "unreadable", {}});
  CHECK(exit_status(Status(k_exit_ok), diags) == 2);
  CHECK(exit_status(Status(k_exit_found), diags) == 2);
}

TEST_CASE("cli::exit_status: a warning does not change the status", "[cli]") {
  Diagnostics diags;
  diags.warning(Error{ErrorKind::io, "a.log", "truncated", {}});
  CHECK(exit_status(Status(k_exit_found), diags) == 1);
}

TEST_CASE("cli::exit_status: a final answer stands over errors (grep -q, a signal)", "[cli]") {
  Diagnostics diags;
  diags.error(Error{ErrorKind::io, "a.log", "unreadable", {}});
  CHECK(exit_status(Status(Outcome::answered(0)), diags) == 0);
  CHECK(exit_status(Status(Outcome::answered(130)), diags) == 130);
}
