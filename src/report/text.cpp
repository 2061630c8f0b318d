#include <denpex/report/report.hpp>

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include <denpex/correlate/describe.hpp>
#include <denpex/report/timeline.hpp>
#include <denpex/report/verdict.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

using catalog::Severity;
using correlate::Evidence;
using correlate::Group;
using correlate::Incident;

struct Style {
  bool on;
  std::string operator()(std::string_view code, std::string_view text) const {
    return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
  }
};

std::string_view severity_color(Severity s) {
  switch (s) {
  case Severity::critical:
    return "1;31";
  case Severity::error:
    return "31";
  case Severity::warning:
    return "33";
  case Severity::info:
    return "36";
  }
  return "0";
}

// The fix's commands after its stack's own fix and its env lines (those are
// printed above them).
std::vector<std::string> commands_after_exports(const catalog::Signature& sig, const FixContext& c) {
  auto all = fix_commands(sig, c);
  const auto above = env_lines(sig, c).size() + (stack_fix(sig, c).empty() ? 0 : 1);
  all.erase(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min(above, all.size())));
  return all;
}

using util::display_columns;
using util::wrap;

// "  label    text": prose wrapped to `width`, continuation lines under the
// text (a field of an incident: decided, note, kind).
std::string field(std::string_view label, std::string_view text, std::size_t width) {
  const std::string pad(11, ' ');
  const std::size_t room = width > pad.size() + 20 ? width - pad.size() : 20;
  auto wrapped = wrap(text, room, "");
  std::string out = fmt::format("  {:<8} ", label);
  for (std::size_t at = 0; at < wrapped.size();) {
    const auto nl = wrapped.find('\n', at);
    out += (at == 0 ? "" : pad) + wrapped.substr(at, nl - at + 1);
    at = nl + 1;
  }
  return out.empty() || out.back() != '\n' ? out + "\n" : out;
}

// Raw log text after `out` (the first line's prefix), continuation lines
// after `pad`, broken after a space where it can be and
// inside a word only when one word is wider than the room: the pieces put
// back together are the line exactly.
std::string raw_block(std::string out, const std::string& pad, std::string_view text, std::size_t width) {
  const std::size_t room = width > pad.size() + 20 ? width - pad.size() : 20;
  std::size_t cols = 0;
  while (!text.empty()) {
    // The next piece: a word and the spaces after it.
    auto end = text.find(' ');
    end = end == std::string_view::npos ? text.size() : text.find_first_not_of(' ', end);
    end = end == std::string_view::npos ? text.size() : end;
    auto piece = text.substr(0, end);
    if (cols > 0 && cols + display_columns(piece) > room) {
      out += "\n" + pad;
      cols = 0;
    }
    if (cols == 0 && display_columns(piece) > room) {
      // A word wider than the room: as much as fits, on a code point boundary.
      std::size_t n = 0;
      std::size_t c = 0;
      while (n < piece.size() && (c < room || (static_cast<unsigned char>(piece[n]) & 0xC0) == 0x80)) {
        c += (static_cast<unsigned char>(piece[n]) & 0xC0) != 0x80 ? 1 : 0;
        ++n;
      }
      piece = piece.substr(0, n);
    }
    out.append(piece);
    cols += display_columns(piece);
    text.remove_prefix(piece.size());
  }
  return out + "\n";
}

// "  line     TEXT", continuation lines under the text.
std::string raw_field(std::string_view label, std::string_view text, std::size_t width) {
  return raw_block(fmt::format("  {:<8} ", label), std::string(11, ' '), text, width);
}

