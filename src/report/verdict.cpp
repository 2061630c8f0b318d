#include <denpex/report/verdict.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <denpex/correlate/describe.hpp>
#include <denpex/report/report.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

using correlate::Incident;
using correlate::Rule;

bool symptom_head(const Incident& inc) { return inc.decision && inc.decision->rule == Rule::upstream_symptom; }

// "host node-017" and "GPU 3" / "GPU 0000:3b:00" of a line, as "node-017, GPU 3".
std::string where_details(const correlate::Evidence& e, std::string_view device, bool with_host) {
  std::vector<std::string> parts;
  if (with_host && e.ctx.host) {
    parts.push_back(e.ctx.host->value);
  }
  if (e.ctx.gpu) {
    parts.push_back(fmt::format("GPU {}", e.ctx.gpu->value));
  } else if (e.ctx.pci) {
    parts.push_back(fmt::format("{} {}", device, e.ctx.pci->value));
  }
  std::string out;
  for (const auto& p : parts) {
    out += (out.empty() ? "" : ", ") + p;
  }
  return out;
}

} // namespace

// "1 failure diagnosed", "2 errors the run recovered from", ...
std::string summary_of(const correlate::Diagnosis& d) {
  const auto n = d.incidents.size();
  const auto recovered = static_cast<std::size_t>(
      std::count_if(d.incidents.begin(), d.incidents.end(), [](const Incident& i) { return i.recovered.has_value(); }));
  // Of those, the ones an earlier run of an appended file ended.
  const auto rerun = static_cast<std::size_t>(std::count_if(
      d.incidents.begin(), d.incidents.end(), [](const Incident& i) { return i.recovered && i.recovered->relaunch; }));
  // ... and the ones printed after the run said it had completed.
  const auto after_done = static_cast<std::size_t>(std::count_if(
      d.incidents.begin(), d.incidents.end(), [](const Incident& i) { return i.recovered && i.recovered->completed; }));
  const auto earlier = static_cast<std::size_t>(std::count_if(
      d.incidents.begin(), d.incidents.end(), [](const Incident& i) { return i.earlier_episode && !i.recovered; }));
  const auto past = recovered + earlier;
  std::string summary;
  if (n == 0) {
    summary = "no known failure signature found";
  } else if (d.incidents[0].decision && d.incidents[0].decision->rule == Rule::upstream_symptom &&
             d.incidents[0].recovered && d.incidents[0].recovered->completed) {
    summary = "the run completed; only reports printed while it shut down follow";
  } else if (d.incidents[0].decision && d.incidents[0].decision->rule == Rule::upstream_symptom &&
             d.incidents[0].recovered) {
    summary = "only downstream reports, and training went on after all of them";
  } else if (d.incidents[0].decision && d.incidents[0].decision->rule == Rule::upstream_symptom) {
    summary = "the run failed; only downstream reports of the failure are in these logs";
  } else if (n - past == 1) {
    summary = "1 failure diagnosed";
  } else if (n == recovered && n == after_done) {
    summary = fmt::format("the run completed; {} error{} printed while it shut down", n, n == 1 ? "" : "s");
  } else if (n == recovered && n == rerun) {
    summary = fmt::format("{} failure{} of earlier runs in the same file", n, n == 1 ? "" : "s");
  } else if (n == recovered) {
    summary = fmt::format("{} error{} the run recovered from", n, n == 1 ? "" : "s");
  } else if (n == past) {
    summary = fmt::format("{} failure{} in earlier episodes", n, n == 1 ? "" : "s");
  } else {
    summary = fmt::format("{} distinct failures diagnosed", n - past);
  }
  if (recovered > rerun + after_done && n != recovered) {
    summary += fmt::format(" (and {} the run recovered from)", recovered - rerun - after_done);
  }
  if (after_done > 0 && n != recovered) {
    summary += fmt::format(" (and {} printed after the run completed)", after_done);
  }
  if (rerun > 0 && n != recovered) {
    summary += fmt::format(" (and {} of earlier runs in the same file)", rerun);
  }
  if (earlier > 0 && n != past) {
    summary += fmt::format(" (and {} in an earlier failure episode)", earlier);
  }
  return summary;
}

