// libFuzzer target: the whole diagnose pipeline on a byte buffer (issue 9).
//
// memory opener -> scan::run (logs, and findings records) -> correlate -> print_text and print_json into a
// std::ostringstream, with the built-in catalog. The input may hold several
// files separated by a line "--8<--"; they get names that the path parser
// reads (rank_N.log, node-N/dmesg) so that multi-source correlation runs too.
//
// Invariants checked on every input (a failure aborts, so libFuzzer keeps it):
//  - the text report (colour off) holds no ESC byte: log bytes are escaped;
//  - the JSON report parses as JSON;
//  - with the Hyperscan prefilter naming the lines, each file's matches are
//    the ones RE2 alone finds, hit for hit.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/matcher/prefilter.hpp>
#include <denpex/report/report.hpp>
#include <denpex/scan/scan.hpp>
#include <denpex/source/input.hpp>
#include <denpex/util/diagnostics.hpp>

#include "../support/match_list.hpp"

namespace {

using namespace denpex;

struct Fixture {
  catalog::Catalog cat;
  std::unique_ptr<matcher::Matcher> matcher;
  std::unique_ptr<matcher::Matcher> re2_only;

  Fixture() {
    Diagnostics diags;
    cat = catalog::load_catalog({}, diags);
    matcher::MatcherOptions mo;
    mo.prebuilt_prefilter = matcher::builtin_prefilter_blob();
    mo.extra_patterns = scan::error_line_patterns();
    auto m = matcher::Matcher::compile(cat, mo);
    mo.prefilter = false;
    auto r = matcher::Matcher::compile(cat, mo);
    if (!m || !r || diags.has_errors()) {
      std::abort(); // the built-in catalog must load
    }
    matcher = std::make_unique<matcher::Matcher>(std::move(*m));
    re2_only = std::make_unique<matcher::Matcher>(std::move(*r));
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

void check(bool cond) {
  if (!cond) {
    std::abort();
  }
}

std::vector<std::pair<std::string, std::string>> split_files(std::string_view input) {
  static const char* const k_names[] = {"rank_0.log", "node-017/dmesg", "logs/rank3.err", "train.log"};
  constexpr std::string_view k_sep = "\n--8<--\n";
  std::vector<std::pair<std::string, std::string>> files;
  for (std::size_t i = 0;; ++i) {
    const auto cut = input.find(k_sep);
    std::string name = i < 4 ? k_names[i] : "extra_" + std::to_string(i) + ".log";
    files.emplace_back(std::move(name), std::string(input.substr(0, cut)));
    if (cut == std::string_view::npos || files.size() == 8) {
      break;
    }
    input.remove_prefix(cut + k_sep.size());
  }
  return files;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& fx = fixture();
  auto files = split_files(std::string_view(reinterpret_cast<const char*>(data), size));
  std::vector<std::string> paths;
  for (const auto& f : files) {
    paths.push_back(f.first);
    Diagnostics d;
    check(testing::match_list(*fx.re2_only, f.second, d) == testing::match_list(*fx.matcher, f.second, d));
  }
  auto opener = source::make_memory_opener(std::move(files));

  Diagnostics diags;
  scan::ScanOptions so;
  so.jobs = 1;
  // Small buffers so that chunk boundaries and long-line cutting are reached
  // with small inputs.
  so.reader.buffer_size = 4096;
  so.reader.max_line = 512;
  // A file that starts like denpex's findings is read as findings (as the
  // CLI does), so the findings reader is fuzzed too (issue 36).
  so.findings_catalog = &fx.cat;
  auto result = scan::run(*opener, paths, *fx.matcher, so, diags);

  report::RunInfo run{"fuzz", result.totals.bytes, result.totals.lines, result.totals.sources,
                      result.totals.long_lines_cut, diags.items()};
  correlate::CorrelateOptions co;
  co.now_year = 2026;
  auto diagnosis = correlate::correlate(std::move(result.hits), std::move(result.sources), fx.cat, co);

  std::ostringstream text;
  report::TextOptions to;
  to.color = false;
  report::print_text(text, diagnosis, fx.cat, run, to);
  check(text.str().find('\x1b') == std::string::npos);

  std::ostringstream json;
  report::print_json(json, diagnosis, fx.cat, run);
  check(nlohmann::json::accept(json.str()));

  for (const auto& inc : diagnosis.incidents) {
    (void)report::location(diagnosis, inc.first);
    (void)report::format_time(inc.first);
  }
  return 0;
}
