// The command line's one definition (CLI11): every subcommand, option and
// help text. Parsing, --help, the completions and the man page all read it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "app.hpp"

namespace denpex::cli {

// Where the parsed values land.
struct Args {
  CommonArgs common;
  DiagnoseArgs diagnose;
  GrepArgs grep;
  std::string query; // explain
  SignaturesArgs signatures;
  std::string shell; // completion
  LspArgs lsp;
};

struct Commands {
  CLI::App* diagnose = nullptr;
  CLI::App* grep = nullptr;
  CLI::App* explain = nullptr;
  CLI::App* signatures = nullptr;
  CLI::App* completion = nullptr;
  CLI::App* manpage = nullptr;
  CLI::App* lsp = nullptr;
};

// --help wrapped to `width` columns: each option's description in the right
// column, continuation lines indented under it. Set it on the app before
// defining subcommands (they inherit it).
std::shared_ptr<CLI::Formatter> wrapping_formatter(std::size_t width);

// Defines denpex's subcommands on `app`, writing into `args`.
Commands define_commands(CLI::App& app, Args& args);

} // namespace denpex::cli
