// Pass: episodes. Training progress and long quiet gaps split each clock's
// failure evidence into episodes; the last episode on a clock is the one
// that ended the run. The terminal episode holds the root: a cause in an
// earlier episode was recovered from or preceded a later, separate failure,
// and is reported as an earlier incident, never as the initiating one.
//
// Points are incidents' first times and symptoms' beginnings (a watchdog
// timeout began Timeout(ms) before it fired). A progress line more than
// progress_margin_us after a point cuts the timeline there; so does a gap of
// quiet_gap_us with no failure evidence at all.
#include "passes.hpp"

#include <algorithm>
#include <map>

namespace denpex::correlate::detail {

// Without comparable clocks, progress this many lines later in the cause's
// own file still says the run went on: a chatty run prints about one line per
// step, so 200 lines is a few hundred steps, far more than a dying rank
// prints after its fault.
constexpr std::uint64_t k_progress_lines = 200;

namespace {

// Whether a relaunch mark of `source` lies between lines `from` and `to`.
bool relaunched_between(const State& s, std::uint32_t source, std::uint64_t from, std::uint64_t to) {
  return std::any_of(s.progress.begin(), s.progress.end(), [&](const scan::ProgressMark& m) {
    return m.relaunch && m.source == source && m.line_no > from && m.line_no < to;
  });
}

} // namespace

std::optional<ProgressRef> progress_after(const State& s, const Evidence& e, const Time& first_time, bool relaunch) {
  for (const auto& mark : s.progress) {
    if (mark.completed) {
      // Printed after its own run said it had completed (and before any new run).
      if (mark.source == e.source && mark.line_no < e.line_no &&
          !relaunched_between(s, e.source, mark.line_no, e.line_no)) {
        return ProgressRef{mark.source, mark.line_no, false, true};
      }
      continue;
    }
    if (mark.relaunch) {
      if (!relaunch) {
        continue;
      }
      // Only its own file began again: a later line there is a later run
      // (incidents: relaunch_after, which sees all their lines).
      if (mark.source == e.source && mark.line_no > e.line_no) {
        return ProgressRef{mark.source, mark.line_no, true};
      }
      continue;
    }
    if (different_runs(s, mark.source, e.source)) {
      continue;
    }
    const Time mt = stamp_of_mark(mark, s.ref_year);
    bool later = false;
    if (comparable(first_time, mt)) {
      later = mt->t > first_time->t + s.options.progress_margin_us;
    } else if (!first_time && mark.source == e.source) {
      later = mark.line_no > e.line_no + k_progress_lines;
    }
    if (later) {
      return ProgressRef{mark.source, mark.line_no};
    }
  }
  return std::nullopt;
}

std::vector<scan::ProgressMark> marks_that_split(const std::vector<scan::ProgressMark>& progress, const std::vector<scan::Hit>& hits,
                                          const catalog::Catalog& cat) {
  std::vector<scan::ProgressMark> out;
  // Where a run said it had completed: its entry carries the tag run-completed.
  for (const auto& h : hits) {
    const auto& tags = cat.at(h.signature).tags;
    if (std::find(tags.begin(), tags.end(), "run-completed") != tags.end()) {
      scan::ProgressMark m;
      m.source = h.source;
      m.line_no = h.line_no;
      m.text = h.text;
      m.completed = true;
      out.push_back(std::move(m));
    }
  }
  // The last failure evidence (a cause or a symptom) of each source.
  std::map<std::uint32_t, std::uint64_t> last_evidence;
  for (const auto& h : hits) {
    if (cat.at(h.signature).role != catalog::Role::context) {
      auto& l = last_evidence[h.source];
      l = std::max({l, h.line_no, h.last_line_no});
    }
  }
  std::map<std::uint32_t, const scan::ProgressMark*> relaunch; // the last with evidence below it
  for (const auto& m : progress) {
    if (!m.relaunch) {
      out.push_back(m); // progress (completion marks come from the hits, above)
      continue;
    }
    const auto it = last_evidence.find(m.source);
    auto& best = relaunch[m.source];
    if (it != last_evidence.end() && it->second > m.line_no && (best == nullptr || best->line_no < m.line_no)) {
      best = &m;
    }
  }
  for (const auto& [source, m] : relaunch) {
    if (m != nullptr) {
      out.push_back(*m);
    }
  }
  return out;
}

namespace {

// A stretch of failure evidence: an incident's first line, or a symptom from
// when its failure began to when it was printed.
struct Point {
  std::int64_t t = 0;   // start
  std::int64_t end = 0; // printed
  std::optional<std::size_t> incident; // index into s.work; none for a symptom
};

// The relaunch mark below every line of an incident, in every file it was
// seen in: it ended an earlier run of an appended file. The same error in
// the last run keeps it in the last run (one incident, lines on both sides).
std::optional<ProgressRef> relaunch_after(const State& s, const Work& w) {
  std::optional<ProgressRef> found;
  for (const auto& [source, last] : w.last_lines) {
    const auto mark = std::find_if(s.progress.begin(), s.progress.end(), [&, src = source](const scan::ProgressMark& m) {
      return m.relaunch && m.source == src;
    });
    if (mark == s.progress.end() || mark->line_no <= last) {
      return std::nullopt;
    }
    found = ProgressRef{mark->source, mark->line_no, true};
  }
  return found;
}

// Marks each incident followed by training progress (the run recovered), or
// ended an earlier run of its file.
void mark_recovered(State& s) {
  for (auto& w : s.work) {
    if (!w.absorbed) {
      w.inc.recovered = relaunch_after(s, w);
      if (!w.inc.recovered) {
        w.inc.recovered = progress_after(s, w.inc.first, w.first_time, /*relaunch=*/false);
      }
    }
  }
}

// The cuts progress makes on one clock: evidence before a cut was recovered from.
std::vector<std::pair<std::int64_t, const scan::ProgressMark*>> progress_cuts(const State& s, std::uint32_t domain) {
  std::vector<std::pair<std::int64_t, const scan::ProgressMark*>> cuts;
  for (const auto& mark : s.progress) {
    const Time mt = stamp_of_mark(mark, s.ref_year);
    if (!mark.relaunch && mt && mt->domain == domain) {
      cuts.emplace_back(mt->t - s.options.progress_margin_us, &mark);
    }
  }
  std::stable_sort(cuts.begin(), cuts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return cuts;
}

std::map<std::uint32_t, std::vector<Point>> collect_points(const State& s) {
  std::map<std::uint32_t, std::vector<Point>> by_domain;
  for (std::size_t i = 0; i < s.work.size(); ++i) {
    if (!s.work[i].absorbed && s.work[i].first_time && !borrowed_stamp(s.work[i])) {
      const auto t = s.work[i].first_time->t;
      by_domain[s.work[i].first_time->domain].push_back(Point{t, t, i});
    }
  }
  for (const auto& r : s.records) {
    if (r.began && r.raised && !r.folded && s.cat.at(r.hit->signature).role == catalog::Role::symptom &&
        !borrowed_stamp(*r.hit)) {
      by_domain[r.began->domain].push_back(Point{r.began->t, r.stamp->t, std::nullopt});
    }
  }
  for (auto& [domain, points] : by_domain) {
    std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.t < b.t; });
  }
  return by_domain;
}

// Splits one clock's sorted points into episodes, appended to d.episodes.
void split_domain(State& s, std::uint32_t domain, const std::vector<Point>& points) {
  const auto cuts = progress_cuts(s, domain);
  const std::size_t first_episode = s.d.episodes.size();
  std::size_t cut = 0;
  std::int64_t last = 0; // the latest evidence so far
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    Episode::Start start = Episode::Start::first;
    const scan::ProgressMark* mark = nullptr;
    std::int64_t gap = 0;
    if (i > 0) {
      while (cut < cuts.size() && cuts[cut].first <= points[i - 1].t) {
        ++cut;
      }
      if (cut < cuts.size() && cuts[cut].first <= p.t) {
        start = Episode::Start::progress;
        mark = cuts[cut].second;
      } else if (p.t - last > s.options.quiet_gap_us) {
        start = Episode::Start::quiet_gap;
        gap = p.t - last;
      }
    }
    last = i == 0 || start != Episode::Start::first ? p.end : std::max(last, p.end);
    if (i == 0 || start != Episode::Start::first) {
      Episode e;
      e.domain = domain;
      e.started_by = start;
      e.gap_us = gap;
      if (mark != nullptr) {
        e.progress_source = mark->source;
        e.progress_line = mark->line_no;
      }
      if (domain == 0) {
        e.start_us = p.t;
      }
      s.d.episodes.push_back(e);
    }
    auto& e = s.d.episodes.back();
    if (domain == 0) {
      e.end_us = last;
    }
    if (p.incident) {
      s.work[*p.incident].inc.episode = s.d.episodes.size() - 1;
    }
  }
  if (s.d.episodes.size() > first_episode) {
    s.d.episodes.back().terminal = true;
  }
}

