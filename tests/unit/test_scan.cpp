// scan::run end to end on one big source: the result must not depend on -j
// (one file on several cores is matched in double-buffered batches).
#include <catch2/catch.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/matcher/prefilter.hpp>
#include <denpex/scan/scan.hpp>
#include <denpex/source/input.hpp>
#include <denpex/util/diagnostics.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace denpex;

TEST_CASE("scan::run: one big file gives the same hits, samples and totals at -j1 and -j3", "[scan]") {
  Diagnostics diags;
  const auto cat = catalog::load_catalog({}, diags);
  matcher::MatcherOptions mo;
  mo.prebuilt_prefilter = matcher::builtin_prefilter_blob();
  mo.extra_patterns = scan::error_line_patterns();
  auto m = matcher::Matcher::compile(cat, mo);
  REQUIRE(m);

  // The bundled 8-rank sample, 40 times over: many 4 KiB chunks, hits spread
  // through batches, the failure cascade at the end of each copy.
  std::ifstream in(DENPEX_SOURCE_DIR "/testdata/sample/train.log", std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text;
  for (int i = 0; i < 40; ++i) {
    text += ss.str();
  }
  REQUIRE(text.size() > 40 * 4096);

  auto run = [&](unsigned jobs) {
    auto opener = source::make_memory_opener({{"train.log", text}});
    scan::ScanOptions so;
    so.jobs = jobs;
    so.reader.buffer_size = 4096;
    Diagnostics d;
    auto r = scan::run(*opener, {"train.log"}, *m, so, d);
    CHECK(d.size() == 0);
    return r;
  };
  const auto one = run(1);
  const auto three = run(3);
  REQUIRE(one.hits.size() > 10);
  REQUIRE(three.hits.size() == one.hits.size());
  for (std::size_t k = 0; k < one.hits.size(); ++k) {
    const auto& a = one.hits[k];
    const auto& b = three.hits[k];
    CHECK(std::tie(a.signature, a.signal, a.line_no, a.count, a.last_line_no) ==
          std::tie(b.signature, b.signal, b.line_no, b.count, b.last_line_no));
  }
  REQUIRE(three.error_lines.size() == one.error_lines.size());
  for (std::size_t k = 0; k < one.error_lines.size(); ++k) {
    CHECK(three.error_lines[k].line_no == one.error_lines[k].line_no);
  }
  CHECK(three.totals.lines == one.totals.lines);
  CHECK(three.totals.bytes == text.size());
  CHECK(three.progress.size() == one.progress.size());
}
