// denpex::core — one call from text to report: the scan, the correlator and
// a printer, for callers that hold the logs in memory rather than on disk.
// The WebAssembly core (src/web/, docs/web.md) is this function; so is the
// Language Server's diagnosis (src/cli/lsp.cpp). Its output is what
// `denpex diagnose --format FORMAT` prints for files of the same names and
// contents (tests/web/equal_test.mjs compares the two on every golden case).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/context/formats.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/util/diagnostics.hpp>

namespace denpex::core {

// What does not change between diagnoses: compiled once, used for many.
struct Engine {
  const catalog::Catalog& catalog;
  const matcher::Matcher& matcher; // compiled with scan::error_line_patterns() as its extra patterns
  const context::FormatSet& formats;
  std::string version;             // the tool's, as reports print it
};

// One log, named as `diagnose` would name the file; `mtime` (seconds since
// the epoch) as its modification time would be used, when known.
struct Document {
  std::string name;
  std::string text;
  std::optional<std::int64_t> mtime;
};

struct Options {
  std::string format = "json"; // any of report::output_formats()
  int now_year = 2026;         // the year for stamps that print none, when nothing else says
  int assume_year = 0;         // --year: the year of stamps that print none (0: infer)
  std::size_t width = 100;     // text and timeline width
};

// The report. Problems with the input (a compressed document in a build
// without libarchive, a bad findings record) are in `diagnostics`, as the
// CLI lists them in the report.
struct Result {
  std::string output;
  std::vector<Diagnostic> diagnostics;
};

Result diagnose(const Engine& engine, const std::vector<Document>& documents, const Options& options);

} // namespace denpex::core