std::string describe_who(const Incident& inc, const catalog::Catalog& cat) {
  const auto& e = inc.first;
  const auto device = device_noun(cat.at(inc.signature));
  if (inc.simultaneous && inc.ranks.size() > 1) {
    return fmt::format("ranks {} at once", format_ranks(inc.ranks));
  }
  if (e.ctx.rank) {
    const auto details = where_details(e, device, true);
    return fmt::format("rank {}{}", e.ctx.rank->value, details.empty() ? "" : " (" + details + ")");
  }
  if (e.ctx.local_rank) {
    // Only the rank within its node is known: never a global rank (issue 32).
    std::string who = fmt::format("local rank {}", e.ctx.local_rank->value);
    if (e.ctx.host) {
      who += " on " + e.ctx.host->value;
    }
    const auto gpu = where_details(e, device, false);
    return gpu.empty() ? who : who + " (" + gpu + ")";
  }
  const auto gpu = where_details(e, device, false);
  if (e.ctx.host) {
    return e.ctx.host->value + (gpu.empty() ? "" : " " + gpu) + " (rank unknown)";
  }
  return gpu.empty() ? "rank unknown" : gpu + " (rank unknown)";
}

Verdict verdict(const correlate::Diagnosis& d, const catalog::Catalog& cat) {
  Verdict v;
  v.status = summary_of(d);
  if (d.incidents.empty()) {
    if (d.inference) {
      v.status = "no error line in these logs; " + correlate::summary(*d.inference);
    }
    return v;
  }
  const auto& inc = d.incidents.front();
  if (symptom_head(inc) ? inc.recovered.has_value() : !inc.initiating) {
    return v; // the run went on past everything found, or an earlier run failed
  }
  const auto& sig = cat.at(inc.signature);
  v.failure = true;
  v.no_cause = symptom_head(inc);
  v.who = describe_who(inc, cat);
  v.id = sig.id;
  v.what = std::string(util::clip(util::trim(incident_title(inc, cat)), 200));
  if (v.no_cause && d.inference) {
    // No line says what failed, but the timeouts say who the others waited
    // for and in which collective (issue 32, "When no line says what failed").
    v.hang = true;
    v.who = correlate::hang_who(*d.inference);
    v.what = correlate::hang_what(*d.inference);
  }
  if (!v.no_cause) {
    // The fix in the form the run's stack takes (issue 32): its own fix for
    // that stack, then the environment in its launcher's form.
    const auto fix_in = fix_context(d, inc);
    if (auto own = stack_fix(sig, fix_in); !own.empty()) {
      v.fix.push_back(std::move(own));
    }
    // One line for plain exports; DeepSpeed's .deepspeed_env lines stay in
    // the full report, so the verdict stays a line.
    std::vector<std::string> env;
    for (const auto& line : env_lines(sig, fix_in)) {
      if (line.rfind("echo ", 0) != 0) {
        env.push_back(line);
      }
    }
    if (env.size() > 1 && env.front().rfind("export ", 0) == 0) {
      std::string exports = "export";
      for (const auto& [k, val] : sig.fix.env) {
        exports += fmt::format(" {}={}", k, val);
      }
      v.fix.push_back(std::move(exports));
    } else {
      v.fix.insert(v.fix.end(), env.begin(), env.end());
    }
  }
  return v;
}

namespace {

// "denpex: WHO ID: WHAT", log text escaped for a terminal (or raw).
std::string verdict_head(const Verdict& v, bool escape = true) {
  if (!v.failure) {
    return "denpex: " + v.status;
  }
  const auto text = [&](const std::string& s) { return escape ? util::escape_for_terminal(s) : s; };
  const char* lead = v.hang ? "hang, no error line in these logs: " : v.no_cause ? "no cause in these logs; first report: " : "";
  return fmt::format("denpex: {}{} {}: {}", lead, text(v.who), v.id, text(v.what));
}

// "fix: export A=1; export B=2", or "".
std::string verdict_fix(const Verdict& v) {
  std::string fix;
  for (const auto& f : v.fix) {
    fix += (fix.empty() ? "fix: " : "; ") + f;
  }
  return fix;
}

} // namespace

std::string verdict_line(const Verdict& v, bool escape) {
  const auto fix = verdict_fix(v);
  return verdict_head(v, escape) + (fix.empty() ? "" : " · " + fix);
}

std::string wrap_verdict(const Verdict& v, std::size_t width) {
  // wrap() breaks only at spaces: an id, a rank number and a host name are
  // never cut, whatever the width. The fix stays on one line when it fits
  // one: a command cut in two is easy to paste wrong.
  auto out = util::wrap(verdict_head(v), width, "", "  ");
  const auto fix = verdict_fix(v);
  if (fix.empty()) {
    return out;
  }
  const auto last_nl = out.rfind('\n', out.size() - 2);
  const auto last = out.substr(last_nl == std::string::npos ? 0 : last_nl + 1);
  if (util::display_columns(last) - 1 + 3 + util::display_columns(fix) <= width) {
    out.pop_back();
    return out + " · " + fix + "\n";
  }
  return out + util::wrap(fix, width, "  ", "  ");
}

} // namespace denpex::report
