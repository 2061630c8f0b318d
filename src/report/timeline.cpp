// The incident as a picture (include/denpex/report/timeline.hpp).
#include <denpex/report/timeline.hpp>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

#include <fmt/format.h>

#include <denpex/report/report.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

constexpr std::int64_t k_echo_us = 2'000'000;

// The initiating failure first, then by clock and time.
bool by_kind_then_time(const TimelineRow& a, const TimelineRow& b) {
  if ((a.kind == TimelineRow::Kind::initiating) != (b.kind == TimelineRow::Kind::initiating)) {
    return a.kind == TimelineRow::Kind::initiating;
  }
  return std::tie(a.domain, a.t) < std::tie(b.domain, b.t);
}

std::string who_of(const std::set<int>& ranks, const std::set<std::string>& hosts, const correlate::Evidence& e) {
  if (ranks.size() == 1) {
    return fmt::format("rank {}", *ranks.begin());
  }
  if (!ranks.empty()) {
    return "ranks " + format_ranks(ranks);
  }
  if (hosts.size() == 1) {
    return "host " + *hosts.begin();
  }
  if (!hosts.empty()) {
    return fmt::format("{} hosts", hosts.size());
  }
  return e.ctx.host ? "host " + e.ctx.host->value : std::string("-");
}

std::optional<std::pair<std::int64_t, std::uint32_t>> time_of(const correlate::Evidence& e) {
  if (e.time_us) {
    return std::make_pair(*e.time_us, 0U);
  }
  if (e.ctx.time.kind == context::ClockKind::monotonic) {
    return std::make_pair(e.ctx.time.mono_micros, e.source + 1);
  }
  return std::nullopt;
}

