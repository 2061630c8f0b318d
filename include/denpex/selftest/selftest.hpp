// denpex::selftest — runs every entry's examples through the production
// matcher (`denpex signatures test`), and lints the catalog as a whole
// (`denpex signatures lint`).
#pragma once

#include <string>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/matcher/matcher.hpp>

namespace denpex::selftest {

struct Failure {
  std::string where; // file + JSON Pointer of the example
  std::string what;
};

struct Report {
  std::size_t entries = 0;
  std::size_t examples = 0;
  std::vector<Failure> failures;
  std::vector<Failure> warnings;
};

// Checks, for each entry (or only those whose id is in `only`, if non-empty):
// every match example is hit by its own entry alone and inside a chunk, by
// the signal it names, with the captures it names; no no_match example is hit
// by its own entry; every signal has at least one example.
Report test_examples(const catalog::Catalog& cat, const matcher::Matcher& m, const std::vector<std::string>& only = {});

// Catalog-wide checks (ids and patterns are already checked at load). Errors
// (`failures`): a match example of one cause also hit by another cause of the
// same priority (the correlator cannot order them); a built-in pattern the
// Hyperscan prefilter cannot take. A team's own unprefilterable pattern is a
// warning (it works, slowly). An entry without near-misses never loads.
Report lint(const catalog::Catalog& cat, const matcher::Matcher& m);

} // namespace denpex::selftest
