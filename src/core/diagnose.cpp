// One call from text to report (core/diagnose.hpp): what `denpex diagnose`
// does between reading its files and printing, for documents in memory.
#include <denpex/core/diagnose.hpp>

#include <sstream>
#include <utility>

#include <denpex/correlate/correlate.hpp>
#include <denpex/report/report.hpp>
#include <denpex/scan/scan.hpp>
#include <denpex/source/input.hpp>

namespace denpex::core {

Result diagnose(const Engine& engine, const std::vector<Document>& documents, const Options& options) {
  Diagnostics diags;
  std::vector<source::MemoryFile> files;
  std::vector<std::string> names;
  files.reserve(documents.size());
  for (const auto& doc : documents) {
    files.push_back(source::MemoryFile{doc.name, doc.text, doc.mtime});
    names.push_back(doc.name);
  }
  auto opener = source::make_document_opener(std::move(files));
  scan::ScanOptions so;
  so.catalog = &engine.catalog;
  so.findings_catalog = &engine.catalog;
  so.formats = &engine.formats;
  auto scanned = scan::run(*opener, names, engine.matcher, so, diags);
  correlate::CorrelateOptions co;
  co.now_year = options.now_year;
  co.assume_year = options.assume_year;
  auto d = correlate::correlate(std::move(scanned.hits), std::move(scanned.sources), engine.catalog, co,
                                scanned.progress, scanned.error_lines);
  report::RunInfo run{engine.version,        scanned.totals.bytes,          scanned.totals.lines,
                      scanned.totals.sources, scanned.totals.long_lines_cut, diags.items(),
                      scanned.totals.findings_files};
  const auto* format = report::find_output_format(options.format);
  if (format == nullptr) {
    diags.error(Error{ErrorKind::usage, "format", "'" + options.format + "' is not one of " +
                                                      report::output_format_names()});
    return Result{{}, diags.items()};
  }
  report::TextOptions to;
  to.width = options.width;
  std::ostringstream out;
  format->print(out, d, engine.catalog, run, to);
  return Result{out.str(), diags.items()};
}

} // namespace denpex::core
