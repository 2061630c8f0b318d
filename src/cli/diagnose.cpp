// `denpex diagnose`: read, correlate, print; the exit status says whether the
// run failed (exit_code.hpp).
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <denpex/correlate/correlate.hpp>
#include <denpex/findings/findings.hpp>
#include <denpex/report/redact.hpp>
#include <denpex/report/report.hpp>
#include <denpex/report/verdict.hpp>
#include <denpex/scan/scan.hpp>
#include <denpex/source/follow.hpp>
#include <denpex/source/input.hpp>
#include <denpex/util/strings.hpp>

#include "app.hpp"
#include "exit_code.hpp"

#ifndef DENPEX_VERSION
#define DENPEX_VERSION "0.0.0"
#endif

namespace denpex::cli {

namespace {

// Bytes and files done, on stderr, only when stderr is a terminal and the
// run takes more than a second. Cleared before the report is printed.
class Progress {
public:
  explicit Progress(bool enabled) {
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

  // What the scan updates as it goes.
  void attach(scan::ScanOptions& so) {
    so.bytes_done = &m_bytes;
    so.units_done = &m_units_done;
    so.units_total = &m_units_total;
    so.bytes_total = &m_bytes_total;
  }

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
    const double mb = static_cast<double>(m_bytes.load()) / 1e6;
    const double rate = mb / secs;
    const auto units = m_units_total.load();
    const auto files = units == 0 ? std::string("listing files")
                                  : fmt::format("{}/{} file{}", m_units_done.load(), units, units == 1 ? "" : "s");
    const double total_mb = static_cast<double>(m_bytes_total.load()) / 1e6;
    if (total_mb <= 0 || mb > total_mb) {
      return fmt::format("denpex: {:.0f} MB read, {}, {:.0f} MB/s", mb, files, rate);
    }
    const double left = rate > 0 ? (total_mb - mb) / rate : 0;
    return fmt::format("denpex: {:.0f} of {:.0f} MB ({:.0f}%), {}, {:.0f} MB/s, {:.0f} s left", mb, total_mb,
                       100.0 * mb / total_mb, files, rate, left);
  }

  std::atomic<std::uint64_t> m_bytes{0};
  std::atomic<std::uint64_t> m_units_done{0};
  std::atomic<std::uint64_t> m_units_total{0}; // set once the inputs are listed
  std::atomic<std::uint64_t> m_bytes_total{0}; // 0: unknown
  std::atomic<bool> m_stop{false};
  bool m_shown = false;
  std::thread m_thread;
};

// --follow's live line on stderr: the initiating failure so far, said again
// only when it changes (re-correlated each time a new cause arrives).
class LiveUpdates {
public:
  LiveUpdates(const catalog::Catalog& cat, const correlate::CorrelateOptions& co, bool quiet, bool redact)
      : m_cat(cat), m_co(co), m_quiet(quiet), m_redact(redact) {}

