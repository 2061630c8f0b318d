// What every subcommand builds the same way (app.hpp).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <denpex/catalog/serialize.hpp>
#include <denpex/matcher/prefilter.hpp>

#include "app.hpp"

namespace denpex::cli {

namespace {

std::chrono::steady_clock::time_point g_started = std::chrono::steady_clock::now();

std::optional<std::filesystem::path> find_config() {
  std::error_code ec;
  auto dir = std::filesystem::current_path(ec);
  if (ec) {
    return std::nullopt;
  }
  for (int depth = 0; depth < 64; ++depth) {
    auto candidate = dir / ".denpex.json";
    if (std::filesystem::is_regular_file(candidate, ec)) {
      return candidate;
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) {
      break;
    }
    dir = dir.parent_path();
  }
  return std::nullopt;
}

// The strings of `j[key]`, appended to `out`; an error naming the key if it
// is not an array of strings.
Expected<void> read_strings(const nlohmann::json& j, const char* key, const std::string& path,
                            std::vector<std::string>& out) {
  if (!j.contains(key)) {
    return {};
  }
  const auto& v = j[key];
  if (!v.is_array() || std::any_of(v.begin(), v.end(), [](const auto& e) { return !e.is_string(); })) {
    return make_error(ErrorKind::invalid, path + ": /" + key, "expected an array of strings");
  }
  for (const auto& e : v) {
    out.push_back(e.get<std::string>());
  }
  return {};
}

} // namespace

void mark_start() { g_started = std::chrono::steady_clock::now(); }

double ms_since_start() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_started).count();
}

Expected<catalog::Catalog> load_catalog(const CommonArgs& common, Diagnostics& diags, bool examples) {
  catalog::LoadOptions lo;
  lo.examples = examples;
  lo.details_on_demand = !examples; // diagnose and grep: the prose of the entries a report shows, when it shows them
  lo.builtin = !common.no_builtin;
  lo.dirs = common.signature_dirs;
  lo.prebuilt = catalog::builtin_catalog_blob();
  const double from = ms_since_start();
  auto cat = catalog::load_catalog(lo, diags);
  spdlog::info("catalog: {} entries loaded in {:.1f} ms", cat.size(), ms_since_start() - from);
  if (common.strict && diags.has_errors()) {
    return make_error(ErrorKind::invalid, "--strict", "a signature file has an error; no log was read");
  }
  return cat;
}

Expected<matcher::Matcher> compile_matcher(const catalog::Catalog& cat, matcher::MatcherOptions mo,
                                           const CommonArgs& common) {
  mo.prefilter = !common.no_prefilter;
  mo.prebuilt_prefilter = matcher::builtin_prefilter_blob();
  const double from = ms_since_start();
  auto m = matcher::Matcher::compile(cat, mo);
  if (m) {
    spdlog::info("matcher: {}", m->describe());
    spdlog::info("start-up: matcher compiled in {:.1f} ms; {:.1f} ms since the process began", ms_since_start() - from,
                 ms_since_start());
  }
  return m;
}

source::InputOptions input_options(const WalkArgs& walk) {
  source::InputOptions io;
  io.include = walk.include;
  io.exclude = walk.exclude;
  return io;
}

context::FormatSet load_formats(const std::vector<std::string>& dirs, Diagnostics& diags) {
  auto files = context::builtin_format_files();
  for (const auto& dir : dirs) {
    auto more = context::read_format_directory(dir, diags);
    files.insert(files.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return context::FormatSet::load(files, diags);
}

bool use_color(const std::string& mode, int fd) {
  if (mode == "always") {
    return true;
  }
  if (mode == "never") {
    return false;
  }
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') {
    return false;
  }
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") {
    return false;
  }
  return ::isatty(fd) != 0;
}

std::size_t text_width() {
  if (const char* c = std::getenv("COLUMNS"); c != nullptr) {
    const long v = std::strtol(c, nullptr, 10);
    if (v >= 40 && v <= 1000) {
      return static_cast<std::size_t>(v);
    }
  }
  struct winsize ws {};
  if (::isatty(STDOUT_FILENO) != 0 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) {
    return ws.ws_col;
  }
  return 100;
}

std::vector<std::string> paths_or_stdin(std::vector<std::string> paths) {
  if (paths.empty()) {
    paths.push_back("-");
  }
  return paths;
}

Expected<ConfigFile> load_config() {
  ConfigFile cfg;
  const auto path = find_config();
  if (!path) {
    return cfg;
  }
  cfg.path = path->string();
  std::ifstream in(*path);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return make_error(ErrorKind::format, cfg.path, "not a JSON object");
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "signatures" && it.key() != "ignore" && it.key() != "fail_on") {
      return make_error(ErrorKind::invalid, cfg.path + ": /" + it.key(), "unknown key (known: signatures, ignore, fail_on)");
    }
  }
  if (auto r = read_strings(j, "signatures", cfg.path, cfg.signatures); !r) {
    return tl::unexpected(r.error());
  }
  if (auto r = read_strings(j, "ignore", cfg.path, cfg.ignore); !r) {
    return tl::unexpected(r.error());
  }
  for (auto& d : cfg.signatures) {
    if (std::filesystem::path(d).is_relative()) {
      d = (path->parent_path() / d).string();
    }
  }
  if (j.contains("fail_on")) {
    if (!j["fail_on"].is_string()) {
      return make_error(ErrorKind::invalid, cfg.path + ": /fail_on", "expected a string");
    }
    cfg.fail_on = j["fail_on"].get<std::string>();
  }
  return cfg;
}

} // namespace denpex::cli
