// libFuzzer target: one signature file through the catalog loader (issue 9).
//
// parse_signature must report every problem to Diagnostics and never throw or
// crash. When the entry is accepted, it is added to a catalog, finalized,
// compiled into a Matcher and its own examples are run through it, as
// `denpex signatures test` does. The same catalog is also compiled without
// the Hyperscan prefilter: on every example line, each pattern RE2 alone
// finds must also be one the prefilter names (its translation of the
// pattern is a superset, whatever the pattern is), and the matches found
// through the lines it names must be RE2's own, hit for hit.
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/util/diagnostics.hpp>

#include "../support/match_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex;
  catalog::CatalogFile file{"signatures/fuzz/fuzz.json", std::string(reinterpret_cast<const char*>(data), size), false};
  Diagnostics diags;
  auto sig = catalog::parse_signature(file, diags);
  for (const auto& d : diags.items()) {
    (void)format_diagnostic(d);
  }
  if (!sig) {
    return 0;
  }
  catalog::Catalog cat;
  if (!cat.add(std::move(*sig), diags)) {
    return 0;
  }
  cat.finalize(diags);
  if (cat.size() == 0) {
    return 0;
  }
  auto m = matcher::Matcher::compile(cat);
  if (!m) {
    return 0;
  }
  matcher::MatcherOptions re2_only;
  re2_only.prefilter = false;
  auto r = matcher::Matcher::compile(cat, re2_only);
  const auto& entry = cat.at(0);
  auto superset = [&](const std::string& line) {
    matcher::Candidates c;
    r->candidates(line, c, diags);
    const auto want = c.patterns();
    m->candidates(line, c, diags);
    const auto got = c.patterns();
    for (const int p : want) {
      if (!std::binary_search(got.begin(), got.end(), p)) {
        std::abort(); // the prefilter dropped a pattern RE2 finds
      }
    }
    if (testing::match_list(*r, line, diags) != testing::match_list(*m, line, diags)) {
      std::abort(); // the prefilter's lines lost or changed a match
    }
  };
  if (r) {
    for (const auto& ex : entry.match_examples) {
      superset(ex.line);
    }
    for (const auto& line : entry.no_match_examples) {
      superset(line);
    }
  }
  for (const auto& ex : entry.match_examples) {
    m->match_entry_line(0, ex.line, [](std::uint32_t, const std::vector<matcher::Capture>&) {});
  }
  for (const auto& line : entry.no_match_examples) {
    m->match_entry_line(0, line, [](std::uint32_t, const std::vector<matcher::Capture>&) {});
  }
  return 0;
}