  void update(const std::vector<scan::Hit>& hits, const std::vector<scan::SourceRef>& sources) {
    const auto causes = static_cast<std::size_t>(std::count_if(hits.begin(), hits.end(), [&](const scan::Hit& h) {
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
    std::optional<report::Redaction> redaction;
    if (m_redact) {
      redaction = report::redact(live); // --redact holds for the live line too
    }
    // The verdict the final report will open with, as it stands now.
    const auto v = report::verdict(live, m_cat);
    if (!v.failure) {
      return;
    }
    const auto& inc = live.incidents.front();
    // "denpex: [live] rank 3 (...) nccl.nvls.cuda-700: ... · fix: ...".
    std::string line = report::verdict_line(v);
    line.insert(std::string_view("denpex: ").size(), "[live] ");
    if (line == m_last) {
      return;
    }
    m_last = line;
    // On stderr: stdout carries exactly one document, in its format.
    std::string shown = line + "\n  at " + util::escape_for_terminal(report::location(live, inc.first)) + "; fix: " +
                        m_cat.at(inc.signature).fix.summary + "\n";
    std::cerr << (redaction ? redaction->output("text", std::move(shown)) : shown) << std::flush;
  }

private:
  const catalog::Catalog& m_cat;
  const correlate::CorrelateOptions& m_co;
  bool m_quiet;
  bool m_redact;
  std::size_t m_causes_seen = 0;
  std::string m_last;
};

// An --output FORMAT=PATH, checked before anything is read.
struct Output {
  const report::OutputFormat* format = nullptr;
  std::string path;
};

// Whether two paths name one file (both must exist), else whether they are
// spelled the same once made absolute.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec) && !ec) {
    return true;
  }
  const auto abs_a = std::filesystem::absolute(a, ec).lexically_normal();
  const auto abs_b = std::filesystem::absolute(b, ec).lexically_normal();
  return !ec && abs_a == abs_b;
}

// Whether `path` is an existing file inside directory `dir` that is not one
// of denpex's own reports or findings (recognised by their first bytes, as
// the walk recognises them): a log the run is about to read. A report an earlier run left there (the
// README's epilogue writes denpex.json into the directory it diagnoses) may
// be replaced.
bool log_inside(const std::string& path, const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec) || !std::filesystem::is_regular_file(path, ec)) {
    return false;
  }
  const auto d = std::filesystem::canonical(dir, ec);
  const auto f = std::filesystem::canonical(path, ec);
  if (ec) {
    return false;
  }
  const auto rel = f.lexically_relative(d);
  if (rel.empty() || *rel.begin() == "..") {
    return false;
  }
  std::ifstream in(f, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return !source::own_report_format(head) && !findings::is_findings(head);
}

// The --output specs, and the paths they must never replace: the inputs
// (`--output json=train.log train.log` once replaced the log with its own
// report) and each other (two formats in one file). See: #36
Expected<std::vector<Output>> parse_outputs(const std::vector<std::string>& specs, const std::vector<std::string>& inputs) {
  std::vector<Output> outputs;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    const auto* format = eq == std::string::npos ? nullptr : report::find_output_format(spec.substr(0, eq));
    if (format == nullptr || eq + 1 == spec.size()) {
      return usage_error("--output " + spec, "expected FORMAT=PATH with FORMAT one of " + report::output_format_names());
    }
    Output o{format, spec.substr(eq + 1)};
    for (const auto& in : inputs) {
      if (in != "-" && (same_file(o.path, in) || log_inside(o.path, in))) {
        return usage_error("--output " + spec, "'" + o.path + "' is also an input: writing the report would replace the log",
                           "write the report somewhere else");
      }
    }
    for (const auto& earlier : outputs) {
      if (same_file(o.path, earlier.path)) {
        return usage_error("--output " + spec, fmt::format("'{}' is also --output {}={}: one file cannot hold both", o.path,
                                                           earlier.format->name, earlier.path));
      }
    }
    outputs.push_back(std::move(o));
  }
  return outputs;
}

// Writes the report to `path`. A regular file (or a new one) is written
// through a temporary file in the same directory and a rename, so a reader
// (node_exporter's textfile collector) never sees half a file; a symbolic
// link is followed and its target written so. Anything else (a device such
// as /dev/null or /dev/full, a FIFO, /dev/stdout, /dev/fd/N) is opened and
// written in place: replacing it would turn a device into a plain file
// (as root, /dev/full once became one). Every write and the final flush are
// checked. See: #36
void write_output(const std::string& path, Diagnostics& diags, const std::function<void(std::ostream&)>& print) {
  std::error_code ec;
  std::filesystem::path target = path;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(target, ec))) {
    // One level at a time, so a dangling link names the file it will make.
    for (int hops = 0; hops < 40 && std::filesystem::is_symlink(std::filesystem::symlink_status(target, ec)); ++hops) {
      const auto next = std::filesystem::read_symlink(target, ec);
      if (ec) {
        break;
      }
      target = next.is_absolute() ? next : target.parent_path() / next;
    }
  }
  const auto st = std::filesystem::status(target, ec);
  const bool in_place = std::filesystem::exists(st) && !std::filesystem::is_regular_file(st);
  const std::string dest = target.string();
  const auto tmp = in_place ? dest : dest + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | (in_place ? std::ios::out : std::ios::trunc));
    if (!out) {
      diags.error(Error{ErrorKind::io, path, std::string("cannot write: ") + std::strerror(errno)});
      return;
    }
    print(out);
    out.flush();
    if (!out) {
      diags.error(Error{ErrorKind::io, path, std::string("write failed: ") + std::strerror(errno)});
      if (!in_place) {
        std::remove(tmp.c_str());
      }
      return;
    }
  }
  if (!in_place && std::rename(tmp.c_str(), dest.c_str()) != 0) {
    diags.error(Error{ErrorKind::io, path, std::string("cannot rename the temporary file: ") + std::strerror(errno)});
    std::remove(tmp.c_str());
  }
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

