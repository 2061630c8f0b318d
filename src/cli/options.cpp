#include "options.hpp"

#include <sstream>

#include <fmt/format.h>

#include <denpex/catalog/catalog.hpp>
#include <denpex/report/report.hpp>

#include "completion.hpp"
#include <denpex/util/strings.hpp>

namespace denpex::cli {

namespace {

// The options every subcommand that reads the catalog takes.
void add_common(CLI::App* sub, CommonArgs& common) {
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
  sub->add_flag("--no-config", common.no_config, "ignore .denpex.json files");
  sub->add_flag("--no-prefilter", common.no_prefilter,
                "match with RE2 alone, without the Hyperscan prefilter (same results, slower; for measuring)");
  // Tests run every golden case at several chunk sizes (tests/golden/invariance_test.sh).
  sub->add_option("--chunk-size", common.chunk_size, "reader chunk size in bytes (testing)")
      ->check(CLI::Range(std::size_t{4096}, std::size_t{64} << 20))
      ->group("");
}

// What a directory walk reads (docs/cli.md, "Directory walks"), and line formats.
void add_walk_options(CLI::App* sub, WalkArgs& walk) {
  sub->add_option("--formats", walk.formats,
                  "also load line formats (a launcher's prefix, a logger's stamp) from DIR; docs/formats.md "
                  "(repeatable)")
      ->type_name("DIR")
      ->allow_extra_args(false);
  sub->add_option("--include", walk.include,
                  "in directory walks, also read files matching GLOB that are skipped by default (e.g. '*.sh'; "
                  "repeatable)")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  sub->add_option("--exclude", walk.exclude, "in directory walks, skip files or directories matching GLOB (repeatable)")
      ->type_name("GLOB")
      ->allow_extra_args(false);
}

CLI::App* add_diagnose(CLI::App& app, DiagnoseArgs& dargs, CommonArgs& common) {
  auto* diagnose = app.add_subcommand("diagnose", "Find the initiating failure in logs (files, directories, archives, - for stdin)");
  diagnose->footer("Examples:\n  torchrun ... 2>&1 | tee train.log; denpex diagnose train.log\n"
                   "  denpex diagnose --format json --fail-on error logs/\n"
                   "Exit status: 0 nothing at or above --fail-on, 1 failure diagnosed, 2 usage or input error.");
  diagnose->add_option("paths", dargs.paths, "log files, directories or archives; - or nothing reads stdin")
      ->type_name("PATH");
  std::string format_help;
  std::vector<std::string> format_names;
  for (const auto& f : report::output_formats()) {
    format_help += fmt::format("{}{}: {}", format_help.empty() ? "" : "; ", f.name, f.help);
    format_names.emplace_back(f.name);
  }
  diagnose->add_option("--format", dargs.format, format_help)->check(CLI::IsMember(format_names));
  diagnose->add_flag("--no-timeline", dargs.no_timeline, "text: leave out the timeline picture of the failure");
  diagnose->add_flag("--brief", dargs.brief,
                     "print the verdict line alone (what failed, who, the fix); the exit status is the same");
  diagnose->add_flag("--full", dargs.full, "text: every row of long tables (the collateral), not the top ones");
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
  diagnose->add_flag("-v,--verbose", common.verbose,
                     "say which files a directory walk skipped and why, which matcher runs, and how long each phase took");
  add_walk_options(diagnose, dargs.walk);
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
  add_common(diagnose, common);
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

CLI::App* add_grep(CLI::App& app, GrepArgs& gargs, CommonArgs& common) {
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
  grep->add_flag("-v,--verbose", common.verbose, "say which files a directory walk skipped and why, and which matcher runs");
  add_walk_options(grep, gargs.walk);
  grep->add_flag("--redact", gargs.redact, "mask IP addresses, e-mail addresses and tokens in matched lines");
  add_common(grep, common);
  return grep;
}

class WrappingFormatter : public CLI::Formatter {
public:
  explicit WrappingFormatter(std::size_t width) : m_width(width) { column_width(width < 80 ? 22 : 30); }

  std::string make_option_desc(const CLI::Option* opt) const override {
    return right_column(CLI::Formatter::make_option_desc(opt));
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), right_column(sub->get_description()),
                             get_column_width());
    return out.str();
  }