// A line without a stamp of its own (a Python exception under the last
// logged step) only says it was printed at or after its borrowed stamp, and
// before the next stamped line of its source that matched: it joins the
// latest episode that starts within that window. It never splits episodes.
void place_borrowed(State& s) {
  for (auto& w : s.work) {
    if (w.absorbed || !w.first_time || !borrowed_stamp(w)) {
      continue;
    }
    std::optional<std::int64_t> upper;
    for (const auto& r : s.records) {
      if (r.hit->source == w.inc.first.source && r.hit->line_no > w.inc.first.line_no && r.stamp &&
          r.stamp->domain == w.first_time->domain && !borrowed_stamp(*r.hit)) {
        upper = upper ? std::min(*upper, r.stamp->t) : r.stamp->t;
      }
    }
    for (std::size_t e = 0; e < s.d.episodes.size(); ++e) {
      const auto& ep = s.d.episodes[e];
      if (ep.domain != w.first_time->domain) {
        continue;
      }
      const bool ends_after = !ep.end_us || *ep.end_us >= w.first_time->t;
      const bool starts_before = !upper || !ep.start_us || *ep.start_us <= *upper;
      if ((ends_after && starts_before) || !w.inc.episode) {
        w.inc.episode = e; // the latest that fits; the first on its clock at worst
      }
    }
    if (w.inc.episode) {
      const auto& ep = s.d.episodes[*w.inc.episode];
      if (ep.start_us && w.first_time->t < *ep.start_us) {
        w.first_time->t = *ep.start_us; // for ordering: not before its episode began
      }
    }
  }
}

} // namespace

void pass_episodes(State& s) {
  mark_recovered(s);
  for (const auto& [domain, points] : collect_points(s)) {
    split_domain(s, domain, points);
  }
  place_borrowed(s);
  for (auto& w : s.work) {
    if (w.inc.episode && !s.d.episodes[*w.inc.episode].terminal && !w.inc.recovered) {
      w.inc.earlier_episode = true;
    }
  }
}

} // namespace denpex::correlate::detail