scan::ScanOptions scan_options(const CommonArgs& common, const DiagnoseArgs& args, const catalog::Catalog& cat,
                               const context::FormatSet& formats) {
  scan::ScanOptions so;
  so.formats = &formats;
  so.jobs = args.jobs == 0 ? std::max(1u, std::thread::hardware_concurrency()) : args.jobs;
  so.findings_catalog = &cat;
  so.catalog = &cat;
  so.reader.max_bytes = args.max_input_gib << 30;
  if (common.chunk_size != 0) {
    so.reader.buffer_size = common.chunk_size;
  }
  return so;
}

correlate::CorrelateOptions correlate_options(const DiagnoseArgs& args) {
  correlate::CorrelateOptions co;
  co.assume_year = args.year;
  co.node = args.node;
  co.node_skew_us = static_cast<std::int64_t>(args.clock_skew_s * 1e6);
  co.now_year = current_year();
  return co;
}

// What the command line asks for, checked before any reading: everything
// it can get wrong is a usage error here.
struct Checked {
  std::vector<Output> outputs;
  bool gate = false;
  catalog::Severity fail_level = catalog::Severity::error;
};

Expected<Checked> check_arguments(const DiagnoseArgs& args, const std::vector<std::string>& paths) {
  DENPEX_ASSERT(report::find_output_format(args.format) != nullptr); // CLI11 checked --format against the same list
  Checked c;
  const auto parsed_fail_on = catalog::parse_severity(args.fail_on);
  c.gate = args.fail_on != "never";
  if (c.gate && !parsed_fail_on) {
    return usage_error("--fail-on", "'" + args.fail_on + "' is not one of info, warning, error, critical, never");
  }
  c.fail_level = parsed_fail_on.value_or(catalog::Severity::error);
  TRY_ASSIGN(auto outputs, parse_outputs(args.outputs, paths));
  c.outputs = std::move(outputs);
  if (args.brief && args.format != "text") {
    return usage_error("--brief", "prints the verdict line as text; it takes no --format " + args.format);
  }
  if (args.follow && paths.size() != 1) {
    return usage_error("--follow", fmt::format("reads one file or stdin, got {} paths", paths.size()));
  }
  return c;
}

std::unique_ptr<source::InputOpener> make_opener(const DiagnoseArgs& args) {
  auto io = input_options(args.walk);
  if (args.follow) {
    io.follow_idle_ms = args.follow_idle * 1000;
    source::install_stop_handlers(); // a signal ends the following, not the diagnosis
  }
  return source::make_filesystem_opener(io);
}

} // namespace

