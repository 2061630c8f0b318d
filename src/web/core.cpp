// The WebAssembly core's entry points (docs/web.md): the page, the VS Code
// extension and tests/web/ call these through the module's cwrap. Documents
// are added one by one, then one run prints the report in any of the CLI's
// formats through core::diagnose, from the same sources as the CLI; the
// matcher is RE2 alone (Hyperscan has no WebAssembly build), which finds
// what the prefilter path finds, hit for hit.
#include <emscripten/emscripten.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/catalog/serialize.hpp>
#include <denpex/context/formats.hpp>
#include <denpex/core/diagnose.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/scan/error_lines.hpp>

namespace {

using namespace denpex;

// Compiled on the first run and kept: start-up is paid once per page.
struct Loaded {
  catalog::Catalog catalog;
  matcher::Matcher matcher;
  context::FormatSet formats;
  std::vector<Diagnostic> problems;
};

std::unique_ptr<Loaded> g_loaded;
std::vector<core::Document> g_documents;
std::string g_output;
std::string g_diagnostics;

Loaded* loaded() {
  if (g_loaded) {
    return g_loaded.get();
  }
  Diagnostics diags;
  catalog::LoadOptions lo;
  lo.examples = true; // explain's text shows one
  lo.prebuilt = catalog::builtin_catalog_blob();
  auto cat = catalog::load_catalog(lo, diags);
  matcher::MatcherOptions mo;
  mo.prefilter = false;
  mo.extra_patterns = scan::error_line_patterns();
  auto m = matcher::Matcher::compile(cat, mo);
  if (!m) {
    diags.error(m.error());
    g_diagnostics = nlohmann::json::array({m.error().what}).dump();
    return nullptr;
  }
  auto formats = context::FormatSet::load(context::builtin_format_files(), diags);
  g_loaded = std::make_unique<Loaded>(Loaded{std::move(cat), std::move(*m), std::move(formats), diags.items()});
  return g_loaded.get();
}

} // namespace

extern "C" {

// "0.1.0"
EMSCRIPTEN_KEEPALIVE const char* denpex_version() { return DENPEX_VERSION; }

// Forgets the documents added so far.
EMSCRIPTEN_KEEPALIVE void denpex_reset() { g_documents.clear(); }

// Adds one document: `name` as `diagnose` would name the file, `len` bytes
// at `data`, modified at `mtime` seconds since the epoch (< 0: unknown).
EMSCRIPTEN_KEEPALIVE void denpex_add(const char* name, const char* data, int len, double mtime) {
  g_documents.push_back(core::Document{name, std::string(data, static_cast<std::size_t>(len)),
                                       mtime < 0 ? std::nullopt : std::optional<std::int64_t>(mtime)});
}

// The report on the documents added, in `format` (json, text, html, sarif,
// markdown, ...), with `now_year` for stamps without a year when nothing
// else says and `assume_year` as --year (0: infer), `width` columns of text;
// "" when the core could not start (denpex_diagnostics says why). The string
// lives until the next run.
EMSCRIPTEN_KEEPALIVE const char* denpex_run(const char* format, int now_year, int assume_year, int width) {
  auto* l = loaded();
  if (l == nullptr) {
    g_output.clear();
    return g_output.c_str();
  }
  core::Options options;
  options.format = format;
  options.now_year = now_year;
  options.assume_year = assume_year;
  options.width = width > 0 ? static_cast<std::size_t>(width) : 100;
  const core::Engine engine{l->catalog, l->matcher, l->formats, DENPEX_VERSION};
  auto result = core::diagnose(engine, g_documents, options);
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& d : result.diagnostics) {
    problems.push_back(d.error.where.empty() ? d.error.what : d.error.where + ": " + d.error.what);
  }
  g_diagnostics = problems.dump();
  g_output = std::move(result.output);
  return g_output.c_str();
}

// The last run's input problems, as a JSON array of one-line messages.
EMSCRIPTEN_KEEPALIVE const char* denpex_diagnostics() { return g_diagnostics.c_str(); }

} // extern "C"
