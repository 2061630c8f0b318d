// denpex command line: parse (options.cpp), run one subcommand, and turn
// what it returns into the exit status. The only place errors are printed.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <denpex/catalog/catalog.hpp>
#include <denpex/util/strings.hpp>

#include "app.hpp"
#include "completion.hpp"
#include "exit_code.hpp"
#include "log.hpp"
#include "options.hpp"

#ifndef DENPEX_VERSION
#define DENPEX_VERSION "0.0.0"
#endif

namespace denpex::cli {

namespace {

// "'diagnos' is not a subcommand; did you mean 'diagnose'?", or nothing when
// argv[1] is an option or a subcommand.
std::optional<Error> unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    return std::nullopt;
  }
  const auto subs = app.get_subcommands({});
  std::string names;
  std::string best;
  std::size_t best_d = 3; // suggest only close misspellings
  for (const auto* sub : subs) {
    if (sub->get_name() == argv[1]) {
      return std::nullopt;
    }
    if (!sub->get_group().empty()) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (const auto d = util::edit_distance(argv[1], sub->get_name()); d < best_d) {
      best_d = d;
      best = sub->get_name();
    }
  }
  return Error{ErrorKind::usage, "", fmt::format("'{}' is not a subcommand{}", argv[1],
                                                 best.empty() ? "" : "; did you mean '" + best + "'?"),
               "subcommands are " + names + "; `denpex help` lists them"};
}

// .denpex.json's defaults, under what the command line said.
Expected<void> apply_config(Args& args, const Commands& commands) {
  if (args.common.no_config) {
    return {};
  }
  TRY_ASSIGN(auto cfg, load_config());
  auto& common = args.common;
  common.signature_dirs.insert(common.signature_dirs.end(), cfg.signatures.begin(), cfg.signatures.end());
  args.diagnose.ignore.insert(args.diagnose.ignore.end(), cfg.ignore.begin(), cfg.ignore.end());
  if (!cfg.fail_on.empty() && commands.diagnose->count("--fail-on") == 0) {
    args.diagnose.fail_on = cfg.fail_on;
  }
  return {};
}

Status dispatch(const CLI::App& app, Args& args, const Commands& c, Diagnostics& diags) {
  if (c.completion->parsed()) {
    std::cout << completion_script(app, args.shell);
    return k_exit_ok;
  }
  if (c.manpage->parsed()) {
    std::cout << man_page(app, DENPEX_VERSION);
    return k_exit_ok;
  }
  if (auto applied = apply_config(args, c); !applied) {
    return tl::unexpected(applied.error());
  }
  if (c.diagnose->parsed()) {
    return run_diagnose(args.common, args.diagnose, diags);
  }
  if (c.grep->parsed()) {
    return run_grep(args.common, args.grep, diags);
  }
  if (c.explain->parsed()) {
    return run_explain(args.common, args.query, diags);
  }
  if (c.lsp->parsed()) {
    return run_lsp(args.common, args.lsp, diags);
  }
  return run_signatures(args.common, args.signatures, diags);
}

int run(int argc, char** argv) {
  CLI::App app{"denpex: diagnose failed ML training runs from their logs.\n"
               "Reads logs locally (nothing leaves the machine), recognises known failure signatures, separates the "
               "initiating failure from its downstream reports, and prints the root cause, the fix and how to verify it.",
               "denpex"};
  app.set_version_flag("--version", [] {
    // One entry per built-in file (the loader rejects anything else), so
    // nothing needs parsing here.
    return fmt::format("denpex {} (catalog {}, {} signatures)", DENPEX_VERSION, catalog::builtin_version(),
                       catalog::builtin_file_count());
  });
  app.require_subcommand(1);
  app.formatter(wrapping_formatter(text_width()));
  Args args;
  const auto commands = define_commands(app, args);

  // `denpex help` is --help; a mistyped subcommand gets the nearest one.
  if (argc >= 2 && std::string_view(argv[1]) == "help") {
    std::cout << app.help();
    return k_exit_ok;
  }
  if (auto unknown = unknown_subcommand(app, argc, argv)) {
    log_error(*unknown);
    return k_exit_error;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      return app.exit(e); // --help, --version
    }
    const std::string sub = argc >= 2 && argv[1][0] != '-' ? std::string(" ") + argv[1] : std::string();
    log_error(Error{ErrorKind::usage, "", e.what(), fmt::format("`denpex{} --help` lists the options", sub)});
    return k_exit_error;
  }
  configure_logging(args.common.verbose, args.common.color);
  Diagnostics diags;
  const auto status = dispatch(app, args, commands, diags);
  log_diagnostics(diags);
  if (!status) {
    log_error(status.error());
  }
  return exit_status(status, diags);
}

} // namespace

} // namespace denpex::cli

int main(int argc, char** argv) {
  denpex::cli::mark_start();
  denpex::cli::init_logging();
  std::signal(SIGPIPE, SIG_IGN);
  try {
    const int rc = denpex::cli::run(argc, argv);
    std::cout.flush();
    if (!std::cout) {
      // A reader that went away (`| head`) is not an error; a full disk or
      // /dev/full is: the report is cut short, and the status says so.
      if (errno == EPIPE) {
        return 0;
      }
      denpex::cli::log_error(denpex::Error{denpex::ErrorKind::io, "standard output",
                                           std::string("write failed: ") + std::strerror(errno), {}});
      return denpex::cli::k_exit_error;
    }
    return rc;
  } catch (const std::exception& e) {
    denpex::cli::log_error(denpex::Error{denpex::ErrorKind::invalid, "", e.what(), {}});
    return denpex::cli::k_exit_error;
  }
}