// A table of report groups (collateral, unexplained): SIGNATURE COUNT RANKS
// FIRST SEEN when every row fits the width, else two lines per group.
void print_groups(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat,
                  const std::vector<correlate::Group>& groups, std::string_view indent, std::size_t width) {
  struct Row {
    std::string id, count, ranks, where;
  };
  std::vector<Row> rows;
  bool fits = display_columns(indent) + 42 + 1 + 6 + 2 + 14 + 1 + 10 <= width;
  for (const auto& g : groups) {
    rows.push_back({cat.at(g.signature).id, std::to_string(g.count), format_ranks(g.ranks),
                    util::escape_for_terminal(location(d, g.first))});
    const auto line = fmt::format("{}{:<42} {:>6}  {:<14} {}", indent, rows.back().id, rows.back().count,
                                  rows.back().ranks, rows.back().where);
    fits = fits && display_columns(line) <= width;
  }
  if (fits) {
    out << fmt::format("{}{:<42} {:>6}  {:<14} {}\n", indent, "SIGNATURE", "COUNT", "RANKS", "FIRST SEEN");
    for (const auto& r : rows) {
      out << fmt::format("{}{:<42} {:>6}  {:<14} {}\n", indent, r.id, r.count, r.ranks, r.where);
    }
    return;
  }
  for (const auto& r : rows) {
    const auto ranks = r.ranks == "-" ? std::string()
                                      : fmt::format(", rank{} {}",
                                                    r.ranks.find_first_of(",-") == std::string::npos ? "" : "s", r.ranks);
    out << indent << r.id << "\n"
        << wrap(fmt::format("{} line{}{}, first at {}", r.count, r.count == "1" ? "" : "s", ranks, r.where), width,
                std::string(indent) + "  ");
  }
}

// Where in the code: the frame that raised it, the caller's own innermost
// frame when that is elsewhere, and the exception chain it ends.
void print_code_location(std::ostream& out, const correlate::Diagnosis& d, const Incident& inc, std::size_t width) {
  if (!inc.traceback) {
    return;
  }
  const auto& tb = *inc.traceback;
  if (const auto* f = tb.raising()) {
    out << field("raised", util::escape_for_terminal(correlate::format_frame(*f)), width);
    if (!f->code.empty()) {
      out << raw_field("", util::escape_for_terminal(util::clip(f->code, 200)), width);
    }
  }
  if (const auto* u = tb.user_frame(); u != nullptr && u != tb.raising()) {
    out << field("code", util::escape_for_terminal(correlate::format_frame(*u)), width);
  }
  if (auto chain = correlate::describe_chain(inc, d); !chain.empty()) {
    out << field("chain", util::escape_for_terminal(util::clip(chain, 400)), width);
  }
}

void print_traceback(std::ostream& out, const context::Traceback& tb, const Style& st) {
  out << "\n  " << st("1", fmt::format("Traceback ({} frame{}, innermost last)", tb.frame_count, tb.frame_count == 1 ? "" : "s"))
      << "\n";
  const bool cut = tb.frame_count > tb.frames.size();
  for (std::size_t i = 0; i < tb.frames.size(); ++i) {
    if (cut && i == context::Traceback::k_head) {
      out << fmt::format("    ... {} frames ...\n", tb.frame_count - tb.frames.size());
    }
    out << "    " << util::escape_for_terminal(correlate::format_frame(tb.frames[i])) << "\n";
  }
}

// Fix: the summary, the env exports (in `exports`' form), numbered steps,
// commands.
template <typename Exports>
void print_fix_section(std::ostream& out, const catalog::Signature& sig, const FixContext& c, const TextOptions& o,
                       const Style& st, Exports exports) {
  out << "\n  " << st("1", "Fix") << "\n" << wrap(sig.fix.summary, o.width, "    ");
  exports();
  for (std::size_t i = 0; i < sig.fix.steps.size(); ++i) {
    out << wrap(fmt::format("{}. {}", i + 1, with_log(sig.fix.steps[i], c)), o.width, "    ", i + 1 < 10 ? "   " : "    ");
  }
  for (const auto& cmd : commands_after_exports(sig, c)) {
    out << "    $ " << util::escape_for_terminal(cmd) << "\n";
  }
}

// An incident's Fix: the stack's own fix and the env settings in the
// launcher's form, highlighted.
void print_fix(std::ostream& out, const catalog::Signature& sig, const FixContext& c, const TextOptions& o,
               const Style& st) {
  print_fix_section(out, sig, c, o, st, [&] {
    if (const auto own = stack_fix(sig, c); !own.empty()) {
      out << "    " << st("32", util::escape_for_terminal(own)) << "\n";
    }
    for (const auto& line : env_lines(sig, c)) {
      out << "    " << st("32", line) << "\n";
    }
  });
}

