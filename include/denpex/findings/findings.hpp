// denpex::findings — denpex's own JSON Lines findings (`--format jsonl`),
// written by one run and read back by another that merges per-node runs
// (docs/cluster.md). One module holds both sides and the compaction
// between them, over one description of the record (record.hpp):
//
//   write_header      the first record: what the file is
//   write_evidence    the hits the diagnosis was made from, compacted
//                     without changing what a merge decides
//   write_progress    the progress and relaunch marks
//   Reader            a findings file back into hits, sources and marks
//
// report/jsonl.cpp prints the records people read (incidents, groups,
// inference, starting points, diagnostics, the summary) around these.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>
#include <denpex/findings/record.hpp>
#include <denpex/scan/hit.hpp>
#include <denpex/util/diagnostics.hpp>

namespace denpex::findings {

// --- Writing -------------------------------------------------------------

// The first record: {"type":"findings","schema_version":1,"format":"denpex-findings",
// "tool":{"name":"denpex","version":...}}.
void write_header(std::ostream& out, std::string_view tool_version);

// The diagnosis's hits as evidence records, in order; returns how many
// records were written. Hits of one entry and signal on one host, GPU and
// clock fold into the earliest of them when nothing the correlator decides
// changes (writer.cpp says exactly when).
std::size_t write_evidence(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat);

// The diagnosis's progress marks as progress records.
void write_progress(std::ostream& out, const correlate::Diagnosis& d);

// --- Reading -------------------------------------------------------------

// Whether `head`, the first bytes of a file, is denpex's findings: its first
// record is the header (write_header), or, from before the header existed,
// a record with a type and a schema_version.
bool is_findings(std::string_view head);

// What the runs that wrote a findings file read (their summary records).
struct Totals {
  std::uint64_t sources = 0;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  std::uint64_t long_lines_cut = 0;
  std::uint64_t matches = 0;
};

// A findings file as a merge correlates it.
struct Contents {
  std::vector<scan::Hit> hits;
  std::vector<scan::SourceRef> sources; // the logs the runs read, as they named them
  std::vector<scan::ProgressMark> progress;
  Totals totals;
};

// Reads one findings file, chunk by chunk. A record that is not JSON, or
// has a field of the wrong type, is one named error and the rest are read.
// Findings written since issue 18 carry evidence records: those become the
// hits as they were. Older findings have only incidents and groups: their
// locations stand in (approximate: per-rank times are lost).
class Reader {
public:
  // `name` is the file's name in errors and the source of records that name none.
  Reader(const catalog::Catalog& cat, std::string name);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // The next piece of the file; `first_line` is the line number of its
  // first line. A record cut at the end of a piece is joined with the rest.
  void read(std::string_view text, std::uint64_t first_line, Diagnostics& diags);

  // At the end of the file: what it held.
  Contents finish(Diagnostics& diags);

private:
  class Impl;
  std::unique_ptr<Impl> m_impl;
};

} // namespace denpex::findings
