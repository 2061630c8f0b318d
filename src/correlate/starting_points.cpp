// Pass: starting points. When the diagnosis found no incident and no
// inference, or only a first report (no cause), the sampled error-looking
// lines that no entry matched are grouped by template (numbers masked) and
// the earliest groups kept, so the reader still has somewhere to start. A
// first report also gets the last such line just above it in its own file
// (`said_above`); when the report is a generic launcher summary (the
// catalog says `generic`), that line becomes its headline: it is what the
// failing process said.
#include "passes.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <denpex/util/strings.hpp>

namespace denpex::correlate::detail {

namespace {

// How far above a first report its process's last error line may be.
constexpr std::uint64_t k_said_above_lines = 40;

// A sampled error line as evidence, with its wall time when it has one.
Evidence evidence_of(const scan::ErrorLine& l, std::optional<std::int64_t> time_us) {
  Evidence e;
  e.source = l.source;
  e.line_no = l.line_no;
  e.text = l.text;
  e.ctx = l.ctx;
  e.time_us = time_us;
  return e;
}

} // namespace

void pass_starting_points(State& s, const std::vector<scan::Hit>& hits, const std::vector<scan::ErrorLine>& lines) {
  auto& d = s.d;
  const auto& catalog = s.cat;
  const auto& options = s.options;
  // With no cause, a first report heads the run; the lines no entry named
  // are where its cause may be, above all the one just above it.
  Incident* head = nullptr;
  if (!d.incidents.empty() && d.incidents[0].decision && d.incidents[0].decision->rule == Rule::upstream_symptom &&
      !d.incidents[0].recovered) {
    head = &d.incidents[0];
  }
  if ((!d.incidents.empty() && head == nullptr) || d.inference || lines.empty()) {
    return;
  }
  // Starting points are lines no signature matched.
  std::set<std::pair<std::uint32_t, std::uint64_t>> matched;
  for (const auto& h : hits) {
    matched.emplace(h.source, h.line_no);
  }
  const int year = d.assumed_year != 0 ? d.assumed_year : options.now_year;
  std::map<std::string, std::size_t> index;
  std::vector<StartingPoint> groups;
  for (const auto& l : lines) {
    if (matched.count({l.source, l.line_no}) != 0) {
      continue;
    }
    std::optional<std::int64_t> t;
    if (l.ctx.time.kind == context::ClockKind::wall) {
      t = context::to_epoch_micros(l.ctx.time.wall, year);
    }
    if (head != nullptr && l.source == head->first.source && l.line_no < head->first.line_no &&
        head->first.line_no - l.line_no <= k_said_above_lines &&
        (!head->said_above || head->said_above->line_no < l.line_no)) {
      head->said_above = evidence_of(l, t);
    }
    // The template ignores launcher prefixes and stamps: numbers are masked.
    auto key = util::message_template(util::trim(l.text));
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, groups.size()).first;
      StartingPoint sp;
      sp.template_text = std::move(key);
      sp.first = evidence_of(l, t);
      groups.push_back(std::move(sp));
    }
    auto& g = groups[it->second];
    ++g.count;
    if (l.ctx.rank) {
      g.ranks.insert(l.ctx.rank->value);
    }
    const bool earlier_time = t && g.first.time_us && *t < *g.first.time_us;
    if (earlier_time) {
      g.first = evidence_of(l, t);
    }
  }
  std::stable_sort(groups.begin(), groups.end(), [](const StartingPoint& a, const StartingPoint& b) {
    if (a.first.time_us && b.first.time_us && *a.first.time_us != *b.first.time_us) {
      return *a.first.time_us < *b.first.time_us;
    }
    return std::tie(a.first.source, a.first.line_no) < std::tie(b.first.source, b.first.line_no);
  });
  if (head != nullptr && head->said_above && head->headline.empty() && catalog.at(head->signature).generic) {
    head->headline = std::string(util::clip(util::trim(head->said_above->text), 300));
  }
  if (groups.size() > options.max_starting_points) {
    groups.resize(options.max_starting_points);
  }
  d.starting_points = std::move(groups);
}

} // namespace denpex::correlate::detail