void print_why(std::ostream& out, const catalog::Signature& sig, const TextOptions& o, const Style& st,
               bool blank_before = true) {
  out << (blank_before ? "\n  " : "  ") << st("1", "Why") << "\n" << wrap(sig.root_cause, o.width, "    ");
}

void print_verify(std::ostream& out, const catalog::Signature& sig, const FixContext& c, const TextOptions& o,
                  const Style& st) {
  out << "\n  " << st("1", "Verify") << "\n" << wrap(sig.verify.summary, o.width, "    ");
  for (const auto& cmd : verify_commands(sig, c)) {
    out << "    $ " << util::escape_for_terminal(cmd) << "\n";
  }
}

void print_why_verify(std::ostream& out, const catalog::Signature& sig, const FixContext& c, const TextOptions& o,
                      const Style& st) {
  print_why(out, sig, o, st);
  print_verify(out, sig, c, o, st);
}

// "where    FILE:LINE  rank 3  host node-017  GPU 3  pid 2339": who goes on
// its own lines when it does not fit, never splitting a "host node-017" pair.
void print_where(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const Incident& inc,
                 std::size_t width) {
  const auto place = "  where    " + util::escape_for_terminal(location(d, inc.first));
  const auto parts = who_parts(inc.first, device_noun(cat.at(inc.signature)), inc.simultaneous ? &inc.ranks : nullptr);
  const auto escape = [](const std::string& v) { return util::escape_for_terminal(v); };
  const auto who = join_who(parts, "  ", escape);
  out << place;
  if (!who.empty() && display_columns(place) + 2 + display_columns(who) <= width) {
    out << "  " << who;
  } else if (!who.empty()) {
    std::size_t used = width; // forces the first line break
    for (const auto& p : parts) {
      const auto text = join_who({p}, "", escape);
      if (used + 2 + display_columns(text) > width) {
        out << "\n           " << text;
        used = 11 + display_columns(text);
      } else {
        out << "  " << text;
        used += 2 + display_columns(text);
      }
    }
  }
  out << "\n";
}

// Which of the entry's signals were seen (where) and which are missing (what
// each would show); what does not fit the width goes on the lines below.
void print_evidence(std::ostream& out, const correlate::Diagnosis& d, const catalog::Signature& sig, const Incident& inc,
                    const TextOptions& o, const Style& st) {
  out << "\n  " << st("1", "Evidence") << "\n";
  for (const auto& s : inc.signals) {
    const auto& sg = sig.signals[s.signal];
    // "seen    SIGNAL  WHERE" / "missing SIGNAL  WHAT"; what does not fit
    // the width goes on the lines below, wrapped.
    std::string rest;
    if (s.count > 0 && s.first) {
      rest = util::escape_for_terminal(location(d, *s.first)) +
             (s.count > 1 ? fmt::format(" (+{} more)", s.count - 1) : "");
    } else if (worth_listing_missing(sig, inc, s.signal)) {
      rest = sg.description;
    } else {
      continue;
    }
    const bool was_seen = s.count > 0 && s.first;
    const auto head_cols = 4 + 7 + 1 + std::max<std::size_t>(24, sg.id.size()) + 1;
    out << "    " << st(was_seen ? "32" : "33", was_seen ? "seen   " : "missing") << " ";
    if (head_cols + display_columns(rest) <= o.width) {
      out << fmt::format("{:<24}", sg.id) << " " << rest << "\n";
    } else {
      out << sg.id << "\n" << wrap(rest, o.width, "      ");
    }
  }
}

// The incident's heading: what it is in this run.
std::string incident_heading(const Incident& inc, std::size_t number) {
  const bool symptom_head = inc.decision && inc.decision->rule == correlate::Rule::upstream_symptom;
  if (symptom_head && inc.recovered) {
    return inc.recovered->completed  ? "FIRST REPORT (after the run completed)"
           : inc.recovered->relaunch ? "FIRST REPORT (an earlier run in the same file)"
                                     : "FIRST REPORT (training went on after it)";
  }
  if (symptom_head) {
    return "FIRST REPORT OF THE FAILURE (no cause in these logs)";
  }
  return inc.initiating ? "INITIATING FAILURE" : fmt::format("INCIDENT {}", number);
}