std::string clock_time(std::int64_t us) {
  std::time_t secs = static_cast<std::time_t>(us / 1'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

char mark_of(TimelineRow::Kind k) {
  switch (k) {
  case TimelineRow::Kind::initiating:
    return 'X';
  case TimelineRow::Kind::incident:
    return '*';
  case TimelineRow::Kind::report:
    break;
  }
  return 'o';
}

// What a row is: the entry's id and its counts, "xid.79 (2)"; when that is
// wider than `w` the id is cut and marked, the counts stay whole.
std::string what_of(const TimelineRow& r, const catalog::Catalog& cat, std::size_t w) {
  std::string counts;
  if (r.count > 1) {
    counts += fmt::format(" ({})", r.count);
  }
  if (r.echoes > 0) {
    counts += fmt::format(" +{} report{}", r.echoes, r.echoes == 1 ? "" : "s");
  }
  const auto& id = cat.at(r.signature).id;
  if (id.size() + counts.size() <= w) {
    return id + counts;
  }
  const auto id_room = w > counts.size() + 4 ? w - counts.size() : w;
  return std::string(util::clip(std::string(id.substr(0, id_room - 1)) + "~" + counts, w));
}

// One row: label, the plot from `lo` to `hi` (the row's mark, then '-' to the
// end), and what it is.
void print_row(std::ostream& out, const TimelineRow& r, const catalog::Catalog& cat, std::int64_t lo, std::int64_t hi,
               std::size_t label_w, std::size_t plot_w, std::size_t what_w) {
  const double span = static_cast<double>(std::max<std::int64_t>(hi - lo, 1));
  const auto col = static_cast<std::size_t>(
      std::lround(static_cast<double>(std::clamp(r.t, lo, hi) - lo) / span * static_cast<double>(plot_w - 1)));
  std::string plot(plot_w, ' ');
  for (std::size_t i = col; i < plot_w; ++i) {
    plot[i] = '-';
  }
  plot[col] = mark_of(r.kind);
  if (col + 1 < plot_w) {
    plot[plot_w - 1] = '|';
  }
  const auto what = what_of(r, cat, what_w);
  // A label too long for its column says how many instead: "7999 ranks".
  auto who = util::escape_for_terminal(r.who);
  if (who.size() > label_w && !r.short_who.empty()) {
    who = r.short_who;
  }
  if (who.size() > label_w) {
    who = who.substr(0, label_w - 1) + "~";
  }
  out << "    " << fmt::format("{:<{}}", who, label_w) << ' ' << plot << "  " << what << "\n";
}

} // namespace

std::string format_span(std::int64_t us) {
  const double s = static_cast<double>(us) / 1e6;
  if (s < 60) {
    return fmt::format("{:.1f} s", s);
  }
  const auto total = static_cast<std::int64_t>(s);
  if (total < 3600) {
    return fmt::format("{} min {} s", total / 60, total % 60);
  }
  return fmt::format("{} h {} min", total / 3600, (total % 3600) / 60);
}

std::optional<Timeline> build_timeline(const correlate::Diagnosis& d) {
  Timeline tl;
  std::vector<TimelineRow> rows;
  auto add = [&](TimelineRow::Kind kind, std::uint32_t sig, std::uint64_t count, const std::set<int>& ranks,
                 const std::set<std::string>& hosts, const correlate::Evidence& first) {
    const auto t = time_of(first);
    if (!t) {
      return;
    }
    TimelineRow row{kind, who_of(ranks, hosts, first), sig, count, t->first, t->second, &first};
    if (ranks.size() > 1) {
      row.short_who = fmt::format("{} ranks", ranks.size());
    }
    rows.push_back(std::move(row));
  };
  for (const auto& inc : d.incidents) {
    const bool terminal = !inc.episode || d.episodes[*inc.episode].terminal;
    if (!terminal || inc.recovered) {
      continue;
    }
    add(inc.initiating ? TimelineRow::Kind::initiating : TimelineRow::Kind::incident, inc.signature, inc.count,
        inc.ranks, inc.hosts, inc.first);
    for (const auto& g : inc.collateral) {
      add(TimelineRow::Kind::report, g.signature, g.count, g.ranks, g.hosts, g.first);
    }
  }
  for (const auto& g : d.unexplained) {
    add(TimelineRow::Kind::report, g.signature, g.count, g.ranks, g.hosts, g.first);
  }
  std::set<std::pair<std::uint32_t, std::string>> lanes;
  for (const auto& r : rows) {
    lanes.emplace(r.first->source, r.who);
  }
  const bool wall = std::any_of(rows.begin(), rows.end(), [](const TimelineRow& r) { return r.domain == 0; });
  if (lanes.size() < 2 || !wall) {
    return std::nullopt;
  }
  std::stable_sort(rows.begin(), rows.end(), by_kind_then_time);
  // Reports a failing rank printed at the same moment (the CUDA error under
  // NCCL's WARN, "terminate called") are that failure's echo, not a lane.
  std::vector<TimelineRow> kept;
  std::copy_if(rows.begin(), rows.end(), std::back_inserter(kept),
               [](const TimelineRow& r) { return r.kind != TimelineRow::Kind::report; });
  const auto failures = kept.size();
  for (const auto& r : rows) {
    if (r.kind != TimelineRow::Kind::report) {
      continue;
    }
    auto failure = std::find_if(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(failures), [&](const TimelineRow& f) {
      return f.who == r.who && f.domain == r.domain && std::llabs(r.t - f.t) <= k_echo_us;
    });
    if (failure != kept.begin() + static_cast<std::ptrdiff_t>(failures)) {
      ++failure->echoes;
      continue;
    }
    kept.push_back(r);
  }
  std::stable_sort(kept.begin(), kept.end(), by_kind_then_time);
  if (kept.size() < 2) {
    return std::nullopt;
  }
  for (auto& r : kept) {
    auto& into = r.domain == 0 ? tl.rows : tl.own_clock;
    if (tl.rows.size() + tl.own_clock.size() >= Timeline::k_max_rows) {
      ++tl.omitted;
      continue;
    }
    into.push_back(r);
  }
  if (tl.rows.empty()) {
    return std::nullopt;
  }
  tl.start = tl.rows.front().t;
  tl.end = tl.rows.front().t;
  for (const auto& r : tl.rows) {
    tl.start = std::min(tl.start, r.t);
    tl.end = std::max(tl.end, r.t);
  }
  for (const auto& e : d.episodes) {
    if (e.terminal && e.domain == 0 && e.end_us) {
      tl.end = std::max(tl.end, *e.end_us);
    }
  }
  return tl;
}

void print_text_timeline(std::ostream& out, const Timeline& tl, const correlate::Diagnosis& d,
                         const catalog::Catalog& cat, std::size_t width) {
  const std::size_t label_w = width >= 100 ? 16 : width >= 60 ? 12 : 8;
  // The "what" column takes what its longest entry needs, the plot the rest
  // (at least 24 columns from 80 up, 16 below; at most 64).
  std::size_t needed = 10;
  for (const auto* rows : {&tl.rows, &tl.own_clock}) {
    for (const auto& r : *rows) {
      needed = std::max(needed, what_of(r, cat, 1000).size());
    }
  }
  const std::size_t lead = 4 + label_w + 1 + 2;
  const std::size_t min_plot = width >= 80 ? 24 : width >= 60 ? 16 : 12;
  const std::size_t room = width > lead + min_plot + 10 ? width - lead - min_plot : 10;
  const std::size_t what_w = std::min(needed, room);
  const std::size_t plot_w = width > lead + what_w + min_plot ? std::min<std::size_t>(width - lead - what_w, 64) : min_plot;
  const auto span = std::max<std::int64_t>(tl.end - tl.start, 1);
  const auto scale = format_span(span / static_cast<std::int64_t>(plot_w - 1));
  auto header = fmt::format("  Timeline  {} to {} log time ({}; 1 column = {})", clock_time(tl.start),
                            clock_time(tl.end), format_span(span), scale);
  if (header.size() > width) {
    header = fmt::format("  Timeline  {} to {} ({}, 1 col = {})", clock_time(tl.start), clock_time(tl.end),
                         format_span(span), scale);
  }
  if (header.size() > width) {
    header = fmt::format("  Timeline  {}-{}, 1 col = {}", clock_time(tl.start), clock_time(tl.end), scale);
  }
  out << util::clip(header, width) << "\n";
  for (const auto& r : tl.rows) {
    print_row(out, r, cat, tl.start, tl.end, label_w, plot_w, what_w);
  }
  // Other clocks: their own rows and scale, said so.
  for (std::size_t i = 0; i < tl.own_clock.size();) {
    const auto dom = tl.own_clock[i].domain;
    std::size_t j = i;
    std::int64_t lo = tl.own_clock[i].t;
    std::int64_t hi = lo;
    while (j < tl.own_clock.size() && tl.own_clock[j].domain == dom) {
      lo = std::min(lo, tl.own_clock[j].t);
      hi = std::max(hi, tl.own_clock[j].t);
      ++j;
    }
    out << util::clip(fmt::format("  on {}'s own clock (seconds since boot; not comparable with the rows above)",
                                  util::escape_for_terminal(d.source_name(dom - 1))),
                      width)
        << "\n";
    for (std::size_t k = i; k < j; ++k) {
      print_row(out, tl.own_clock[k], cat, lo, hi, label_w, plot_w, what_w);
    }
    i = j;
  }
  if (tl.omitted > 0) {
    out << fmt::format("    ... {} more group{} (see the report below)\n", tl.omitted, tl.omitted == 1 ? "" : "s");
  }
  const std::string_view legend = "  X initiating failure   * another incident   o first line of a group of reports   | end";
  if (legend.size() <= width) {
    out << legend << "\n\n";
  } else {
    out << "  X initiating failure   * another incident\n  o first line of a group of reports   | end\n\n";
  }
}

} // namespace denpex::report
