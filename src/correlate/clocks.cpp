// Pass: clocks. Picks the year for stamps that print none, puts every record
// on a clock (the shared wall clock, or its source's dmesg seconds), and
// reads what a symptom says about when its failure began.
#include "passes.hpp"

#include <denpex/util/strings.hpp>

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include <denpex/correlate/describe.hpp>

namespace denpex::correlate::detail {

namespace {

constexpr std::int64_t k_day_us = 86'400'000'000;

int year_of(std::int64_t epoch_seconds) {
  std::time_t t = epoch_seconds;
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm.tm_year + 1900;
}

// The reference year: the latest printed year, else --year, else the files'
// modification times, else the current year.
void choose_year(State& s, const std::vector<scan::Hit>& hits) {
  auto& clocks = s.d.clocks;
  for (const auto& h : hits) {
    if (h.ctx.time.kind == context::ClockKind::wall && h.ctx.time.wall.year != 0) {
      s.ref_year = std::max(s.ref_year, h.ctx.time.wall.year);
      const auto t = context::to_epoch_micros(h.ctx.time.wall, 0);
      s.latest_us = s.latest_us ? std::max(*s.latest_us, t) : t;
    }
  }
  clocks.year_from = ClockFacts::YearFrom::stamps;
  if (s.options.assume_year != 0) {
    s.ref_year = s.options.assume_year;
    clocks.year_from = ClockFacts::YearFrom::option;
  }
  if (s.ref_year == 0) {
    for (const auto& src : s.d.sources) {
      if (src.mtime) {
        s.ref_year = std::max(s.ref_year, year_of(*src.mtime));
        const auto t = *src.mtime * 1'000'000;
        s.latest_us = s.latest_us ? std::max(*s.latest_us, t) : t;
        clocks.year_from = ClockFacts::YearFrom::mtime;
      }
    }
  }
  if (s.ref_year == 0) {
    s.ref_year = s.options.now_year;
    clocks.year_from = ClockFacts::YearFrom::now;
  }
  s.d.assumed_year = s.ref_year;
}

} // namespace

Time stamp_of_mark(const scan::ProgressMark& m, int ref_year) {
  if (m.time.kind == context::ClockKind::wall) {
    return Stamp{context::to_epoch_micros(m.time.wall, ref_year), 0};
  }
  if (m.time.kind == context::ClockKind::monotonic) {
    return Stamp{m.time.mono_micros, m.source + 1};
  }
  return std::nullopt;
}

void pass_clocks(State& s, const std::vector<scan::Hit>& hits) {
  choose_year(s, hits);
  auto& clocks = s.d.clocks;
  s.records.clear();
  s.records.reserve(hits.size());
  for (const auto& h : hits) {
    Record r;
    r.hit = &h;
    if (h.ctx.time.kind == context::ClockKind::wall) {
      const auto& w = h.ctx.time.wall;
      auto t = context::to_epoch_micros(w, s.ref_year);
      if (w.year == 0) {
        clocks.yearless = true;
        if (s.latest_us && t > *s.latest_us + k_day_us) {
          t = context::to_epoch_micros(w, s.ref_year - 1); // across New Year
        }
      }
      clocks.zoneless = clocks.zoneless || !w.tz_minutes;
      r.wall_us = t;
      r.stamp = Stamp{t, 0};
    } else if (h.ctx.time.kind == context::ClockKind::monotonic) {
      clocks.monotonic = true;
      r.stamp = Stamp{h.ctx.time.mono_micros, h.source + 1};
    }
    r.began = r.stamp;
    // A watchdog that fired after Timeout(ms) says its collective was
    // entered that long before: the failure began then, not now.
    // (Range-checked: a hand-edited or hostile line may say 10^20 ms.)
    static constexpr std::int64_t k_max_timeout_ms = std::int64_t{1} << 40; // about 35 years
    if (const auto ms = util::parse_int(capture(h, "timeout_ms")); ms && *ms <= k_max_timeout_ms && r.began) {
      r.began->t -= *ms * 1000;
    }
    s.records.push_back(r);
  }
  s.d.clock_note = describe(clocks, s.ref_year);
}

} // namespace denpex::correlate::detail
