// `denpex completion bash|zsh|fish`: shell completion scripts, generated
// from the command line's own definition so that they cannot drift from it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace denpex::cli {

// The shells a script can be generated for.
const std::vector<std::string>& completion_shells();

// The script for `shell` over `app`'s subcommands and options, or empty for
// an unknown shell. An option's type name says what its value is
// (completion.cpp): a choice (CLI::IsMember), DIR, PATH, ID, FORMAT=PATH.
std::string completion_script(const CLI::App& app, std::string_view shell);

// The man page (troff), from the same definition: every subcommand and
// option with its description, exit statuses, environment, files.
std::string man_page(const CLI::App& app, std::string_view version);

} // namespace denpex::cli
