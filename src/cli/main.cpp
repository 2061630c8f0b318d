// denpex command line: parse (CLI11, no I/O), build the configuration, run.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ctime>
#include <cstring>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/matcher/prefilter.hpp>
#include <denpex/report/formats.hpp>
#include <denpex/report/redact.hpp>
#include <denpex/report/report.hpp>
#include <denpex/scan/scan.hpp>
#include <denpex/selftest/selftest.hpp>
#include <denpex/context/formats.hpp>
#include <denpex/source/follow.hpp>
#include <denpex/source/input.hpp>
#include <denpex/util/strings.hpp>

#include "catalog_doc.hpp"
#include "completion.hpp"
#include "exit_code.hpp"

#ifndef DENPEX_VERSION
#define DENPEX_VERSION "0.0.0"
#endif

namespace denpex::cli {

namespace {

// Every --format, in the order --help lists them.
constexpr std::array<std::string_view, 9> k_formats = {"text",     "json",       "jsonl", "sarif", "github",
                                                       "markdown", "prometheus", "gcc",   "html"};

// When main() began: -v reports how long start-up (catalog load and matcher
// compile) took.
std::chrono::steady_clock::time_point g_started;

struct CommonArgs {
  std::vector<std::string> signature_dirs;
  bool no_builtin = false;
  bool strict = false;
  std::string color = "auto";
  bool quiet = false;
  bool no_prefilter = false;
  std::size_t chunk_size = 0; // hidden test seam: reader buffer in bytes (0 = 1 MiB)
};

struct DiagnoseArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string fail_on = "error";
  std::vector<std::string> ignore;
  unsigned jobs = 0;
  int year = 0;
  double clock_skew_s = 1.0; // --clock-skew: nodes' clocks agree within this
  bool follow = false;
  int follow_idle = 30;
  bool verbose = false;
  bool redact = false;
  std::uint64_t max_input_gib = 64;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::string node;
  std::vector<std::string> formats;
  std::vector<std::string> outputs; // FORMAT=PATH
  bool no_timeline = false;
};

struct GrepArgs {
  std::vector<std::string> paths;
  std::vector<std::string> signature;
  std::vector<std::string> area;
  std::string role;
  bool count = false;
  bool json = false;
  bool verbose = false;
  bool redact = false;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::vector<std::string> formats;
};

// Bytes and files done, on stderr, only when stderr is a terminal and the
// run takes more than a second. Cleared before the report is printed.
class Progress {
public:
  Progress(bool enabled, std::size_t units) : m_units(units) {
    if (enabled) {
      m_thread = std::thread([this] { loop(); });
    }
  }
  ~Progress() { stop(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void stop() {
    if (m_thread.joinable()) {
      m_stop = true;
      m_thread.join();
      if (m_shown) {
        std::fprintf(stderr, "\r\x1b[K");
        std::fflush(stderr);
      }
    }
  }

  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> units_done{0};
  std::atomic<std::uint64_t> units_total{0}; // set once the inputs are listed
  std::atomic<std::uint64_t> bytes_total{0}; // 0: unknown

private:
  void loop() {
    const auto start = std::chrono::steady_clock::now();
    while (!m_stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (secs < 1.0 || m_stop) {
        continue;
      }
      const auto line = render(secs);
      std::fprintf(stderr, "\r\x1b[K%s", line.c_str());
      std::fflush(stderr);
      m_shown = true;
    }
  }

  // "denpex: 1182 of 2048 MB (58%), 3/4 files, 410 MB/s, 2 s left"; without
  // a known size (compressed inputs, stdin), bytes read and the rate only.
  [[nodiscard]] std::string render(double secs) const {
    const double mb = static_cast<double>(bytes.load()) / 1e6;
    const double rate = mb / secs;
    const auto units = units_total.load() != 0 ? units_total.load() : m_units;
    const auto files = fmt::format("{}/{} file{}", units_done.load(), units, units == 1 ? "" : "s");
    const double total_mb = static_cast<double>(bytes_total.load()) / 1e6;
    if (total_mb <= 0 || mb > total_mb) {
      return fmt::format("denpex: {:.0f} MB read, {}, {:.0f} MB/s", mb, files, rate);
    }
    const double left = rate > 0 ? (total_mb - mb) / rate : 0;
    return fmt::format("denpex: {:.0f} of {:.0f} MB ({:.0f}%), {}, {:.0f} MB/s, {:.0f} s left", mb, total_mb,
                       100.0 * mb / total_mb, files, rate, left);
  }

  std::size_t m_units;
  std::atomic<bool> m_stop{false};
  bool m_shown = false;
  std::thread m_thread;
};

void print_diagnostics(const Diagnostics& diags) {
  for (const auto& d : diags.items()) {
    std::cerr << util::escape_for_terminal(format_diagnostic(d)) << "\n";
  }
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

// `examples`: false for diagnose and grep, which never show them.
std::optional<catalog::Catalog> load(const CommonArgs& common, Diagnostics& diags, bool examples = true) {
  catalog::LoadOptions lo;
  lo.examples = examples;
  lo.builtin = !common.no_builtin;
  lo.dirs = common.signature_dirs;
  auto cat = catalog::load_catalog(lo, diags);
  if (common.strict && diags.has_errors()) {
    // --strict: a bad entry in any catalog stops the run before it reads a log.
    return std::nullopt;
  }
  return cat;
}

// .denpex.json, found from the current directory upward: a team's defaults.
//   {"signatures": ["dir", ...], "ignore": ["id", ...], "fail_on": "warning"}
// Relative signature directories are relative to the file. Returns false
// (after printing a one-line error) if the file exists but is unusable.
struct ConfigFile {
  std::string path;
  std::vector<std::string> signatures;
  std::vector<std::string> ignore;
  std::string fail_on;
};

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

bool load_config(ConfigFile& cfg) {
  const auto path = find_config();
  if (!path) {
    return true;
  }
  cfg.path = path->string();
  std::ifstream in(*path);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  auto fail = [&](const std::string& where, const std::string& what) {
    std::cerr << "denpex: error: " << cfg.path << where << ": " << what << "\n";
    return false;
  };
  if (j.is_discarded() || !j.is_object()) {
    return fail("", "not a JSON object");
  }
  auto strings = [&](const char* key, std::vector<std::string>& out) {
    if (!j.contains(key)) {
      return true;
    }
    if (!j[key].is_array()) {
      return fail(std::string(": /") + key, "expected an array of strings");
    }
    for (const auto& v : j[key]) {
      if (!v.is_string()) {
        return fail(std::string(": /") + key, "expected an array of strings");
      }
      out.push_back(v.get<std::string>());
    }
    return true;
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "signatures" && it.key() != "ignore" && it.key() != "fail_on") {
      return fail(": /" + it.key(), "unknown key (known: signatures, ignore, fail_on)");
    }
  }
  if (!strings("signatures", cfg.signatures) || !strings("ignore", cfg.ignore)) {
    return false;
  }
  for (auto& d : cfg.signatures) {
    if (std::filesystem::path(d).is_relative()) {
      d = (path->parent_path() / d).string();
    }
  }
  if (j.contains("fail_on")) {
    if (!j["fail_on"].is_string()) {
      return fail(": /fail_on", "expected a string");
    }
    cfg.fail_on = j["fail_on"].get<std::string>();
  }
  return true;
}

// Prose is wrapped to the terminal: $COLUMNS, else the tty's width, else 100.
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

// The current directory, absolute, ending in '/' ("" when it cannot be read).
std::string working_dir() {
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec).string();
  if (ec || cwd.empty()) {
    return {};
  }
  return cwd.back() == '/' ? cwd : cwd + "/";
}

int current_year() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  return tm.tm_year + 1900;
}

unsigned default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

std::vector<std::string> paths_or_stdin(std::vector<std::string> paths) {
  if (paths.empty()) {
    paths.push_back("-");
  }
  return paths;
}

// The matcher as every command builds it: the Hyperscan prefilter with the
// built-in patterns prebuilt (unless --no-prefilter), RE2 behind it.
Expected<matcher::Matcher> compile_matcher(const catalog::Catalog& cat, matcher::MatcherOptions mo,
                                           const CommonArgs& common, bool verbose) {
  mo.prefilter = !common.no_prefilter;
  mo.prebuilt_prefilter = matcher::builtin_prefilter_blob();
  auto m = matcher::Matcher::compile(cat, mo);
  if (m && verbose) {
    const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - g_started;
    std::cerr << "denpex: matcher: " << m->describe() << "\n"
              << fmt::format("denpex: start-up: {} entries loaded and compiled in {:.1f} ms\n", cat.size(), ms.count());
  }
  return m;
}

// One diagnosis in one format (docs/output-formats.md).
void print_report(std::ostream& out, const std::string& format, const correlate::Diagnosis& d,
                  const catalog::Catalog& cat, const report::RunInfo& run, bool color, bool timeline = true) {
  if (format == "json") {
    report::print_json(out, d, cat, run);
  } else if (format == "jsonl") {
    report::print_jsonl(out, d, cat, run);
  } else if (format == "sarif") {
    report::print_sarif(out, d, cat, run);
  } else if (format == "github") {
    report::print_github(out, d, cat, run);
  } else if (format == "markdown") {
    report::print_markdown(out, d, cat, run);
  } else if (format == "prometheus") {
    report::print_prometheus(out, d, cat, run);
  } else if (format == "gcc") {
    report::print_gcc(out, d, cat, run);
  } else if (format == "html") {
    report::print_html(out, d, cat, run);
  } else {
    report::TextOptions to;
    to.color = color;
    to.width = text_width();
    to.timeline = timeline;
    report::print_text(out, d, cat, run, to);
  }
}

// Writes PATH through a temporary file in the same directory and a rename,
// so a reader (node_exporter's textfile collector) never sees half a file.
void write_atomically(const std::string& path, Diagnostics& diags, const std::function<void(std::ostream&)>& print) {
  const auto tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      diags.error(Error{ErrorKind::io, path, std::string("cannot write: ") + std::strerror(errno)});
      return;
    }
    print(out);
    out.flush();
    if (!out) {
      diags.error(Error{ErrorKind::io, path, "write failed"});
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    diags.error(Error{ErrorKind::io, path, std::string("cannot rename the temporary file: ") + std::strerror(errno)});
    std::remove(tmp.c_str());
  }
}