Status run_diagnose(const CommonArgs& common, const DiagnoseArgs& args, Diagnostics& diags) {
  const auto* format = report::find_output_format(args.format);
  const auto paths = paths_or_stdin(args.paths);
  TRY_ASSIGN(const auto checked, check_arguments(args, paths));
  const auto& outputs = checked.outputs;
  const bool gate = checked.gate;
  const auto fail_level = checked.fail_level;

  TRY_ASSIGN(auto cat, load_catalog(common, diags, false));
  matcher::MatcherOptions mo;
  mo.include = [&](const catalog::Signature& s) {
    return std::find(args.ignore.begin(), args.ignore.end(), s.id) == args.ignore.end();
  };
  mo.extra_patterns = scan::error_line_patterns();
  TRY_ASSIGN(auto m, compile_matcher(cat, mo, common));
  auto opener = make_opener(args);
  const auto formats = load_formats(args.walk.formats, diags);
  auto so = scan_options(common, args, cat, formats);
  const auto co = correlate_options(args);

  // --follow: re-correlate whenever a new cause arrives and say so at once.
  LiveUpdates live(cat, co, common.quiet, args.redact);
  if (args.follow) {
    so.on_chunk = [&live](const std::vector<scan::Hit>& hits, const std::vector<scan::SourceRef>& sources) {
      live.update(hits, sources);
    };
  }
  Progress progress(!args.follow && !common.quiet && ::isatty(STDERR_FILENO) != 0);
  progress.attach(so);
  const double read_from = ms_since_start();
  auto result = scan::run(*opener, paths, m, so, diags);
  progress.stop();
  spdlog::info("read: {} bytes, {} lines, {} sources in {:.1f} ms", result.totals.bytes, result.totals.lines,
               result.totals.sources, ms_since_start() - read_from);
  spdlog::info("match: {} chunks, {} with candidates, {} candidate lines confirmed by RE2, {} chunks matched line "
               "by line, {} matches; confirming and collecting them took {:.1f} ms",
               result.matcher.chunks, result.matcher.chunks_with_hits, result.matcher.lines_confirmed,
               result.matcher.line_by_line, result.totals.matches, static_cast<double>(result.matcher.confirm_ns) / 1e6);

  const double correlate_from = ms_since_start();
  auto diagnosis = correlate::correlate(std::move(result.hits), std::move(result.sources), cat, co, result.progress,
                                        result.error_lines);
  spdlog::info("correlate: {} incidents from {} matches in {:.1f} ms", diagnosis.incidents.size(), diagnosis.hits,
               ms_since_start() - correlate_from);

  report::RunInfo run{DENPEX_VERSION, result.totals.bytes, result.totals.lines, result.totals.sources,
                      result.totals.long_lines_cut, diags.items(), result.totals.findings_files};
  run.fail_on = gate ? std::optional<catalog::Severity>(fail_level) : std::nullopt;
  run.working_dir = working_dir();
  // --redact masks the diagnosis, then every printed report once more
  // (report/redact.hpp: a field no mask knows of still leaks nothing).
  std::optional<report::Redaction> redaction;
  if (args.redact) {
    redaction = report::redact(diagnosis);
  }
  const auto print = [&](std::ostream& out, const report::OutputFormat& f, const report::TextOptions& opts) {
    if (!redaction) {
      f.print(out, diagnosis, cat, run, opts);
      return;
    }
    std::ostringstream printed;
    f.print(printed, diagnosis, cat, run, opts);
    out << redaction->output(f.name, printed.str());
  };
  report::TextOptions to;
  to.timeline = !args.no_timeline;
  to.width = text_width();
  to.full = args.full || common.verbose;
  // Nothing could be read (every path missing or unreadable): the errors say
  // so, one line each; a "nothing matched" report would read as a clean run.
  const bool nothing_read = result.totals.sources == 0 && diags.has_errors();
  if (args.brief && !common.quiet && !nothing_read) {
    const auto v = report::verdict(diagnosis, cat);
    std::string line = ::isatty(STDOUT_FILENO) != 0 ? report::wrap_verdict(v, to.width) : report::verdict_line(v) + "\n";
    std::cout << (redaction ? redaction->output("text", std::move(line)) : line);
    std::cout.flush();
  } else if (!common.quiet && !nothing_read) {
    report::TextOptions terminal = to;
    terminal.color = use_color(common.color, STDOUT_FILENO);
    print(std::cout, *format, terminal);
    std::cout.flush();
  }
  for (const auto& o : outputs) {
    write_output(o.path, diags, [&](std::ostream& out) { print(out, *o.format, to); });
  }
  spdlog::info("report: the details of {} of {} entries read", cat.details_loaded(), cat.size());
  if (const int signo = source::stop_signal(); signo != 0) {
    return Outcome::answered(128 + signo); // interrupted: the shell's convention (130, 143), after the report
  }
  return gate && correlate::fails_gate(diagnosis, fail_level) ? k_exit_found : k_exit_ok;
}

} // namespace denpex::cli