  // The app's description and footer, each paragraph wrapped to the width.
  std::string make_description(const CLI::App* app) const override {
    return paragraphs(CLI::Formatter::make_description(app));
  }
  std::string make_footer(const CLI::App* app) const override {
    return paragraphs(CLI::Formatter::make_footer(app));
  }

private:
  // A description for the right column: CLI11 indents each line after a
  // '\n' under that column.
  [[nodiscard]] std::string right_column(const std::string& text) const {
    const auto room = m_width > get_column_width() + 20 ? m_width - get_column_width() : 20;
    auto out = util::wrap(text, room, "");
    if (!out.empty() && out.back() == '\n') {
      out.pop_back();
    }
    return out;
  }

  // Lines that are wider than the terminal are wrapped; examples (indented)
  // and short lines stay as written.
  [[nodiscard]] std::string paragraphs(const std::string& text) const {
    std::string out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      if (util::display_columns(line) <= m_width || util::starts_with(line, " ")) {
        out += line + "\n";
      } else {
        out += util::wrap(line, m_width, "");
      }
    }
    if (!text.empty() && text.back() != '\n' && !out.empty()) {
      out.pop_back();
    }
    return out;
  }

public:

private:
  std::size_t m_width;
};

} // namespace

std::shared_ptr<CLI::Formatter> wrapping_formatter(std::size_t width) {
  return std::make_shared<WrappingFormatter>(width);
}

Commands define_commands(CLI::App& app, Args& args) {
  Commands c;
  c.diagnose = add_diagnose(app, args.diagnose, args.common);
  c.grep = add_grep(app, args.grep, args.common);

  c.explain = app.add_subcommand("explain", "Show what a signature means, how to fix and verify it");
  c.explain->footer(
      "Examples:\n  denpex explain nccl.nvls.cuda-700\n  denpex explain xid-79\n  denpex explain \"fallen off the bus\"");
  c.explain->add_option("query", args.query, "an id, an id prefix, xid-NN, or words from the message")
      ->required()
      ->type_name("ID");
  add_common(c.explain, args.common);

  auto& sa = args.signatures;
  c.signatures = app.add_subcommand("signatures", "List, show, test, lint or export the signature catalog");
  c.signatures->footer("Examples:\n  denpex signatures list --area nccl\n  denpex signatures test\n"
                       "  denpex signatures test --no-builtin --signatures ./signatures");
  c.signatures->add_option("action", sa.action, "list, show, test, lint, export")
      ->required()
      ->check(CLI::IsMember({"list", "show", "test", "lint", "export"}));
  c.signatures->add_option("ids", sa.ids, "entry ids (show; test only these)")->type_name("ID");
  c.signatures->add_option("--format", sa.format, "export format: patterns (one RE2 per line), ids, markdown (docs/signatures.md)")
      ->type_name("FORMAT:{patterns,ids,markdown}");
  c.signatures->add_option("--area", sa.area, "list: only this area")->type_name(area_type());
  c.signatures->add_option("--role", sa.role, "list: only this role")->type_name("ROLE:{cause,symptom,context}");
  c.signatures->add_flag("--stats", sa.stats, "list: counts per area and role, and example origins");
  add_common(c.signatures, args.common);

  c.lsp = app.add_subcommand("lsp", "Serve diagnostics to an editor: a Language Server on stdin/stdout");
  c.lsp->footer("Editors with an LSP client start it themselves; docs/editors.md shows the set-up for Neovim, "
                "Emacs (eglot), Helix and Kate.");
  c.lsp->add_option("--formats", args.lsp.formats, "also read line formats from DIR (docs/formats.md)")
      ->type_name("DIR");
  add_common(c.lsp, args.common);

  c.completion = app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish)");
  c.completion->footer(
      "Examples:\n  eval \"$(denpex completion bash)\"\n  denpex completion zsh > \"${fpath[1]}/_denpex\"");
  c.completion->add_option("shell", args.shell, "bash, zsh or fish")->required()->check(CLI::IsMember(completion_shells()));

  // The man page, from the same definition (the build writes denpex.1 with it).
  c.manpage = app.add_subcommand("manpage", "Print the man page (troff)")->group("");
  return c;
}

} // namespace denpex::cli