// How it was decided, and what else the correlator knows about it.
void print_decision_and_notes(std::ostream& out, const correlate::Diagnosis& d, const Incident& inc, bool symptom_head,
                              const TextOptions& o) {
  if (inc.initiating) {
    out << field("decided",
                 fmt::format("{} (confidence: {})", correlate::describe(*inc.decision, d), correlate::to_string(inc.confidence)),
                 o.width);
  }
  for (const auto& note : {correlate::describe_simultaneous(inc), correlate::describe_recovered(inc, d),
                           correlate::describe_earlier_episode(inc, d), correlate::describe_inferred(inc)}) {
    if (!note.empty()) {
      out << field("note", util::escape_for_terminal(note), o.width);
    }
  }
  if (auto id = correlate::describe_identity(inc.first, d); !id.empty()) {
    out << field("identity", util::escape_for_terminal(id), o.width);
  }
  if (auto who = correlate::describe_rank_from(inc, d); !who.empty()) {
    out << field("who", util::escape_for_terminal(who), o.width);
  }
  if (symptom_head && d.inference) {
    out << "  suspect  " << util::escape_for_terminal(correlate::summary(*d.inference)) << "\n";
  }
  if (!inc.caused_by.empty()) {
    out << "  note     the line says it was caused by an earlier Xid " << inc.caused_by << "\n";
  }
  if (inc.said_above) {
    out << field("above",
                 util::escape_for_terminal(fmt::format("{}  ({}:{}; the last error line before it, no entry names it)",
                                                       util::clip(util::trim(inc.said_above->text), 300),
                                                       d.source_name(inc.said_above->source),
                                                       inc.said_above->line_no)),
                 o.width);
  }
}

// The collateral table: its top rows, and how many more (--full: all).
void print_collateral(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const Incident& inc,
                      const TextOptions& o, const Style& st) {
  std::uint64_t total = 0;
  for (const auto& g : inc.collateral) {
    total += g.count;
  }
  out << "\n" << st("1", wrap(fmt::format("Collateral ({} downstream report{} explained by this failure)", total,
                                          total == 1 ? "" : "s"),
                              o.width, "  "));
  if (o.full || inc.collateral.size() <= TextOptions::k_collateral_rows) {
    print_groups(out, d, cat, inc.collateral, "    ", o.width);
    return;
  }
  const std::vector<Group> top(inc.collateral.begin(),
                               inc.collateral.begin() + static_cast<std::ptrdiff_t>(TextOptions::k_collateral_rows));
  print_groups(out, d, cat, top, "    ", o.width);
  std::uint64_t rest = 0;
  for (std::size_t i = TextOptions::k_collateral_rows; i < inc.collateral.size(); ++i) {
    rest += inc.collateral[i].count;
  }
  const auto more = inc.collateral.size() - TextOptions::k_collateral_rows;
  out << wrap(fmt::format("... and {} more signature{} ({} report{}): --full lists them", more, more == 1 ? "" : "s",
                          rest, rest == 1 ? "" : "s"),
              o.width, "    ");
}

