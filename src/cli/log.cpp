#include "log.hpp"

#include <memory>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <denpex/util/strings.hpp>

#include "app.hpp"

namespace denpex::cli {

namespace {

// Log text (file names, lines) escaped for the terminal, part by part so
// that the help line keeps its own line.
void log_one(Level level, const Error& e) {
  const Error shown{e.kind, util::escape_for_terminal(e.where), util::escape_for_terminal(e.what),
                    util::escape_for_terminal(e.help)};
  spdlog::log(level == Level::error ? spdlog::level::err : spdlog::level::warn, "{}", describe(shown));
}

} // namespace

void init_logging() {
  auto logger = spdlog::stderr_color_mt("denpex");
  // "denpex: error: FILE: what": the level in spdlog's own words (warning,
  // error, info), coloured by the sink when it colours at all.
  logger->set_pattern("denpex: %^%l%$: %v");
  logger->set_level(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

void configure_logging(bool verbose, const std::string& color_mode) {
  auto logger = spdlog::default_logger();
  logger->set_level(verbose ? spdlog::level::info : spdlog::level::warn);
  for (auto& sink : logger->sinks()) {
    if (auto colored = std::dynamic_pointer_cast<spdlog::sinks::stderr_color_sink_mt>(sink)) {
      colored->set_color_mode(use_color(color_mode, STDERR_FILENO) ? spdlog::color_mode::always
                                                                   : spdlog::color_mode::never);
    }
  }
}

void log_diagnostics(const Diagnostics& diags) {
  for (const auto& d : diags.items()) {
    log_one(d.level, d.error);
  }
}

void log_error(const Error& e) { log_one(Level::error, e); }

} // namespace denpex::cli
