// How denpex speaks on stderr: one spdlog logger, `denpex: LEVEL: message`.
//
// Errors and warnings always show; `-v` adds `info` lines: which matcher
// path runs, start-up and phase timings, files a directory walk skipped.
// Library modules log through spdlog's default logger; nothing else in the
// program writes to stderr except the progress line and --follow's live
// updates, which are for a person watching, not diagnostics.
#pragma once

#include <string>

#include <denpex/util/diagnostics.hpp>

namespace denpex::cli {

// Installs the logger: warnings and errors, coloured when stderr is a terminal.
void init_logging();
// After parsing: `-v` shows info lines; --color decides the colour.
void configure_logging(bool verbose, const std::string& color_mode);

// Every diagnostic, in the order reported, then the error that stopped the
// command (if any). Log text in them is escaped for the terminal.
void log_diagnostics(const Diagnostics& diags);
void log_error(const Error& e);

} // namespace denpex::cli
