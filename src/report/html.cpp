// --format html: one self-contained page (inline CSS, JavaScript and SVG; no
// network fetch, no external fonts), safe to attach to a ticket. Every byte
// from a log goes through html() (text and attribute values alike), so a log
// line holding "<script>" or "</svg>" stays text. docs/output-formats.md.
#include <denpex/report/formats.hpp>
#include <denpex/report/verdict.hpp>
#include <denpex/report/timeline.hpp>

#include <algorithm>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include <denpex/correlate/describe.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

// Text and attribute values: & < > " ' escaped; invalid UTF-8 replaced.
std::string html(std::string_view s) {
  std::string out;
  for (const char c : util::sanitize_utf8(s)) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
        out += ' ';
      } else {
        out += c;
      }
    }
  }
  return out;
}

constexpr std::string_view k_style = R"css(
:root { --bg: #ffffff; --fg: #1d2329; --muted: #5d6975; --line: #d5dbe1; --card: #f6f8fa;
        --crit: #b3261e; --err: #c2410c; --warn: #a16207; --ok: #15803d; --mark: #b3261e; --report: #2563eb; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0f1419; --fg: #e6e9ec; --muted: #9aa5b1; --line: #2c343c; --card: #161c22;
          --crit: #f2b8b5; --err: #fdba74; --warn: #fde047; --ok: #86efac; --mark: #f87171; --report: #93c5fd; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1100px; padding: 24px; background: var(--bg); color: var(--fg);
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
pre { background: var(--card); border: 1px solid var(--line); padding: 10px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
.muted { color: var(--muted); } .sev { font-weight: 600; text-transform: uppercase; font-size: 12px; }
.sev-critical { color: var(--crit); } .sev-error { color: var(--err); } .sev-warning { color: var(--warn); } .sev-info { color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 14px 18px; margin: 12px 0; }
.verdict { font-size: 1.05em; background: var(--card); border-left: 4px solid #c0392b; padding: 8px 12px; margin: 8px 0 16px; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 13px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 8px 0; } dt { color: var(--muted); } dd { margin: 0; }
svg text { fill: var(--fg); font: 12px ui-monospace, Menlo, Consolas, monospace; } svg .axis { stroke: var(--line); }
svg .span { stroke: var(--muted); stroke-width: 2; } svg .mark { cursor: pointer; }
svg .initiating { fill: var(--mark); } svg .incident { fill: var(--err); } svg .report { fill: var(--report); }
#detail { min-height: 3em; }
@media print { body { max-width: none; padding: 0; font-size: 11pt; } .card, pre { break-inside: avoid; } #detail { display: none; } }
)css";

constexpr std::string_view k_script = R"js(
document.querySelectorAll('svg .mark').forEach(function (m) {
  m.addEventListener('click', function () {
    var d = document.getElementById('detail');
    d.textContent = '';
    ['where', 'who', 'time', 'text'].forEach(function (k) {
      var v = m.getAttribute('data-' + k);
      if (!v) return;
      var p = document.createElement(k === 'text' ? 'pre' : 'div');
      p.textContent = (k === 'text' ? '' : k + ': ') + v;
      d.appendChild(p);
    });
  });
});
)js";

std::string when(const correlate::Evidence& e) {
  const auto t = format_time(e);
  return t.empty() ? std::string("no stamp") : t;
}


// Escaped by the caller (html()), as the rest of the page.
std::string who_text(const correlate::Evidence& e, std::string_view device = "GPU") {
  return join_who(who_parts(e, device), ", ", [](const std::string& v) { return v; });
}

// The SVG timeline: one row per group, marks with their details as data-*
// attributes (shown on click) and a <title> (shown on hover, without JS).
void svg_timeline(std::ostream& out, const Timeline& tl, const correlate::Diagnosis& d, const catalog::Catalog& cat) {
  constexpr int k_label = 420;
  constexpr int k_plot = 640;
  constexpr int k_row = 26;
  const auto rows = tl.rows.size() + tl.own_clock.size();
  const int height = static_cast<int>(rows) * k_row + 60;
  out << fmt::format(R"(<svg id="timeline" role="img" aria-label="timeline" viewBox="0 0 {} {}" width="100%">)",
                     k_label + k_plot + 20, height)
      << "\n";
  const auto span = std::max<std::int64_t>(tl.end - tl.start, 1);
  out << fmt::format(R"(<line class="axis" x1="{0}" y1="20" x2="{0}" y2="{1}"/><line class="axis" x1="{2}" y1="20" x2="{2}" y2="{1}"/>)",
                     k_label, height - 30, k_label + k_plot)
      << "\n";
  out << fmt::format(R"(<text x="{}" y="14">{}</text>)", k_label, html(when(*tl.rows.front().first))) << "\n";
  for (int q = 1; q <= 4; ++q) { // ticks at a quarter of the span each
    const int x = k_label + k_plot * q / 4;
    out << fmt::format(R"(<line class="axis" x1="{0}" y1="22" x2="{0}" y2="{1}"/>)", x, height - 30);
    out << fmt::format(R"(<text x="{}" y="{}" text-anchor="{}">+{}</text>)", x, height - 14, q == 4 ? "end" : "middle",
                       html(format_span(span * q / 4)))
        << "\n";
  }
  int y = 40;
  auto draw = [&](const TimelineRow& r, std::int64_t lo, std::int64_t hi) {
    const double frac = static_cast<double>(std::clamp(r.t, lo, hi) - lo) / static_cast<double>(std::max<std::int64_t>(hi - lo, 1));
    const int x = k_label + static_cast<int>(std::lround(frac * k_plot));
    const char* cls = r.kind == TimelineRow::Kind::initiating ? "initiating" : r.kind == TimelineRow::Kind::incident ? "incident" : "report";
    std::string what = cat.at(r.signature).id + (r.count > 1 ? fmt::format(" ({})", r.count) : "") +
                       (r.echoes > 0 ? fmt::format(" +{}", r.echoes) : "");
    out << fmt::format(R"(<text x="4" y="{}">{}</text><text x="{}" y="{}" text-anchor="end" class="muted">{}</text>)", y + 4,
                       html(util::clip(r.who, 22)), k_label - 8, y + 4, html(util::clip(what, 40)))
        << "\n";
    out << fmt::format(R"(<line class="span" x1="{}" y1="{}" x2="{}" y2="{}"/>)", x, y, k_label + k_plot, y) << "\n";
    const std::string where = d.source_name(r.first->source) + ":" + std::to_string(r.first->line_no);
    const std::string attrs = fmt::format(R"(data-where="{}" data-who="{}" data-time="{}" data-text="{}")", html(where),
                                          html(who_text(*r.first)), html(when(*r.first)),
                                          html(util::clip(util::trim(r.first->text), 2000)));
    const std::string title = fmt::format("<title>{} {} at {}: {}</title>", html(cat.at(r.signature).id), html(r.who),
                                          html(where), html(util::clip(util::trim(r.first->text), 300)));
    if (r.kind == TimelineRow::Kind::initiating) {
      out << fmt::format(R"(<path class="mark initiating" id="initiating-mark" d="M{} {} l7 12 h-14 z" {}>{}</path>)", x, y - 8,
                         attrs, title);
    } else {
      out << fmt::format(R"(<circle class="mark {}" cx="{}" cy="{}" r="5" {}>{}</circle>)", cls, x, y, attrs, title);
    }
    out << "\n";
    y += k_row;
  };
  for (const auto& r : tl.rows) {
    draw(r, tl.start, tl.end);
  }
  for (std::size_t i = 0; i < tl.own_clock.size();) {
    const auto dom = tl.own_clock[i].domain;
    std::size_t j = i;
    std::int64_t lo = tl.own_clock[i].t;
    std::int64_t hi = lo;
    for (; j < tl.own_clock.size() && tl.own_clock[j].domain == dom; ++j) {
      lo = std::min(lo, tl.own_clock[j].t);
      hi = std::max(hi, tl.own_clock[j].t);
    }
    out << fmt::format(R"(<text x="4" y="{}" class="muted">on {}'s own clock (seconds since boot, not comparable):</text>)", y,
                       html(d.source_name(dom - 1)))
        << "\n";
    y += k_row;
    for (std::size_t k = i; k < j; ++k) {
      draw(tl.own_clock[k], lo, hi);
    }
    i = j;
  }
  out << "</svg>\n";
}

void incident_section(std::ostream& out, const correlate::Incident& inc, const correlate::Diagnosis& d,
                      const catalog::Catalog& cat) {
  const auto& sig = cat.at(inc.signature);
  const auto sev = std::string(catalog::to_string(sig.severity));
  out << "<div class=\"card\">\n";
  out << fmt::format("<div><span class=\"sev sev-{0}\">{0}</span> <code>{1}</code>{2}</div>\n", sev, html(sig.id),
                     inc.initiating ? " &middot; <strong>initiating failure</strong>" : "");
  out << "<h3>" << html(incident_title(inc, cat)) << "</h3>\n<dl>\n";
  out << "<dt>where</dt><dd class=\"mono\">" << html(location(d, inc.first)) << "</dd>\n";
  if (auto w = who_text(inc.first, device_noun(cat.at(inc.signature))); !w.empty()) {
    out << "<dt>who</dt><dd>" << html(w) << "</dd>\n";
  }
  out << "<dt>when</dt><dd>" << html(when(inc.first)) << "</dd>\n";
  out << "<dt>seen</dt><dd>" << inc.count << " line" << (inc.count == 1 ? "" : "s");
  if (!inc.ranks.empty()) {
    out << ", ranks " << html(format_ranks(inc.ranks));
  }
  out << "</dd>\n";
  if (inc.decision) {
    out << "<dt>decided</dt><dd>" << html(correlate::describe(*inc.decision, d)) << " (confidence: "
        << correlate::to_string(inc.confidence) << ")</dd>\n";
  }
  for (const auto& note : code_notes(d, inc)) {
    out << "<dt>note</dt><dd>" << html(note) << "</dd>\n";
  }
  out << "</dl>\n<pre>" << html(util::clip(util::trim(inc.first.text), 4000)) << "</pre>\n";
  out << "<p><strong>Why.</strong> " << html(sig.root_cause) << "</p>\n";
  const auto fix_in = fix_context(d, inc);
  out << "<p><strong>Fix.</strong> " << html(sig.fix.summary) << "</p>\n";
  if (!sig.fix.steps.empty()) {
    out << "<ol>\n";
    for (const auto& s : sig.fix.steps) {
      out << "<li>" << html(with_log(s, fix_in)) << "</li>\n";
    }
    out << "</ol>\n";
  }
  std::string cmds;
  for (const auto& c : fix_commands(sig, fix_in)) {
    cmds += c + "\n";
  }
  if (!cmds.empty()) {
    out << "<pre>" << html(cmds) << "</pre>\n";
  }
  out << "<p><strong>Verify.</strong> " << html(sig.verify.summary) << "</p>\n";
  if (!inc.missing.empty()) {
    out << "<p><strong>Missing evidence</strong></p>\n<ul>\n";
    for (const auto& m : correlate::describe_missing(inc, cat)) {
      out << "<li>" << html(m) << "</li>\n";
    }
    out << "</ul>\n";
  }
  if (!inc.collateral.empty()) {
    out << "<p><strong>Collateral</strong> (downstream reports explained by this failure)</p>\n"
        << "<table><tr><th>signature</th><th>count</th><th>ranks</th><th>first seen</th></tr>\n";
    for (const auto& g : inc.collateral) {
      out << "<tr><td><code>" << html(cat.at(g.signature).id) << "</code></td><td>" << g.count << "</td><td>"
          << html(format_ranks(g.ranks)) << "</td><td class=\"mono\">" << html(location(d, g.first)) << "</td></tr>\n";
    }
    out << "</table>\n";
  }
  out << "</div>\n";
}

} // namespace

void print_html(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run) {
  const auto* init = d.initiating();
  const std::string title =
      init != nullptr ? incident_title(*init, cat) : std::string("no initiating failure named");
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "script-src 'unsafe-inline'; img-src data:\">\n"
      << "<title>denpex: " << html(util::clip(title, 200)) << "</title>\n<style>" << k_style << "</style>\n</head>\n<body>\n";
  out << "<h1>denpex: " << html(title) << "</h1>\n";
  // The verdict first, as the text report opens with it (issue 32).
  const auto v = verdict(d, cat);
  out << "<p class=\"verdict\" id=\"verdict\">";
  if (v.failure) {
    out << (v.no_cause ? "No cause in these logs; first report: " : "") << "<strong>" << html(v.who)
        << "</strong> <code>" << html(v.id) << "</code>: " << html(v.what);
    for (std::size_t i = 0; i < v.fix.size(); ++i) {
      out << (i == 0 ? " &middot; fix: " : "; ") << "<code>" << html(v.fix[i]) << "</code>";
    }
  } else {
    out << html(v.status);
  }
  out << "</p>\n";
  if (const auto runs = correlate::describe_runs(d); !runs.empty()) {
    out << "<p class=\"verdict\" id=\"runs\">note: " << html(runs) << "</p>\n";
  }
  out << fmt::format("<p class=\"muted\">denpex {} &middot; {} source{}, {} line{}, {} match{}</p>\n", html(run.version),
                     run.sources, run.sources == 1 ? "" : "s", run.lines, run.lines == 1 ? "" : "s", d.hits,
                     d.hits == 1 ? "" : "es");
  if (auto tl = build_timeline(d)) {
    out << "<h2>Timeline</h2>\n<p class=\"muted\">The episode that ended the run: each row is a failure or a group "
           "of reports, marked at its first line (triangle: the initiating failure). Click a mark for its line.</p>\n";
    svg_timeline(out, *tl, d, cat);
    out << "<div id=\"detail\" class=\"card muted\">Click a mark to see its line.</div>\n";
    if (tl->omitted > 0) {
      out << "<p class=\"muted\">" << tl->omitted << " more groups are listed below.</p>\n";
    }
  }
  out << "<h2>Incidents</h2>\n";
  if (d.incidents.empty()) {
    out << "<p>No known failure signature was found.</p>\n";
  }
  for (const auto& inc : d.incidents) {
    incident_section(out, inc, d, cat);
  }
  if (d.inference) {
    out << "<h2>No concrete cause in these logs</h2>\n<p>" << html(correlate::summary(*d.inference)) << "</p>\n<ul>\n";
    for (const auto& s : correlate::next_steps(*d.inference)) {
      out << "<li>" << html(s) << "</li>\n";
    }
    out << "</ul>\n";
  }
  if (!d.unexplained.empty()) {
    out << "<h2>Unexplained reports</h2>\n<table><tr><th>signature</th><th>count</th><th>ranks</th><th>first seen</th></tr>\n";
    for (const auto& g : d.unexplained) {
      out << "<tr><td><code>" << html(cat.at(g.signature).id) << "</code></td><td>" << g.count << "</td><td>"
          << html(format_ranks(g.ranks)) << "</td><td class=\"mono\">" << html(location(d, g.first)) << "</td></tr>\n";
    }
    out << "</table>\n";
  }
  if (!d.clock_note.empty()) {
    out << "<p class=\"muted\">note: " << html(d.clock_note) << "</p>\n";
  }
  out << "<script>" << k_script << "</script>\n</body>\n</html>\n";
}

} // namespace denpex::report
