// Markdown for pasting into a ticket (GitHub-flavoured: tables, fenced code).
//
// Log-derived text (lines, file names, hosts) only ever appears inside code
// spans or fences, after util::escape_for_terminal (so control characters
// and invalid UTF-8 show as \xNN). Catalog prose may use `code` spans; its
// other Markdown punctuation is backslash-escaped so a title cannot open a
// link or an HTML tag. See docs/output-formats.md.
#include <denpex/report/formats.hpp>
#include <denpex/report/verdict.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <denpex/correlate/describe.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

using correlate::Evidence;
using correlate::Group;
using correlate::Incident;

std::size_t longest_run(std::string_view s, char c) {
  std::size_t best = 0;
  std::size_t cur = 0;
  for (char ch : s) {
    cur = ch == c ? cur + 1 : 0;
    best = std::max(best, cur);
  }
  return best;
}

// Catalog prose: keeps `code` spans (they are meant as Markdown), escapes
// the punctuation that could start emphasis, links, HTML or table cells.
std::string md_text(std::string_view s, bool in_table = false) {
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '`') {
      std::size_t n = 0;
      while (i + n < s.size() && s[i + n] == '`') {
        ++n;
      }
      const std::string fence(n, '`');
      // The closing run must be exactly n backticks long.
      std::size_t close = std::string_view::npos;
      for (std::size_t j = i + n; j < s.size();) {
        if (s[j] != '`') {
          ++j;
          continue;
        }
        std::size_t m = 0;
        while (j + m < s.size() && s[j + m] == '`') {
          ++m;
        }
        if (m == n) {
          close = j;
          break;
        }
        j += m;
      }
      if (close == std::string_view::npos) {
        for (std::size_t k = 0; k < n; ++k) {
          out += "\\`";
        }
        i += n;
        continue;
      }
      std::string inner(s.substr(i + n, close - i - n));
      std::replace(inner.begin(), inner.end(), '\n', ' ');
      std::replace(inner.begin(), inner.end(), '\r', ' ');
      out += fence;
      for (char ic : inner) {
        if (in_table && ic == '|') {
          out += "\\|";
        } else {
          out += ic;
        }
      }
      out += fence;
      i = close + n;
      continue;
    }
    auto alnum = [](char x) {
      return (x >= 'a' && x <= 'z') || (x >= 'A' && x <= 'Z') || (x >= '0' && x <= '9');
    };
    // An intraword `_` never emphasises (GFM), so NCCL_NVLS_ENABLE stays as
    // written; a `#` only matters at the start of a line.
    if ((c == '_' && i > 0 && i + 1 < s.size() && alnum(s[i - 1]) && alnum(s[i + 1])) || (c == '#' && i > 0)) {
      out += c;
      ++i;
      continue;
    }
    switch (c) {
    case '\\':
    case '*':
    case '_':
    case '[':
    case ']':
    case '<':
    case '>':
    case '&':
    case '~':
    case '|':
    case '#':
      out += '\\';
      out += c;
      break;
    case '\n':
    case '\r':
      out += ' ';
      break;
    default:
      out += c;
    }
    ++i;
  }
  return out;
}

// A log-derived string as a code span (terminal-escaped first).
std::string md_log(std::string_view s, bool in_table = false) {
  return markdown_code_span(util::escape_for_terminal(s), in_table);
}

std::string where_text(const correlate::Diagnosis& d, const Evidence& e) { return location(d, e); }


std::string who(const Evidence& e, std::string_view device) {
  auto out = join_who(who_parts(e, device), " · ", [](const std::string& v) { return md_log(v); });
  if (auto t = format_time(e); !t.empty()) {
    out += out.empty() ? t : " · " + t;
  }
  return out;
}

std::string hosts_text(const std::set<std::string>& hosts) {
  if (hosts.empty()) {
    return "-";
  }
  std::string out;
  std::size_t shown = 0;
  for (const auto& h : hosts) {
    if (shown == 3) {
      out += fmt::format(" +{} more", hosts.size() - shown);
      break;
    }
    out += (shown == 0 ? "" : ", ") + md_log(h, true);
    ++shown;
  }
  return out;
}

