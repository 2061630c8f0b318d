// denpex::report — the incident as a picture: who failed when, in the
// episode that ended the run (docs/output-formats.md, "Timeline").
//
// A timeline is built from a finished Diagnosis (the printers decide
// nothing): one row for the initiating failure, one per other incident and
// per group of reports (a signature on its ranks), each with the time of its
// first line. Rows are groups, never single ranks, so a 10,000-rank job has
// as many rows as it has kinds of report. Stamps on another clock (raw dmesg
// seconds since boot) go on their own rows with their own scale, never mixed
// with the wall clock.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>

namespace denpex::report {

struct TimelineRow {
  enum class Kind { initiating, incident, report };
  Kind kind = Kind::report;
  std::string who;     // "rank 3", "ranks 0-2,4-7", "host node-017", "" when unknown
  std::uint32_t signature = 0;
  std::uint64_t count = 0;
  std::int64_t t = 0;  // microseconds on the row's clock
  std::uint32_t domain = 0; // 0: wall clock; N+1: source N's seconds since boot
  const correlate::Evidence* first = nullptr; // the row's first line (points into the Diagnosis)
  std::size_t echoes = 0; // report groups the same lane printed within 2 s of this failure (folded into it)
  std::string short_who;  // "7999 ranks", "12 hosts": `who` when it does not fit a narrow label
};

struct Timeline {
  std::int64_t start = 0; // wall clock span (microseconds since the epoch)
  std::int64_t end = 0;
  std::vector<TimelineRow> rows;      // wall clock, initiating first, then by time
  std::vector<TimelineRow> own_clock; // other clocks, by clock then time
  std::size_t omitted = 0;            // rows left out beyond k_max_rows

  static constexpr std::size_t k_max_rows = 12;
};

// The timeline of the terminal episode, or nullopt when fewer than two timed
// lanes (ranks, hosts or sources) are involved or nothing has a wall-clock
// stamp.
std::optional<Timeline> build_timeline(const correlate::Diagnosis& d);

// The text picture, at most `width` columns, ASCII only (reads without colour).
void print_text_timeline(std::ostream& out, const Timeline& tl, const correlate::Diagnosis& d,
                         const catalog::Catalog& cat, std::size_t width);

// "10 min 5 s", "1.5 s", "2 h 3 min"
std::string format_span(std::int64_t micros);

} // namespace denpex::report