// --output FORMAT=PATH, checked before anything is read.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_outputs(const std::vector<std::string>& specs,
                                                                             Diagnostics& diags) {
  std::vector<std::pair<std::string, std::string>> outputs;
  bool ok = true;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    const auto format = spec.substr(0, eq == std::string::npos ? 0 : eq);
    if (eq == std::string::npos || eq + 1 == spec.size() || std::find(k_formats.begin(), k_formats.end(), format) == k_formats.end()) {
      diags.error(Error{ErrorKind::usage, "--output " + spec,
                        "expected FORMAT=PATH with FORMAT one of text, json, jsonl, sarif, github, markdown, "
                        "prometheus, gcc, html"});
      ok = false;
      continue;
    }
    outputs.emplace_back(format, spec.substr(eq + 1));
  }
  return ok ? std::optional(std::move(outputs)) : std::nullopt;
}

// The built-in line formats plus --formats DIRs (docs/formats.md); problems
// in a team's files go to `diags` (exit 2) and the rest still load.
context::FormatSet load_formats(const std::vector<std::string>& dirs, Diagnostics& diags) {
  auto files = context::builtin_format_files();
  for (const auto& dir : dirs) {
    auto more = context::read_format_directory(dir, diags);
    files.insert(files.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return context::FormatSet::load(files, diags);
}

// --follow's live line on stderr: the initiating failure so far, said again
// only when it changes (re-correlated each time a new cause arrives).
class LiveUpdates {
public:
  LiveUpdates(const catalog::Catalog& cat, const correlate::CorrelateOptions& co, bool quiet)
      : m_cat(cat), m_co(co), m_quiet(quiet) {}

  void update(const std::vector<correlate::Hit>& hits, const std::vector<correlate::SourceRef>& sources) {
    const auto causes = static_cast<std::size_t>(std::count_if(hits.begin(), hits.end(), [&](const correlate::Hit& h) {
      return m_cat.at(h.signature).role == catalog::Role::cause;
    }));
    if (causes == m_causes_seen) {
      return;
    }
    m_causes_seen = causes;
    auto live = correlate::correlate(hits, sources, m_cat, m_co);
    if (live.incidents.empty() || m_quiet) {
      return;
    }
    const auto& inc = live.incidents.front();
    const auto& sig = m_cat.at(inc.signature);
    std::string line = fmt::format("denpex: [live] initiating failure: {} ({}) at {}", sig.id, sig.title,
                                   util::escape_for_terminal(report::location(live, inc.first)));
    if (inc.first.ctx.rank) {
      line += fmt::format(" rank {}", inc.first.ctx.rank->value);
    }
    if (line == m_last) {
      return;
    }
    m_last = line;
    // On stderr: stdout carries exactly one document, in its format.
    std::cerr << line << "\n  fix: " << sig.fix.summary;
    for (const auto& [k, v] : sig.fix.env) {
      std::cerr << " (export " << k << "=" << v << ")";
    }
    std::cerr << "\n" << std::flush;
  }

private:
  const catalog::Catalog& m_cat;
  const correlate::CorrelateOptions& m_co;
  bool m_quiet;
  std::size_t m_causes_seen = 0;
  std::string m_last;
};

// Whether the diagnosis fails the --fail-on gate. A run with only downstream
// reports (timeouts on every rank, a SIGKILL) still failed: their severity
// counts too; an exception the run continued past (training progressed) is
// not a failure.
bool fails_gate(const correlate::Diagnosis& d, const catalog::Catalog& cat, catalog::Severity level) {
  for (const auto& inc : d.incidents) {
    const bool survived = inc.recovered && !cat.at(inc.signature).headline.empty();
    if (cat.at(inc.signature).severity >= level && !survived) {
      return true;
    }
  }
  return std::any_of(d.unexplained.begin(), d.unexplained.end(),
                     [&](const correlate::Group& g) { return cat.at(g.signature).severity >= level; });
}

int run_diagnose(const CommonArgs& common, const DiagnoseArgs& args) {
  Diagnostics diags;
  auto cat = load(common, diags, false);
  if (!cat) {
    print_diagnostics(diags);
    return k_exit_error;
  }
  const bool catalog_errors = diags.has_errors();
  const auto outputs = parse_outputs(args.outputs, diags);
  if (!outputs) {
    print_diagnostics(diags);
    return k_exit_error;
  }
  const auto parsed_fail_on = catalog::parse_severity(args.fail_on);
  const bool gate = args.fail_on != "never";
  const catalog::Severity fail_level = parsed_fail_on.value_or(catalog::Severity::error);
  if (gate && !parsed_fail_on) {
    std::cerr << "denpex: error: --fail-on: '" << args.fail_on << "' is not one of info, warning, error, critical, never\n";
    return k_exit_error;
  }
  matcher::MatcherOptions mo;
  mo.include = [&](const catalog::Signature& s) {
    return std::find(args.ignore.begin(), args.ignore.end(), s.id) == args.ignore.end();
  };
  mo.extra_patterns = scan::error_line_patterns();
  auto m = compile_matcher(*cat, mo, common, args.verbose);
  if (!m) {
    diags.error(m.error());
    print_diagnostics(diags);
    return k_exit_error;
  }
  source::InputOptions io;
  io.verbose = args.verbose;
  io.include = args.include;
  io.exclude = args.exclude;
  const auto paths = paths_or_stdin(args.paths);
  if (args.follow) {
    if (paths.size() != 1) {
      std::cerr << "denpex: error: --follow reads one file or stdin, got " << paths.size() << " paths\n";
      return k_exit_error;
    }
    io.follow_idle_ms = args.follow_idle * 1000;
    // Ctrl-C or a TERM ends the following, not the diagnosis.
    source::install_stop_handlers();
  }
  auto opener = source::make_filesystem_opener(io);
  const auto formats = load_formats(args.formats, diags);
  scan::ScanOptions so;
  so.formats = &formats;
  so.jobs = args.jobs == 0 ? default_jobs() : args.jobs;
  so.findings_catalog = &*cat;
  so.catalog = &*cat;
  so.reader.max_bytes = args.max_input_gib << 30;
  if (common.chunk_size != 0) {
    so.reader.buffer_size = common.chunk_size;
  }
  correlate::CorrelateOptions co;
  co.assume_year = args.year;
  co.node = args.node;
  co.node_skew_us = static_cast<std::int64_t>(args.clock_skew_s * 1e6);
  co.now_year = current_year();

  // --follow: re-correlate whenever a new cause arrives and say so at once.
  LiveUpdates live(*cat, co, common.quiet);
  if (args.follow) {
    so.on_chunk = [&live](const std::vector<correlate::Hit>& hits, const std::vector<correlate::SourceRef>& sources) {
      live.update(hits, sources);
    };
  }
  const auto units_hint = paths.size();
  Progress progress(!args.follow && !common.quiet && ::isatty(STDERR_FILENO) != 0, units_hint);
  so.bytes_done = &progress.bytes;
  so.units_done = &progress.units_done;
  so.units_total = &progress.units_total;
  so.bytes_total = &progress.bytes_total;
  auto result = scan::run(*opener, paths, *m, so, diags);
  progress.stop();
  report::RunInfo run{DENPEX_VERSION, result.totals.bytes, result.totals.lines, result.totals.sources,
                      result.totals.long_lines_cut, diags.items(), result.totals.findings_files};
  run.fail_on = gate ? std::optional<catalog::Severity>(fail_level) : std::nullopt;
  run.working_dir = working_dir();
  // Starting points are lines no signature matched: drop sampled lines that did.
  std::set<std::pair<std::uint32_t, std::uint64_t>> matched_lines;
  for (const auto& h : result.hits) {
    matched_lines.emplace(h.source, h.line_no);
  }
  std::erase_if(result.error_lines, [&](const correlate::ErrorLine& e) {
    return matched_lines.count({e.source, e.line_no}) != 0;
  });
  auto diagnosis = correlate::correlate(std::move(result.hits), std::move(result.sources), *cat, co, result.progress);
  correlate::add_starting_points(diagnosis, result.error_lines, co);
  if (args.redact) {
    report::redact(diagnosis);
  }
  if (!common.quiet) {
    print_report(std::cout, args.format, diagnosis, *cat, run, use_color(common.color, STDOUT_FILENO), !args.no_timeline);
    std::cout.flush();
  }
  for (const auto& [format, path] : *outputs) {
    write_atomically(path, diags,
                     [&](std::ostream& out) { print_report(out, format, diagnosis, *cat, run, false, !args.no_timeline); });
  }
  print_diagnostics(diags);
  if (const int signo = source::stop_signal(); signo != 0) {
    return 128 + signo; // interrupted: the shell's convention (130, 143), after the report
  }
  if (diags.has_errors() || catalog_errors) {
    return k_exit_error;
  }
  const bool failed = gate && fails_gate(diagnosis, *cat, fail_level);
  return failed ? k_exit_found : k_exit_ok;
}

int run_grep(const CommonArgs& common, const GrepArgs& args) {
  Diagnostics diags;
  auto cat = load(common, diags, false);
  if (!cat) {
    print_diagnostics(diags);
    return k_exit_error;
  }
  std::optional<catalog::Role> role;
  if (!args.role.empty()) {
    role = catalog::parse_role(args.role);
    if (!role) {
      std::cerr << "denpex: error: --role: '" << args.role << "' is not one of cause, symptom, context\n";
      return k_exit_error;
    }
  }
  matcher::MatcherOptions mo;
  mo.include = [&](const catalog::Signature& s) {
    if (!args.signature.empty() && std::none_of(args.signature.begin(), args.signature.end(), [&](const std::string& p) {
          return s.id == p || util::starts_with(s.id, p + ".");
        })) {
      return false;
    }
    if (!args.area.empty() && std::find(args.area.begin(), args.area.end(), s.area) == args.area.end()) {
      return false;
    }
    return !role || s.role == *role;
  };
  auto m = compile_matcher(*cat, mo, common, args.verbose);
  if (!m) {
    diags.error(m.error());
    print_diagnostics(diags);
    return k_exit_error;
  }
  source::InputOptions io;
  io.verbose = args.verbose;
  io.include = args.include;
  io.exclude = args.exclude;
  auto opener = source::make_filesystem_opener(io);
  const auto formats = load_formats(args.formats, diags);
  scan::ScanOptions so;
  so.formats = &formats;
  so.jobs = 1;
  if (common.chunk_size != 0) {
    so.reader.buffer_size = common.chunk_size;
  }
  so.error_samples = 0; // grep reports matches only: no starting points to sample
  std::uint64_t matched = 0;
  std::map<std::string, std::uint64_t> counts;
  auto on_hit = [&](const correlate::Hit& h_in, const correlate::SourceRef& src) {
    ++matched;
    correlate::Hit redacted;
    if (args.redact) {
      redacted = h_in;
      redacted.text = report::redact_text(redacted.text);
    }
    const correlate::Hit& h = args.redact ? redacted : h_in;
    const auto& sig = cat->at(h.signature);
    if (common.quiet) {
      return;
    }
    if (args.count) {
      ++counts[sig.id];
      return;
    }
    const std::string rank = h.ctx.rank ? std::to_string(h.ctx.rank->value) : "-";
    if (args.json) {
      nlohmann::ordered_json j;
      j["file"] = util::sanitize_utf8(src.name);
      j["line"] = h.line_no;
      j["signature"] = sig.id;
      j["signal"] = sig.signals[h.signal].id;
      j["role"] = std::string(catalog::to_string(sig.role));
      j["severity"] = std::string(catalog::to_string(sig.severity));
      j["rank"] = h.ctx.rank ? nlohmann::ordered_json(h.ctx.rank->value) : nlohmann::ordered_json(nullptr);
      const auto stamp = report::format_stamp(h.ctx.time);
      j["time"] = stamp.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(stamp);
      j["host"] = h.ctx.host ? nlohmann::ordered_json(util::sanitize_utf8(h.ctx.host->value)) : nlohmann::ordered_json(nullptr);
      nlohmann::ordered_json caps = nlohmann::ordered_json::object();
      for (const auto& [k, v] : h.captures) {
        caps[k] = util::sanitize_utf8(v);
      }
      j["captures"] = caps;
      j["text"] = util::sanitize_utf8(h.text);
      std::cout << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    } else {
      const std::string when = report::format_stamp(h.ctx.time);
      std::cout << util::escape_for_terminal(src.name) << ":" << h.line_no << ": " << sig.id << " rank=" << rank
                << (when.empty() ? "" : " time=" + when) << ": " << util::escape_for_terminal(h.text) << "\n";
    }
  };
  scan::run(*opener, paths_or_stdin(args.paths), *m, so, diags, on_hit);
  if (args.count && !common.quiet) {
    for (const auto& [id, n] : counts) {
      std::cout << n << " " << id << "\n";
    }
  }
  std::cout.flush();
  print_diagnostics(diags);
  if (common.quiet && matched > 0) {
    return k_exit_ok;
  }
  if (diags.has_errors()) {
    return k_exit_error;
  }
  return matched > 0 ? k_exit_ok : k_exit_found;
}

int run_explain(const CommonArgs& common, const std::string& query) {
  Diagnostics diags;
  auto cat = load(common, diags);
  print_diagnostics(diags);
  if (!cat) {
    return k_exit_error;
  }
  std::string q = query;
  if (util::starts_with(util::to_lower(q), "xid-") || util::starts_with(util::to_lower(q), "xid ")) {
    q = "xid." + q.substr(4);
  }
  std::vector<std::size_t> found;
  if (auto exact = cat->find(q)) {
    found.push_back(*exact);
  } else {
    for (std::size_t i = 0; i < cat->size(); ++i) {
      if (util::starts_with(cat->at(i).id, q + ".") || util::starts_with(cat->at(i).id, q)) {
        found.push_back(i);
      }
    }
    if (found.empty()) {
      for (std::size_t i = 0; i < cat->size(); ++i) {
        const auto& s = cat->at(i);
        bool hit = util::contains_icase(s.title, q) || util::contains_icase(s.root_cause, q);
        for (const auto& ex : s.match_examples) {
          hit = hit || util::contains_icase(ex.line, q);
        }
        if (hit) {
          found.push_back(i);
        }
      }
    }
  }
  report::TextOptions to;
  to.color = use_color(common.color, STDOUT_FILENO);
  to.width = text_width();
  if (found.empty()) {
    std::cerr << "denpex: error: no signature matches '" << util::escape_for_terminal(query)
              << "'\n  help: `denpex signatures list` shows every id\n";
    return k_exit_error;
  }
  if (found.size() == 1) {
    report::print_entry(std::cout, cat->at(found[0]), *cat, to);
    return k_exit_ok;
  }
  std::cout << found.size() << " signatures match '" << util::escape_for_terminal(query) << "':\n";
  for (auto i : found) {
    std::cout << fmt::format("  {:<48} {}\n", cat->at(i).id, cat->at(i).title);
  }
  return k_exit_ok;
}

int run_signatures(const CommonArgs& common, const std::string& action, const std::vector<std::string>& ids,
                   const std::string& format, const std::string& area, const std::string& role, bool stats) {
  Diagnostics diags;
  auto cat = load(common, diags);
  const bool load_errors = diags.has_errors();
  print_diagnostics(diags);
  if (!cat) {
    return k_exit_error;
  }
  const auto& areas = catalog::known_areas();
  if (!area.empty() && std::find(areas.begin(), areas.end(), area) == areas.end()) {
    std::string valid;
    for (const auto a : areas) {
      valid += (valid.empty() ? "" : ", ") + std::string(a);
    }
    std::cerr << "denpex: error: --area: '" << area << "' is not an area; one of " << valid << "\n";
    return k_exit_error;
  }
  if (action == "list" && stats) {
    print_catalog_stats(std::cout, *cat);
    return load_errors ? k_exit_error : k_exit_ok;
  }
  if (action == "list") {
    for (const auto& s : cat->entries()) {
      if ((!area.empty() && s.area != area) || (!role.empty() && catalog::to_string(s.role) != role)) {
        continue;
      }
      std::cout << fmt::format("{:<52} {:<9} {:<8} {:<8} {}\n", s.id, s.area, catalog::to_string(s.role),
                               catalog::to_string(s.severity), s.title);
    }
    return load_errors ? k_exit_error : k_exit_ok;
  }
  if (action == "show") {
    for (const auto& id : ids) {
      if (auto i = cat->find(id)) {
        report::TextOptions to;
        report::print_entry(std::cout, cat->at(*i), *cat, to);
      } else {
        std::cerr << "denpex: error: " << id << ": no such signature\n";
        return k_exit_error;
      }
    }
    return k_exit_ok;
  }
  auto m = compile_matcher(*cat, {}, common, false);
  if (!m) {
    std::cerr << util::escape_for_terminal(format_diagnostic({Level::error, m.error()})) << "\n";
    return k_exit_error;
  }
  if (action == "test" || action == "lint") {
    auto rep = action == "test" ? selftest::test_examples(*cat, *m, ids) : selftest::lint(*cat, *m);
    for (const auto& f : rep.failures) {
      std::cerr << "denpex: error: " << util::escape_for_terminal(f.where) << ": " << util::escape_for_terminal(f.what) << "\n";
    }
    for (const auto& f : rep.warnings) {
      std::cerr << "denpex: warning: " << util::escape_for_terminal(f.where) << ": " << util::escape_for_terminal(f.what) << "\n";
    }
    if (!common.quiet) {
      std::cout << fmt::format("{}: {} entries, {} examples, {} failures, {} warnings\n", action, rep.entries,
                               rep.examples, rep.failures.size(), rep.warnings.size());
    }
    return (rep.failures.empty() && !load_errors) ? k_exit_ok : k_exit_error;
  }
  if (action == "export") {
    if (format == "patterns") {
      for (const auto& s : cat->entries()) {
        for (const auto& sg : s.signals) {
          std::cout << sg.pattern << "\n";
        }
      }
      return k_exit_ok;
    }
    if (format == "markdown") {
      print_catalog_markdown(std::cout, *cat);
      return k_exit_ok;
    }
    if (format == "ids") {
      for (const auto& s : cat->entries()) {
        std::cout << s.id << "\n";
      }
      return k_exit_ok;
    }
    std::cerr << "denpex: error: --format: '" << format << "' is not one of patterns, ids, markdown\n";
    return k_exit_error;
  }
  std::cerr << "denpex: error: unknown action '" << action << "' (list, show, test, lint, export)\n";
  return k_exit_error;
}

// The options every subcommand that reads the catalog takes.
void add_common(CLI::App* sub, CommonArgs& common, bool& no_config) {
  // Each repeatable option takes one value per occurrence, so that
  // `--signatures DIR LOG` leaves LOG as a path.
  sub->add_option("--signatures", common.signature_dirs, "also load signature entries from DIR (repeatable)")
      ->type_name("DIR")
      ->allow_extra_args(false);
  sub->add_flag("--no-builtin", common.no_builtin, "do not load the built-in catalog");
  sub->add_flag("--strict", common.strict,
                "stop before reading any log if a signature file has an error (default: report it, leave the entry "
                "out, go on)");
  sub->add_option("--color", common.color, "colour output: auto, always, never (NO_COLOR is honoured)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  sub->add_flag("-q,--quiet", common.quiet, "print nothing; report through the exit status only");
  sub->add_flag("--no-config", no_config, "ignore .denpex.json files");
  sub->add_flag("--no-prefilter", common.no_prefilter,
                "match with RE2 alone, without the Hyperscan prefilter (same results, slower; for measuring)");
  // Tests run every golden case at several chunk sizes (tests/golden/invariance_test.sh).
  sub->add_option("--chunk-size", common.chunk_size, "reader chunk size in bytes (testing)")
      ->check(CLI::Range(std::size_t{4096}, std::size_t{64} << 20))
      ->group("");
}

// What a directory walk reads (docs/cli.md, "Directory walks"), and line formats.
void add_walk_options(CLI::App* sub, std::vector<std::string>& include, std::vector<std::string>& exclude,
                      std::vector<std::string>& formats) {
  sub->add_option("--formats", formats,
                  "also load line formats (a launcher's prefix, a logger's stamp) from DIR; docs/formats.md "
                  "(repeatable)")
      ->type_name("DIR")
      ->allow_extra_args(false);
  sub->add_option("--include", include,
                  "in directory walks, also read files matching GLOB that are skipped by default (e.g. '*.sh'; "
                  "repeatable)")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  sub->add_option("--exclude", exclude, "in directory walks, skip files or directories matching GLOB (repeatable)")
      ->type_name("GLOB")
      ->allow_extra_args(false);
}

CLI::App* add_diagnose(CLI::App& app, DiagnoseArgs& dargs, CommonArgs& common, bool& no_config) {
auto* diagnose = app.add_subcommand("diagnose", "Find the initiating failure in logs (files, directories, archives, - for stdin)");
  diagnose->footer("Examples:\n  torchrun ... 2>&1 | tee train.log; denpex diagnose train.log\n"
                   "  denpex diagnose --format json --fail-on error logs/\n"
                   "Exit status: 0 nothing at or above --fail-on, 1 failure diagnosed, 2 usage or input error.");
  diagnose->add_option("paths", dargs.paths, "log files, directories or archives; - or nothing reads stdin")
      ->type_name("PATH");
  diagnose->add_option("--format", dargs.format,
                       "text, json, jsonl, sarif, github (workflow annotations), markdown, prometheus (textfile "
                       "collector), gcc (FILE:LINE:COL for editors), html (a self-contained page with a timeline)")
      ->check(CLI::IsMember(std::vector<std::string>(k_formats.begin(), k_formats.end())));
  diagnose->add_flag("--no-timeline", dargs.no_timeline, "text: leave out the timeline picture of the failure");
  diagnose->add_option("--output", dargs.outputs,
                       "also write FORMAT to PATH, through a temporary file and a rename (repeatable), e.g. "
                       "--output sarif=denpex.sarif --output prometheus=/var/lib/node_exporter/denpex.prom")
      ->type_name("FORMAT=PATH")
      ->allow_extra_args(false);
  diagnose->add_option("--fail-on", dargs.fail_on, "lowest severity that makes the exit status 1: info, warning, error, critical, never")
      ->type_name("LEVEL:{info,warning,error,critical,never}");
  diagnose->add_option("--ignore", dargs.ignore, "ignore a signature id (repeatable)")->type_name("ID")->allow_extra_args(false);
  diagnose->add_option("-j,--jobs", dargs.jobs, "files read in parallel (default: all cores)");
  diagnose->add_flag("--follow", dargs.follow,
                     "read a growing file or a pipe; print the initiating failure as soon as it is seen and update "
                     "it when a more specific cause arrives; the full report comes when the input ends");
  diagnose->add_option("--follow-idle", dargs.follow_idle, "with --follow on a file: stop after this many seconds without growth (default 30)");
  diagnose->add_flag("-v,--verbose", dargs.verbose, "say which files a directory walk skipped, and why");
  add_walk_options(diagnose, dargs.include, dargs.exclude, dargs.formats);
  diagnose->add_option("--max-input-size", dargs.max_input_gib,
                       "stop reading any one source after this many GiB (decompressed), with an error; default 64")
      ->check(CLI::Range(1, 1 << 20));
  diagnose->add_flag("--redact", dargs.redact,
                     "mask IP addresses, host names, e-mail addresses and tokens in the output so it can be shared");
  diagnose->add_option("--node", dargs.node,
                       "the host of lines that name none: for a run over one node's own logs (a per-node job step, "
                       "e.g. --node \"$(hostname)\"), so merged findings keep their node")
      ->type_name("NAME");
  diagnose->add_option("--clock-skew", dargs.clock_skew_s,
                       "how far apart nodes' clocks may be, in seconds (default 1): stamps from different nodes this "
                       "much closer than usual count as concurrent, and a cause on another node that close is reported")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.0, 86400.0));
  diagnose->add_option("--year", dargs.year, "year of timestamps that print none (syslog, glog); default: inferred")
      ->check(CLI::Range(1970, 2200));
  add_common(diagnose, common, no_config);
  return diagnose;
}

// "AREA:{hardware,driver,...}": the areas, as completion reads a choice
// (completion.cpp); a bad one gets denpex's own error naming them.
std::string area_type() {
  std::string out = "AREA:{";
  for (const auto a : catalog::known_areas()) {
    out += std::string(a) + ",";
  }
  out.back() = '}';
  return out;
}

CLI::App* add_grep(CLI::App& app, GrepArgs& gargs, CommonArgs& common, bool& no_config) {
auto* grep = app.add_subcommand("grep", "Print every matched line with its signature, rank and time");
  grep->footer("Examples:\n  denpex grep --area nccl rank_*.log\n  denpex grep -c node-017.tar.gz\n"
               "Exit status: 0 matched, 1 no match, 2 error.");
  grep->add_option("paths", gargs.paths, "log files, directories or archives; - or nothing reads stdin")
      ->type_name("PATH");
  grep->add_option("--signature", gargs.signature, "only this id or id prefix (repeatable)")
      ->type_name("ID")
      ->allow_extra_args(false);
  grep->add_option("--area", gargs.area, "only entries of this area (repeatable)")
      ->type_name(area_type())
      ->allow_extra_args(false);
  grep->add_option("--role", gargs.role, "only cause, symptom or context entries")
      ->type_name("ROLE:{cause,symptom,context}");
  grep->add_flag("-c,--count", gargs.count, "print a count per signature instead of lines");
  grep->add_flag("--json", gargs.json, "one JSON object per matched line");
  grep->add_flag("-v,--verbose", gargs.verbose, "say which files a directory walk skipped, and why");
  add_walk_options(grep, gargs.include, gargs.exclude, gargs.formats);
  grep->add_flag("--redact", gargs.redact, "mask IP addresses, e-mail addresses and tokens in matched lines");
  add_common(grep, common, no_config);
  return grep;
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
                       catalog::builtin_files().size());
  });
  app.require_subcommand(1);
  CommonArgs common;
  bool no_config = false;




  DiagnoseArgs dargs;
  auto* diagnose = add_diagnose(app, dargs, common, no_config);


  GrepArgs gargs;
  auto* grep = add_grep(app, gargs, common, no_config);

  std::string query;
  auto* explain = app.add_subcommand("explain", "Show what a signature means, how to fix and verify it");
  explain->footer("Examples:\n  denpex explain nccl.nvls.cuda-700\n  denpex explain xid-79\n  denpex explain \"fallen off the bus\"");
  explain->add_option("query", query, "an id, an id prefix, xid-NN, or words from the message")
      ->required()
      ->type_name("ID");
  add_common(explain, common, no_config);

  std::string action;
  std::vector<std::string> ids;
  std::string format = "patterns";
  std::string area;
  std::string role;
  auto* sigs = app.add_subcommand("signatures", "List, show, test, lint or export the signature catalog");
  sigs->footer("Examples:\n  denpex signatures list --area nccl\n  denpex signatures test\n"
               "  denpex signatures test --no-builtin --signatures ./signatures");
  sigs->add_option("action", action, "list, show, test, lint, export")->required()
      ->check(CLI::IsMember({"list", "show", "test", "lint", "export"}));
  sigs->add_option("ids", ids, "entry ids (show; test only these)")->type_name("ID");
  sigs->add_option("--format", format, "export format: patterns (one RE2 per line), ids, markdown (docs/signatures.md)")
      ->type_name("FORMAT:{patterns,ids,markdown}");
  sigs->add_option("--area", area, "list: only this area")->type_name(area_type());
  sigs->add_option("--role", role, "list: only this role")->type_name("ROLE:{cause,symptom,context}");
  bool stats = false;
  sigs->add_flag("--stats", stats, "list: counts per area and role, and example origins");
  add_common(sigs, common, no_config);

  std::string shell;
  auto* completion = app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish)");
  completion->footer("Examples:\n  eval \"$(denpex completion bash)\"\n  denpex completion zsh > \"${fpath[1]}/_denpex\"");
  completion->add_option("shell", shell, "bash, zsh or fish")->required()->check(CLI::IsMember(completion_shells()));

  // The man page, from the same definition (the build writes denpex.1 with it).
  auto* manpage = app.add_subcommand("manpage", "Print the man page (troff)")->group("");

  // `denpex help` is --help; a mistyped subcommand gets the nearest one.
  if (argc >= 2 && std::string_view(argv[1]) == "help") {
    std::cout << app.help();
    return k_exit_ok;
  }
  const auto subs = app.get_subcommands({});
  const bool known = argc >= 2 && std::any_of(subs.begin(), subs.end(), [&](const CLI::App* sub) {
    return sub->get_name() == argv[1];
  });
  if (argc >= 2 && argv[1][0] != '-' && !known) {
    std::string best;
    std::size_t best_d = 3; // suggest only close misspellings
    for (const auto* sub : subs) {
      const auto d = util::edit_distance(argv[1], sub->get_name());
      if (d < best_d) {
        best_d = d;
        best = sub->get_name();
      }
    }
    std::cerr << "denpex: error: '" << argv[1] << "' is not a subcommand"
              << (best.empty() ? std::string() : "; did you mean '" + best + "'?") << "\n"
              << "  help: subcommands are diagnose, grep, explain, signatures, completion; `denpex help` lists them\n";
    return k_exit_error;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? k_exit_ok : k_exit_error;
  }
  if (!no_config) {
    ConfigFile cfg;
    if (!load_config(cfg)) {
      return k_exit_error;
    }
    common.signature_dirs.insert(common.signature_dirs.end(), cfg.signatures.begin(), cfg.signatures.end());
    dargs.ignore.insert(dargs.ignore.end(), cfg.ignore.begin(), cfg.ignore.end());
    if (!cfg.fail_on.empty() && diagnose->count("--fail-on") == 0) {
      dargs.fail_on = cfg.fail_on;
    }
  }
  if (completion->parsed()) {
    std::cout << completion_script(app, shell);
    return k_exit_ok;
  }
  if (manpage->parsed()) {
    std::cout << man_page(app, DENPEX_VERSION);
    return k_exit_ok;
  }
  if (diagnose->parsed()) {
    return run_diagnose(common, dargs);
  }
  if (grep->parsed()) {
    return run_grep(common, gargs);
  }
  if (explain->parsed()) {
    return run_explain(common, query);
  }
  return run_signatures(common, action, ids, format, area, role, stats);
}

} // namespace

} // namespace denpex::cli

int main(int argc, char** argv) {
  denpex::cli::g_started = std::chrono::steady_clock::now();
  spdlog::set_default_logger(spdlog::stderr_color_mt("denpex"));
  std::signal(SIGPIPE, SIG_IGN);
  try {
    const int rc = denpex::cli::run(argc, argv);
    std::cout.flush();
    if (!std::cout && errno == EPIPE) {
      return 0;
    }
    return rc;
  } catch (const std::exception& e) {
    std::cerr << "denpex: error: " << e.what() << "\n";
    return denpex::cli::k_exit_error;
  }
}