void fenced(std::ostream& out, std::string_view info, const std::vector<std::string>& lines) {
  if (lines.empty()) {
    return;
  }
  std::string all;
  for (const auto& l : lines) {
    all += l;
    all += '\n';
  }
  const auto fence = markdown_fence_for(all);
  out << fence << info << "\n" << all << fence << "\n\n";
}

void group_table(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat,
                 const std::vector<Group>& groups) {
  out << "| Signature | Title | Count | Ranks | Hosts | First seen |\n";
  out << "|---|---|--:|---|---|---|\n";
  for (const auto& g : groups) {
    const auto& sig = cat.at(g.signature);
    out << "| " << markdown_code_span(sig.id, true) << " | " << md_text(sig.title, true) << " | " << g.count << " | "
        << format_ranks(g.ranks) << " | " << hosts_text(g.hosts) << " | " << md_log(where_text(d, g.first), true)
        << " |\n";
  }
  out << "\n";
}

void print_incident(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const Incident& inc,
                    std::size_t number) {
  const auto& sig = cat.at(inc.signature);
  out << "### " << number << ". " << (inc.headline.empty() ? md_text(sig.title) : md_log(inc.headline)) << (inc.initiating ? " (initiating)" : "") << "\n\n";
  out << markdown_code_span(sig.id) << " · " << md_text(sig.area) << " · " << catalog::to_string(sig.severity);
  if (inc.initiating) {
    out << " · decided by: " << md_text(correlate::describe(*inc.decision, d)) << " (confidence: " << correlate::to_string(inc.confidence) << ")";
  }
  out << "\n\n";
  out << "**Where:** " << md_log(where_text(d, inc.first));
  if (auto w = who(inc.first, device_noun(sig)); !w.empty()) {
    out << " · " << w;
  }
  out << "  \n";
  std::string seen = fmt::format("{} line{}", inc.count, inc.count == 1 ? "" : "s");
  if (!inc.ranks.empty()) {
    seen += fmt::format(", rank{} {}", inc.ranks.size() == 1 ? "" : "s", format_ranks(inc.ranks));
  }
  if (!inc.hosts.empty()) {
    seen += fmt::format(", {} host{}", inc.hosts.size(), inc.hosts.size() == 1 ? "" : "s");
  }
  out << "**Seen:** " << seen << "\n\n";
  for (const auto& note : code_notes(d, inc)) {
    out << "- " << md_log(note) << "\n";
  }
  if (inc.traceback || inc.simultaneous) {
    out << "\n";
  }
  if (!inc.caused_by.empty()) {
    out << "The line says it was caused by an earlier Xid " << md_log(inc.caused_by) << ".\n\n";
  }
  fenced(out, "text", {util::escape_for_terminal(util::trim(inc.first.text))});
  if (inc.said_above) {
    out << "The last error line before it (" << md_log(location(d, *inc.said_above)) << "; no entry names it):\n\n";
    fenced(out, "text", {util::escape_for_terminal(util::trim(inc.said_above->text))});
  }
  out << "**Why.** " << md_text(sig.root_cause) << "\n\n";
  out << "**Fix.** " << md_text(sig.fix.summary) << "\n\n";
  const auto fix_in = fix_context(d, inc);
  for (std::size_t i = 0; i < sig.fix.steps.size(); ++i) {
    out << (i + 1) << ". " << md_text(with_log(sig.fix.steps[i], fix_in)) << "\n";
  }
  if (!sig.fix.steps.empty()) {
    out << "\n";
  }
  const auto fix_lines = fix_commands(sig, fix_in);
  fenced(out, "sh", fix_lines);
  out << "**Verify.** " << md_text(sig.verify.summary) << "\n\n";
  fenced(out, "sh", verify_commands(sig, fix_in));
  if (sig.signals.size() > 1 && sig.headline.empty()) {
    out << "**Evidence**\n\n";
    for (const auto& s : inc.signals) {
      const auto& sg = sig.signals[s.signal];
      if (s.count > 0 && s.first) {
        out << "- [x] " << markdown_code_span(sg.id) << " seen at " << md_log(where_text(d, *s.first))
            << (s.count > 1 ? fmt::format(" (+{} more)", s.count - 1) : "") << "\n";
      } else if (worth_listing_missing(sig, inc, s.signal)) {
        out << "- [ ] " << markdown_code_span(sg.id) << " not seen" << (sg.description.empty() ? "" : ": ")
            << md_text(sg.description) << "\n";
      }
    }
    out << "\n";
  }
  if (!inc.missing.empty()) {
    out << "**Missing evidence**\n\n";
    for (const auto& m : correlate::describe_missing(inc, cat)) {
      out << "- " << md_text(util::sanitize_utf8(m)) << "\n";
    }
    out << "\n";
  }
  if (!inc.collateral.empty()) {
    std::uint64_t total = 0;
    for (const auto& g : inc.collateral) {
      total += g.count;
    }
    out << fmt::format("**Collateral** ({} downstream report{} explained by this failure)\n\n", total,
                       total == 1 ? "" : "s");
    group_table(out, d, cat, inc.collateral);
  }
  if (!inc.context.empty()) {
    out << "**Context**\n\n";
    group_table(out, d, cat, inc.context);
  }
  if (!sig.references.empty()) {
    out << "**References**\n\n";
    for (const auto& r : sig.references) {
      out << "- " << md_text(r.title.empty() ? r.url : r.title) << ": <" << r.url << ">\n";
    }
    out << "\n";
  }
}

} // namespace