// An incident, the answer first: what, where, the line, the fix; then how
// it was decided, why, how to verify, and the evidence around it.
void print_incident(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const Incident& inc,
                    std::size_t number, const TextOptions& o, const Style& st) {
  const auto& sig = cat.at(inc.signature);
  const bool symptom_head = inc.decision && inc.decision->rule == correlate::Rule::upstream_symptom;
  const std::string head = incident_heading(inc, number);
  const auto level = fmt::format("[{}]", catalog::to_string(sig.severity));
  const bool id_fits = display_columns(head) + 2 + level.size() + 1 + sig.id.size() <= o.width;
  out << st("1", head) << "  " << st(severity_color(sig.severity), level) << (id_fits ? " " : "\n  ") << sig.id << "\n";
  out << st("1", wrap(util::escape_for_terminal(util::clip(incident_title(inc, cat), 300)), o.width, "  "));
  if (!inc.headline.empty()) {
    out << field("kind", sig.title, o.width);
  }
  print_where(out, d, cat, inc, o.width);
  if (auto t = format_time(inc.first); !t.empty()) {
    out << "  when     " << t << "\n";
  }
  out << raw_field("line", util::escape_for_terminal(util::clip(util::trim(inc.first.text), 300)), o.width);
  print_code_location(out, d, inc, o.width);
  const auto fix_in = fix_context(d, inc);
  print_fix(out, sig, fix_in, o, st);
  out << "\n";
  std::string seen = fmt::format("{} line{}", inc.count, inc.count == 1 ? "" : "s");
  if (!inc.ranks.empty()) {
    seen += fmt::format(", rank{} {}", inc.ranks.size() == 1 ? "" : "s", format_ranks(inc.ranks));
  }
  if (!inc.hosts.empty()) {
    seen += fmt::format(", {} host{}", inc.hosts.size(), inc.hosts.size() == 1 ? "" : "s");
  }
  out << "  seen     " << seen << "\n";
  print_decision_and_notes(out, d, inc, symptom_head, o);
  print_why_verify(out, sig, fix_in, o, st);
  if (inc.traceback && !inc.traceback->frames.empty()) {
    print_traceback(out, *inc.traceback, st);
  }
  if (sig.signals.size() > 1 && sig.headline.empty()) {
    print_evidence(out, d, sig, inc, o, st);
  }
  if (!inc.context.empty()) {
    out << "\n  " << st("1", "Context") << "\n";
    for (const auto& g : inc.context) {
      const auto& id = cat.at(g.signature).id;
      const auto where = util::escape_for_terminal(location(d, g.first));
      out << "    " << id << (4 + id.size() + 2 + display_columns(where) <= o.width ? "  " : "\n      ") << where << "\n";
    }
  }
  if (!inc.missing.empty()) {
    out << "\n  " << st("1", "Missing evidence") << "\n";
    for (const auto& m : correlate::describe_missing(inc, cat)) {
      out << wrap("- " + m, o.width, "    ", "  ");
    }
  }
  if (!inc.collateral.empty()) {
    print_collateral(out, d, cat, inc, o, st);
  }
  out << "\n";
}

// The first lines: the verdict (what failed, who, the fix), then the
// summary and the counts, wrapped when they do not fit. Without a failure
// the summary is the verdict.
void print_header(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run,
                  const TextOptions& o, const Style& st) {
  const auto v = verdict(d, cat);
  const std::string merged = run.findings_files == 0
                                 ? std::string()
                                 : fmt::format(", merged from {} findings file{}", run.findings_files,
                                               run.findings_files == 1 ? "" : "s");
  const auto counts = fmt::format("({} source{}, {} line{}, {} match{}{})", run.sources, run.sources == 1 ? "" : "s",
                                  run.lines, run.lines == 1 ? "" : "s", d.hits, d.hits == 1 ? "" : "es", merged);
  if (v.failure) {
    out << st("1", wrap_verdict(v, o.width)) << wrap(summary_of(d) + " " + counts, o.width, "  ", "  ") << "\n";
    return;
  }
  const auto summary = summary_of(d);
  if (display_columns("denpex: " + summary) + 1 + display_columns(counts) <= o.width) {
    out << st("1", "denpex: " + summary) << " " << counts << "\n\n";
  } else {
    out << st("1", wrap("denpex: " + summary, o.width, "", "  ")) << wrap(counts, o.width, "  ") << "\n";
  }
}

