// GitHub Actions workflow commands ("annotations"):
//   ::error file=logs/train.log,line=41,title=denpex%3A nccl.nvls.cuda-700::NCCL kernel ... — Disable NVLS ...
// Escaping follows the runner's own rules (actions/toolkit
// packages/core/src/command.ts: escapeData and escapeProperty): in the
// message % \r \n, in properties also : and ,. Log text is passed through
// util::escape_for_terminal first, because the workflow log renders ANSI
// escapes and the runner does not unescape any other %XX.
#include <denpex/report/formats.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <denpex/correlate/describe.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

// The annotation level agrees with the exit status: an error only for what
// fails the --fail-on gate, a warning for other error- and warning-level
// findings, a notice for the rest.
std::string_view command_for(catalog::Severity s, const std::optional<catalog::Severity>& fail_on) {
  if (fail_on && s >= *fail_on) {
    return "error";
  }
  return s >= catalog::Severity::warning ? "warning" : "notice";
}

void annotation(std::ostream& out, std::string_view command, const correlate::Diagnosis& d,
                const correlate::Evidence& e, std::string_view title, std::string_view message) {
  out << "::" << command;
  const std::string file = e.source < d.sources.size() ? d.sources[e.source].name : std::string();
  // The runner drops an annotation's location, not the annotation, when the
  // file is not in the repository; stdin has no file to point at.
  if (!file.empty() && file != "<stdin>") {
    out << " file=" << github_escape_property(util::escape_for_terminal(file));
    if (e.line_no > 0) {
      out << ",line=" << e.line_no << ",title=";
    } else {
      out << ",title=";
    }
  } else {
    out << " title=";
  }
  out << github_escape_property(title) << "::" << github_escape_data(message) << "\n";
}

} // namespace

std::string github_escape_data(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '%':
      out += "%25";
      break;
    case '\r':
      out += "%0D";
      break;
    case '\n':
      out += "%0A";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string github_escape_property(std::string_view s) {
  // Properties (file=, title=) are data plus the separators ':' and ','.
  std::string out;
  for (char c : github_escape_data(s)) {
    if (c == ':') {
      out += "%3A";
    } else if (c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

void print_github(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run) {
  for (const auto& inc : d.incidents) {
    const auto& sig = cat.at(inc.signature);
    const auto name = util::escape_for_terminal(util::clip(incident_title(inc, cat), 300));
    const std::string title = fmt::format("denpex: {}{}", inc.initiating ? "initiating failure: " : "", name);
    std::string msg = fmt::format("{} — {}\n", name, sig.fix.summary);
    const auto fix_in = fix_context(d, inc);
    if (const auto own = stack_fix(sig, fix_in); !own.empty()) {
      msg += "  " + own + "\n";
    }
    for (const auto& line : env_lines(sig, fix_in)) {
      msg += "  " + line + "\n";
    }
    msg += fmt::format("signature: {} ({}, {})\n", sig.id, catalog::to_string(sig.severity), sig.area);
    auto w = join_who(who_parts(inc.first, device_noun(sig)), ", ",
                      [](const std::string& v) { return util::escape_for_terminal(v); });
    if (auto t = format_time(inc.first); !t.empty()) {
      w += w.empty() ? t : ", " + t;
    }
    if (!w.empty()) {
      msg += "first seen: " + w + "\n";
    }
    msg += fmt::format("seen: {} line{}", inc.count, inc.count == 1 ? "" : "s");
    if (!inc.ranks.empty()) {
      msg += fmt::format(", ranks {}", format_ranks(inc.ranks));
    }
    if (!inc.hosts.empty()) {
      msg += fmt::format(", {} host{}", inc.hosts.size(), inc.hosts.size() == 1 ? "" : "s");
    }
    msg += "\n";
    for (const auto& note : code_notes(d, inc)) {
      msg += util::escape_for_terminal(util::clip(note, 400)) + "\n";
    }
    if (inc.initiating) {
      msg += fmt::format("decided by: {} (confidence: {})\n", correlate::describe(*inc.decision, d),
                         correlate::to_string(inc.confidence));
    }
    std::uint64_t collateral = 0;
    for (const auto& g : inc.collateral) {
      collateral += g.count;
    }
    if (collateral > 0) {
      msg += fmt::format("explains {} downstream report{}\n", collateral, collateral == 1 ? "" : "s");
    }
    for (const auto& m : correlate::describe_missing(inc, cat)) {
      msg += "missing: " + util::escape_for_terminal(m) + "\n";
    }
    msg += "verify: " + sig.verify.summary + "\n";
    msg += "log: " + util::escape_for_terminal(util::clip(util::trim(inc.first.text), 500));
    // What the run went on past never fails the gate (pass gate): at most a warning.
    const auto level = inc.counts_against_gate ? sig.severity
                                                        : std::min(sig.severity, catalog::Severity::warning);
    annotation(out, command_for(level, run.fail_on), d, inc.first, title, msg);
  }
  for (const auto& g : d.unexplained) {
    const auto& sig = cat.at(g.signature);
    std::string msg = fmt::format("{} — {} report{} with no diagnosed cause in these logs", sig.title, g.count,
                                  g.count == 1 ? "" : "s");
    if (!g.ranks.empty()) {
      msg += fmt::format(" (ranks {})", format_ranks(g.ranks));
    }
    msg += fmt::format("\nsignature: {}\nlog: {}", sig.id,
                       util::escape_for_terminal(util::clip(util::trim(g.first.text), 500)));
    annotation(out, "notice", d, g.first, "denpex: unexplained: " + sig.title, msg);
  }
  if (d.inference) {
    out << "::notice title=" << github_escape_property("denpex: no concrete cause in these logs")
        << "::" << github_escape_data(util::escape_for_terminal(correlate::summary(*d.inference))) << "\n";
  }
  for (const auto& sp : d.starting_points) {
    annotation(out, "notice", d, sp.first, "denpex: starting point (no signature matched)",
               fmt::format("{} error-looking line{}{}\nlog: {}", sp.count, sp.count == 1 ? "" : "s",
                           sp.ranks.empty() ? std::string() : ", ranks " + format_ranks(sp.ranks),
                           util::escape_for_terminal(util::clip(util::trim(sp.first.text), 500))));
  }
  if (d.incidents.empty() && d.unexplained.empty() && !d.inference && d.starting_points.empty()) {
    out << "::notice title=denpex::"
        << github_escape_data(fmt::format("no known failure signature found ({} source{}, {} lines, catalog {} signatures)",
                                          run.sources, run.sources == 1 ? "" : "s", run.lines, cat.size()))
        << "\n";
  }
  for (const auto& dg : run.diagnostics) {
    out << "::" << (dg.level == Level::error ? "error" : "warning") << " title=denpex input problem::"
        << github_escape_data(util::escape_for_terminal(dg.error.where) + ": " + util::escape_for_terminal(dg.error.what))
        << "\n";
  }
}

} // namespace denpex::report