std::string markdown_code_span(std::string_view s, bool in_table) {
  std::string body;
  body.reserve(s.size());
  for (char c : s) {
    if (c == '\n' || c == '\r') {
      body += ' ';
    } else if (in_table && c == '|') {
      body += "\\|";
    } else {
      body += c;
    }
  }
  if (body.empty()) {
    return "` `";
  }
  const std::string fence(longest_run(body, '`') + 1, '`');
  const bool pad = body.front() == '`' || body.back() == '`' || body.front() == ' ' || body.back() == ' ';
  return pad ? fence + " " + body + " " + fence : fence + body + fence;
}

std::string markdown_fence_for(std::string_view s) {
  return std::string(std::max<std::size_t>(3, longest_run(s, '`') + 1), '`');
}


void print_markdown(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat,
                    const RunInfo& run) {
  const auto n = d.incidents.size();
  if (n == 0) {
    out << "## denpex: no known failure signature found\n\n";
  } else {
    const auto& first = d.incidents.front();
    const auto& sig = cat.at(first.signature);
    out << "## denpex: " << (first.headline.empty() ? md_text(sig.title) : md_log(first.headline)) << "\n\n";
    // The verdict first, as the text report opens with it (issue 32).
    if (const auto v = verdict(d, cat); v.failure) {
      out << "**Verdict:** " << (v.no_cause ? "no cause in these logs; first report: " : "") << md_log(v.who) << " "
          << markdown_code_span(v.id);
      for (std::size_t i = 0; i < v.fix.size(); ++i) {
        out << (i == 0 ? " · fix: " : "; ") << markdown_code_span(v.fix[i]);
      }
      out << "  \n";
    }
    if (const auto runs = correlate::describe_runs(d); !runs.empty()) {
      out << "**Note:** " << md_log(runs) << "  \n";
    }
    out << "**" << (first.initiating ? "Initiating failure" : "First failure") << ":** " << markdown_code_span(sig.id)
        << " (" << catalog::to_string(sig.severity) << ") at " << md_log(where_text(d, first.first));
    if (auto w = who(first.first, device_noun(sig)); !w.empty()) {
      out << " · " << w;
    }
    out << "  \n";
    if (first.initiating) {
      out << "**Decided by:** " << md_text(correlate::describe(*first.decision, d)) << " (confidence: " << correlate::to_string(first.confidence)
          << ")  \n";
    }
    out << "**Fix:** " << md_text(sig.fix.summary) << "\n\n";
    out << "| # | Signature | Severity | Initiating | First seen | Ranks | Hosts | Lines |\n";
    out << "|--:|---|---|---|---|---|---|--:|\n";
    for (std::size_t i = 0; i < n; ++i) {
      const auto& inc = d.incidents[i];
      out << "| " << (i + 1) << " | " << markdown_code_span(cat.at(inc.signature).id, true) << " | "
          << catalog::to_string(cat.at(inc.signature).severity) << " | " << (inc.initiating ? "yes" : "") << " | "
          << md_log(where_text(d, inc.first), true) << " | " << format_ranks(inc.ranks) << " | "
          << hosts_text(inc.hosts) << " | " << inc.count << " |\n";
    }
    out << "\n";
  }
  for (std::size_t i = 0; i < n; ++i) {
    print_incident(out, d, cat, d.incidents[i], i + 1);
  }
  if (d.inference) {
    const auto& inf = *d.inference;
    out << "### No concrete cause in these logs\n\n" << md_text(util::sanitize_utf8(correlate::summary(inf))) << "\n\n";
    if (inf.world_size > 0) {
      out << "World size " << inf.world_size << " (from " << md_text(correlate::world_size_from(inf)) << ").\n\n";
    }
    for (const auto& m : inf.mismatches) {
      out << "- mismatch: " << md_log(m) << "\n";
    }
    if (!inf.mismatches.empty()) {
      out << "\n";
    }
    if (const auto steps = correlate::next_steps(inf); !steps.empty()) {
      out << "**Next steps**\n\n";
      for (const auto& s : steps) {
        out << "- " << md_text(util::sanitize_utf8(s)) << "\n";
      }
      out << "\n";
    }
  }
  if (!d.unexplained.empty()) {
    out << (n == 0 ? "### Reports (downstream symptoms; their cause is not in these logs)\n\n"
                   : "### Unexplained reports\n\n");
    group_table(out, d, cat, d.unexplained);
  }
  if (!d.starting_points.empty()) {
    out << "### Starting points\n\nThe earliest error-looking lines; no signature matched them.\n\n";
    out << "| First seen | Count | Ranks | Line |\n|---|--:|---|---|\n";
    for (const auto& sp : d.starting_points) {
      out << "| " << md_log(where_text(d, sp.first), true) << " | " << sp.count << " | " << format_ranks(sp.ranks)
          << " | " << md_log(util::clip(util::trim(sp.first.text), 300), true) << " |\n";
    }
    out << "\n";
  }
  if (n == 0 && !d.inference && d.unexplained.empty() && d.starting_points.empty()) {
    out << "Nothing in these logs matched the catalog (" << cat.size() << " signatures).\n\n";
  }
  if (!run.diagnostics.empty()) {
    out << "**Input problems**\n\n";
    for (const auto& dg : run.diagnostics) {
      out << "- " << (dg.level == Level::error ? "error" : "warning") << ": " << md_log(dg.error.where) << ": "
          << md_log(dg.error.what) << "\n";
    }
    out << "\n";
  }
  out << "---\n\n<sub>denpex " << md_text(run.version) << " · " << run.sources << " source"
      << (run.sources == 1 ? "" : "s") << " · " << run.lines << " lines · " << d.hits << " matches · catalog "
      << cat.size() << " signatures";
  if (!d.clock_note.empty()) {
    out << " · " << md_text(d.clock_note);
  }
  if (run.long_lines_cut > 0) {
    out << " · " << run.long_lines_cut << " over-long lines matched in pieces";
  }
  out << "</sub>\n";
}

} // namespace denpex::report