// No cause in the logs, but their shape says something (a missing rank).
void print_inference(std::ostream& out, const correlate::Inference& inf, const TextOptions& o, const Style& st) {
  out << st("1", "NO CONCRETE CAUSE IN THESE LOGS") << "\n";
  out << wrap(correlate::summary(inf), o.width, "  ");
  out << wrap(fmt::format("world size {} (from {})", inf.world_size, correlate::world_size_from(inf)), o.width, "  ");
  for (const auto& m : inf.mismatches) {
    out << "  mismatch  " << m << "\n";
  }
  out << "\n  " << st("1", "Next") << "\n";
  for (const auto& s : correlate::next_steps(inf)) {
    out << wrap("- " + s, o.width, "    ", "  ");
  }
  out << "\n";
}

// Groups of reports no incident explains, and what to do next when there is
// no cause at all.
void print_unexplained(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat,
                       const TextOptions& o, const Style& st) {
  const auto n = d.incidents.size();
  const bool no_cause = n == 0 || (d.incidents[0].decision && d.incidents[0].decision->rule == correlate::Rule::upstream_symptom);
  out << st("1", n == 0     ? "REPORTS (downstream symptoms; their cause is not in these logs)"
                 : no_cause ? "OTHER REPORTS (downstream symptoms; their cause is not in these logs)"
                            : "UNEXPLAINED REPORTS")
      << "\n";
  print_groups(out, d, cat, d.unexplained, "  ", o.width);
  if (n == 0) {
    // Without a cause, each report's own advice is the next step (a
    // SIGKILL: look for the kernel's OOM record; a timeout: the missing rank).
    out << "\n  " << st("1", "Next") << "\n";
    std::size_t shown = 0;
    for (const auto& g : d.unexplained) {
      const auto& sig = cat.at(g.signature);
      if (sig.generic || shown == 3) {
        continue;
      }
      out << wrap(sig.id + ": " + sig.fix.summary, o.width, "    ");
      ++shown;
    }
    if (shown == 0 && !d.unexplained.empty()) {
      out << wrap(cat.at(d.unexplained.front().signature).fix.summary, o.width, "    ");
    }
  }
  out << "\n";
}

// The earliest error-looking lines no signature matched.
void print_starting_points(std::ostream& out, const correlate::Diagnosis& d, const TextOptions& o, const Style& st) {
  out << st("1", wrap("STARTING POINTS (earliest error-looking lines; no signature matched them)", o.width, ""));
  for (const auto& sp : d.starting_points) {
    out << "  " << util::escape_for_terminal(location(d, sp.first));
    std::string extra = fmt::format("{} line{}", sp.count, sp.count == 1 ? "" : "s");
    if (!sp.ranks.empty()) {
      extra += fmt::format(", rank{} {}", sp.ranks.size() == 1 ? "" : "s", format_ranks(sp.ranks));
    }
    if (auto t = format_time(sp.first); !t.empty()) {
      extra += ", " + t;
    }
    out << "  (" << extra << ")\n"
        << raw_block("    ", "    ", util::escape_for_terminal(util::clip(util::trim(sp.first.text), 300)), o.width);
  }
  out << "\n";
}

} // namespace

void print_text(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run,
                const TextOptions& o) {
  const Style st{o.color};
  const auto n = d.incidents.size();
  print_header(out, d, cat, run, o, st);
  // One line on the first screen; the runs themselves at the end.
  if (const auto runs = correlate::describe_runs_briefly(d); !runs.empty()) {
    out << wrap("note: " + runs + " (below)", o.width, "  ", "      ") << "\n";
  }
  // The first incident comes first, whole: on an 80x24 terminal its cause,
  // who, decisive line and fix are on the first screen (issue 32). The
  // timeline pictures the failure after it.
  for (std::size_t i = 0; i < n; ++i) {
    print_incident(out, d, cat, d.incidents[i], i + 1, o, st);
    if (i == 0 && o.timeline) {
      if (const auto tl = build_timeline(d)) {
        print_text_timeline(out, *tl, d, cat, o.width);
      }
    }
  }
  if (n == 0 && o.timeline) {
    if (const auto tl = build_timeline(d)) {
      print_text_timeline(out, *tl, d, cat, o.width);
    }
  }
  if (d.inference) {
    print_inference(out, *d.inference, o, st);
  }
  if (!d.unexplained.empty()) {
    print_unexplained(out, d, cat, o, st);
  }
  if (!d.starting_points.empty()) {
    print_starting_points(out, d, o, st);
  }
  if (n == 0 && !d.inference && d.unexplained.empty()) {
    out << "  Nothing in these logs matched the catalog (" << cat.size() << " signatures).\n"
        << "  Try `denpex grep` to see matched lines, or add a signature (docs/signature-format.md).\n";
  }
  if (const auto runs = correlate::describe_runs(d); !runs.empty()) {
    out << wrap("note: " + runs, o.width, "", "      ");
  }
  if (!d.clock_note.empty()) {
    out << wrap("note: " + d.clock_note, o.width, "", "      ");
  }
  if (run.long_lines_cut > 0) {
    out << wrap(fmt::format("note: {} over-long line{} matched in pieces", run.long_lines_cut,
                            run.long_lines_cut == 1 ? " was" : "s were"),
                o.width, "", "      ");
  }
}

