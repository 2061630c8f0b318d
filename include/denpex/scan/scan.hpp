// denpex::scan — the pipeline up to the correlator: inputs -> chunks ->
// matches -> context -> owned hits, in bounded memory, over many files at
// once. The CLI calls this; tests call it with an in-memory InputOpener.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/context/formats.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/scan/error_lines.hpp>
#include <denpex/scan/hit.hpp>
#include <denpex/source/input.hpp>
#include <denpex/source/line_reader.hpp>
#include <denpex/util/diagnostics.hpp>

namespace denpex::scan {

struct ScanOptions {
  source::ReaderOptions reader;
  unsigned jobs = 1;                    // threads over input units
  std::size_t keep_per_key = 4;         // hits kept per (entry, signal, source, rank, GPU); the rest are counted
  // The catalog the matcher was compiled from, when set: generic evidence
  // (entries with a headline) is kept per distinct message rather than per
  // signal, and signals with a look-back read the traceback or the thrown
  // type above their line (context/traceback.hpp).
  const catalog::Catalog* catalog = nullptr;
  // Line formats from data (--formats DIR): launcher prefixes the built-in
  // scanners do not know (context/formats.hpp). May be null.
  const context::FormatSet* formats = nullptr;
  std::size_t max_line_copy = 2048;     // bytes of a matched line kept for the report
  std::size_t error_samples = 64;       // error-looking lines sampled per source (0 = off)
  // When set, a source that is denpex's own `--format jsonl` output is read as
  // findings (per-node results merged in one more run; findings/findings.hpp)
  // instead of as a log.
  const catalog::Catalog* findings_catalog = nullptr;
  // Progress, updated as chunks are read (any thread); may be null.
  std::atomic<std::uint64_t>* bytes_done = nullptr;
  std::atomic<std::uint64_t>* units_done = nullptr;
  // Set once the inputs are listed (directories walked): how many files, and
  // their total size when every one is a plain uncompressed file (0 when any
  // is compressed or not a regular file, so bytes read cannot be compared).
  std::atomic<std::uint64_t>* units_total = nullptr;
  std::atomic<std::uint64_t>* bytes_total = nullptr;
  // Sequential runs only: called after each chunk with the current unit's
  // hits and sources so far (follow mode re-correlates from these).
  std::function<void(const std::vector<scan::Hit>&, const std::vector<scan::SourceRef>&)> on_chunk;
};

struct ScanTotals {
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  std::uint64_t sources = 0;
  std::uint64_t long_lines_cut = 0;
  std::uint64_t matches = 0;
  // Findings files read (denpex's own JSON Lines: a merge); the totals above
  // then count what the runs that wrote them read.
  std::uint64_t findings_files = 0;
};

struct ScanResult {
  std::vector<scan::Hit> hits;
  std::vector<scan::SourceRef> sources;
  std::vector<scan::ErrorLine> error_lines; // the first error-looking lines of each source
  std::vector<scan::ProgressMark> progress; // the last training-progress line of each source
  ScanTotals totals;
  matcher::ScanStats matcher; // how the matcher found the matches (for -v)
};

// Called for every match as it is found (grep streams these), in source
// order per unit; with jobs > 1 units complete in any order but each unit's
// matches arrive together and units are delivered in input order.
using HitCallback = std::function<void(const scan::Hit&, const scan::SourceRef&)>;

ScanResult run(source::InputOpener& opener, const std::vector<std::string>& paths, const matcher::Matcher& matcher,
               const ScanOptions& options, Diagnostics& diags, const HitCallback& on_hit = {});

} // namespace denpex::scan