void print_entry(std::ostream& out, const catalog::Signature& sig, const catalog::Catalog& cat, const TextOptions& o) {
  const Style st{o.color};
  out << st("1", sig.id) << "  " << st(severity_color(sig.severity), fmt::format("[{}]", catalog::to_string(sig.severity)))
      << fmt::format(" {} / {} / priority {}\n", sig.area, catalog::to_string(sig.role), sig.priority);
  out << "  " << st("1", sig.title) << "\n\n";
  print_why(out, sig, o, st, false);
  const FixContext explain; // no log, no stack: {log} reads LOG
  print_fix_section(out, sig, explain, o, st, [&] {
    for (const auto& [stack, what] : sig.fix.stacks) {
      out << fmt::format("    {:<11} {}\n", stack + ":", what);
    }
    if (!sig.fix.env.empty()) {
      out << "    shell:      ";
      for (const auto& [k, v] : sig.fix.env) {
        out << "export " << k << "=" << v << "; ";
      }
      out << "\n    python:     ";
      for (const auto& [k, v] : sig.fix.env) {
        out << fmt::format("os.environ[\"{}\"] = \"{}\"; ", k, v);
      }
      out << "(before init_process_group)\n    sbatch:     #SBATCH --export=ALL";
      for (const auto& [k, v] : sig.fix.env) {
        out << "," << k << "=" << v;
      }
      out << "\n    kubernetes: env:";
      for (const auto& [k, v] : sig.fix.env) {
        out << fmt::format(" [{{name: {}, value: \"{}\"}}]", k, v);
      }
      out << "\n";
    }
  });
  print_verify(out, sig, explain, o, st);
  if (!sig.prevention.empty()) {
    out << "\n  " << st("1", "Prevention") << "\n" << wrap(sig.prevention, o.width, "    ");
  }
  if (!sig.affected.empty()) {
    out << "\n  " << st("1", "Affected") << "\n" << wrap(sig.affected, o.width, "    ");
  }
  out << "\n  " << st("1", "Signals") << "\n";
  for (const auto& s : sig.signals) {
    out << "    " << s.id << (s.anchor ? "" : " (supporting)") << ": " << s.pattern << "\n";
  }
  if (!sig.explains.empty()) {
    out << "\n  " << st("1", "Explains") << "\n";
    for (const auto& e : sig.explains) {
      auto idx = cat.find(e);
      out << "    " << e << (idx ? "  " + cat.at(*idx).title : "") << "\n";
    }
  }
  if (!sig.related.empty()) {
    out << "\n  " << st("1", "Related") << "\n";
    for (const auto& e : sig.related) {
      auto idx = cat.find(e);
      out << "    " << e << (idx ? "  " + cat.at(*idx).title : "") << "\n";
    }
  }
  out << "\n  " << st("1", "References") << "\n";
  for (const auto& r : sig.references) {
    out << "    " << r.title << "\n      " << r.url << "\n";
  }
  // A catalog loaded without its examples (diagnose, grep) has none to show.
  if (!sig.match_examples.empty()) {
    out << "\n  " << st("1", "Example") << "\n    " << util::escape_for_terminal(sig.match_examples.front().line)
        << "\n";
  }
}

} // namespace denpex::report
