// The Hyperscan prefilter at run time: the one property that matters, that it
// never drops a pattern RE2 would find (differential against RE2 alone over
// the built-in catalog and testdata/). Its own binary, which exits 77
// (CTest's skip) where Hyperscan cannot run: no libhs in the build, another
// architecture, a CPU without SSSE3. The translation itself is tested in
// tests/unit/test_prefilter_translate.cpp, everywhere.
#define CATCH_CONFIG_RUNNER // main() below: skip where Hyperscan cannot run
#include <catch2/catch.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/matcher/prefilter.hpp>

#include "../support/match_list.hpp"
#include <denpex/scan/scan.hpp>
#include <denpex/selftest/selftest.hpp>
#include <denpex/util/diagnostics.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using denpex::Diagnostics;
using denpex::matcher::hyperscan_expression;
using denpex::matcher::Matcher;
using denpex::matcher::MatcherOptions;
using nlohmann::json;

namespace {

const denpex::catalog::Catalog& builtin() {
  static const denpex::catalog::Catalog cat = [] {
    Diagnostics diags;
    auto c = denpex::catalog::load_catalog({}, diags);
    REQUIRE_FALSE(diags.has_errors());
    return c;
  }();
  return cat;
}

Matcher builtin_matcher(bool prefilter, std::string_view blob = denpex::matcher::builtin_prefilter_blob()) {
  MatcherOptions mo;
  mo.prefilter = prefilter;
  mo.prebuilt_prefilter = blob;
  mo.extra_patterns = denpex::scan::error_line_patterns();
  auto m = Matcher::compile(builtin(), mo);
  REQUIRE(m);
  return std::move(*m);
}

std::vector<int> candidates(const Matcher& m, std::string_view text) {
  denpex::matcher::Candidates out;
  Diagnostics diags;
  m.candidates(text, out, diags);
  CHECK(diags.size() == 0);
  return out.patterns();
}

// Every pattern RE2 finds on a line of `text`, the prefilter must also name
// (a match RE2's set finds across a newline is no match: the matcher accepts
// only matches within one line, and the prefilter need not follow one); and
// the matches found on the lines it names must be RE2's own, hit for hit.
void check_superset(const Matcher& hs, const Matcher& re2, std::string_view text) {
  std::vector<int> want;
  for (std::size_t from = 0; from < text.size();) {
    const auto nl = std::min(text.find('\n', from), text.size());
    for (const int p : candidates(re2, text.substr(from, nl - from))) {
      want.push_back(p);
    }
    from = nl + 1;
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  const auto got = candidates(hs, text);
  for (const int p : want) {
    if (!std::binary_search(got.begin(), got.end(), p)) {
      FAIL_CHECK("prefilter missed pattern " << p << " in: " << text.substr(0, 300));
    }
  }
  Diagnostics diags;
  const auto want_hits = denpex::testing::match_list(re2, text, diags);
  const auto got_hits = denpex::testing::match_list(hs, text, diags);
  if (want_hits != got_hits) {
    FAIL_CHECK("the prefilter's lines gave " << got_hits.size() << " matches, RE2 alone " << want_hits.size()
                                             << ", in: " << text.substr(0, 300));
  }
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST_CASE("prefilter: non-ASCII text between tokens is matched as RE2 matches it", "[prefilter]") {
  Diagnostics diags;
  denpex::catalog::Catalog cat;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"GPU.lost", "GPU€lost"},
      {"fault [^ ]{1,2} here", "fault éé here"},
      {"don[’']t match", "driver version don’t match"},
      {"id=\\S{2}!", "id=日本!"},
  };
  int n = 0;
  for (const auto& [pattern, line] : cases) {
    const std::string id = "t.e" + std::to_string(n++);
    const json entry = {
        {"id", id},
        {"title", "t"},
        {"area", "nccl"},
        {"role", "cause"},
        {"severity", "error"},
        {"signals", json::array({json{{"id", "s"}, {"pattern", pattern}}})},
        {"root_cause", "t"},
        {"fix", json{{"summary", "t"}}},
        {"verify", json{{"summary", "t"}}},
        {"references", json::array({json{{"title", "t"}, {"url", "https://example.invalid/"}}})},
        {"examples", json{{"match", json::array({"x"})}, {"no_match", json::array({"y"})}}},
    };
    auto sig = denpex::catalog::parse_signature({"t/" + id + ".json", entry.dump(), false}, diags);
    REQUIRE(sig);
    REQUIRE(cat.add(std::move(*sig), diags));
  }
  cat.finalize(diags);
  REQUIRE_FALSE(diags.has_errors());
  auto hs = Matcher::compile(cat);
  REQUIRE(hs);
  CHECK_THAT(hs->describe(), Catch::Contains("1 patterns scanned by RE2 alone")); // the class with ’
  // ... and `signatures lint` says so, for that pattern only.
  const auto lint = denpex::selftest::lint(cat, *hs);
  std::size_t slow = 0;
  for (const auto& w : lint.warnings) {
    if (w.what.find("Hyperscan prefilter") != std::string::npos) {
      ++slow;
      CHECK(w.where == "t/t.e2.json: /signals/0/pattern");
    }
  }
  CHECK(slow == 1);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    INFO(cases[k].second);
    const auto got = candidates(*hs, "noise\n" + cases[k].second + "\nmore noise\n");
    CHECK(std::find(got.begin(), got.end(), static_cast<int>(k)) != got.end());
  }
}

TEST_CASE("prefilter: finds every pattern RE2 finds, over the catalog's examples and testdata/", "[prefilter]") {
  const Matcher hs = builtin_matcher(true);
  const Matcher re2 = builtin_matcher(false);
  CHECK_THAT(hs.describe(), Catch::Contains("0 compiled at start-up"));
  CHECK_THAT(hs.describe(), Catch::Contains("0 patterns scanned by RE2 alone"));

  std::size_t lines = 0;
  const auto& cat = builtin();
  for (std::uint32_t s = 0; s < cat.size(); ++s) {
    for (const auto& ex : cat.at(s).match_examples) {
      check_superset(hs, re2, ex.line);
      ++lines;
    }
    for (const auto& ex : cat.at(s).no_match_examples) {
      check_superset(hs, re2, ex);
      ++lines;
    }
  }
  // Every plain-text log under testdata/, in 64 KiB pieces cut at newlines.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(DENPEX_SOURCE_DIR "/testdata")) {
    const auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".log" && ext != ".stdout" && ext != ".txt")) {
      continue;
    }
    const std::string text = read_file(e.path());
    for (std::size_t pos = 0; pos < text.size();) {
      std::size_t end = std::min(text.size(), pos + (64 << 10));
      if (end < text.size()) {
        const auto nl = text.rfind('\n', end);
        end = nl == std::string::npos || nl < pos ? end : nl + 1;
      }
      check_superset(hs, re2, std::string_view(text).substr(pos, end - pos));
      pos = end;
    }
    ++files;
  }
  CHECK(lines > 1000);
  CHECK(files > 20);
}

TEST_CASE("prefilter: the lines it names give RE2's matches, however dense the chunk", "[prefilter]") {
  const Matcher hs = builtin_matcher(true);
  const Matcher re2 = builtin_matcher(false);
  const std::string xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.";
  const std::string init = "node-1:123:456 [0] NCCL INFO comm 0x5581 rank 3 nRanks 16 nNodes 2 localRanks 8 "
                           "localRank 3 MNNVL 0 - Init COMPLETE";
  SECTION("a few lines: each is named, nothing is searched over the whole chunk") {
    const std::string text = "noise\n" + xid + "\n\n" + init + "\r\n" + xid + " " + xid + "\nlast, unterminated " + xid;
    denpex::matcher::Candidates c;
    Diagnostics diags;
    hs.candidates(text, c, diags);
    CHECK_FALSE(c.lines.empty());
    for (const int p : c.whole) {
      CHECK(static_cast<std::size_t>(p) >= hs.extra_base()); // only the sampler's patterns
    }
    check_superset(hs, re2, text);
  }
  SECTION("a pattern on more lines than one chunk should confirm one by one is searched over the chunk") {
    std::string text;
    for (int k = 0; k < 3000; ++k) {
      text += (k % 3 == 0 ? xid : init) + "\n" + "step " + std::to_string(k) + " loss 1.0\n";
    }
    denpex::matcher::Candidates c;
    Diagnostics diags;
    hs.candidates(text, c, diags);
    CHECK(std::any_of(c.whole.begin(), c.whole.end(),
                      [&](int p) { return static_cast<std::size_t>(p) < hs.extra_base(); }));
    check_superset(hs, re2, text);
    CHECK(denpex::testing::match_list(hs, text, diags).size() >= 3000);
  }
}

TEST_CASE("prefilter: mangled example lines (multi-byte text, case, cut) stay a superset", "[prefilter]") {
  const Matcher hs = builtin_matcher(true);
  const Matcher re2 = builtin_matcher(false);
  const auto& cat = builtin();
  std::mt19937 rng(8); // deterministic
  const std::vector<std::string> inserts = {"é", "€", "日本", "\xf0\x9f\x94\xa5", "\xff", "\x80\x80", " ", "\t", "\v", "\r",
                                            "\n", "0", "x"};
  std::size_t checked = 0;
  for (std::uint32_t s = 0; s < cat.size(); ++s) {
    for (const auto& ex : cat.at(s).match_examples) {
      for (int round = 0; round < 4; ++round) {
        std::string line = ex.line;
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < edits && !line.empty(); ++k) {
          const std::size_t at = rng() % line.size();
          switch (rng() % 3) {
          case 0: line.insert(at, inserts[rng() % inserts.size()]); break;
          case 1: line.replace(at, 1, inserts[rng() % inserts.size()]); break;
          default: line.erase(at, 1); break;
          }
        }
        check_superset(hs, re2, line);
        ++checked;
      }
    }
  }
  CHECK(checked > 2000);
}

TEST_CASE("prefilter: a blob that does not load is compiled instead, with the same answers", "[prefilter]") {
  const auto blob = denpex::matcher::builtin_prefilter_blob();
  REQUIRE(blob.size() > 1000);
  const std::string cut(blob.substr(0, blob.size() / 2)); // truncated: rejected whole
  const Matcher hs = builtin_matcher(true, cut);
  CHECK_THAT(hs.describe(), Catch::Contains("0 prebuilt"));
  const Matcher re2 = builtin_matcher(false);
  CHECK_THAT(re2.describe(), Catch::Contains("no prefilter"));
  const std::string text = "x\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\nsome line\n"
                           "[rank3]: RuntimeError: NCCL error in: x.cpp:1, unhandled cuda error\n";
  const auto want = candidates(re2, text);
  CHECK_FALSE(want.empty());
  CHECK(candidates(hs, text) == want);
}

TEST_CASE("prefilter: build_prefilter_blob round-trips through a matcher", "[prefilter]") {
  // A blob with the first 20 expressions only: the rest is compiled at start-up.
  const auto& cat = builtin();
  std::vector<std::string> some;
  for (std::uint32_t s = 0; s < cat.size() && some.size() < 20; ++s) {
    for (const auto& sig : cat.at(s).signals) {
      if (auto e = denpex::matcher::prefilter_expression(sig.pattern, sig.presence)) {
        some.push_back(*e);
      }
    }
  }
  const auto blob = denpex::matcher::build_prefilter_blob(some);
  REQUIRE(blob);
  const Matcher hs = builtin_matcher(true, *blob);
  CHECK_THAT(hs.describe(), Catch::Contains(std::to_string(some.size()) + " prebuilt"));
  CHECK_THAT(hs.describe(), Catch::Contains("compiled at start-up"));
  const Matcher re2 = builtin_matcher(false);
  for (std::uint32_t s = 0; s < cat.size(); ++s) {
    for (const auto& ex : cat.at(s).match_examples) {
      check_superset(hs, re2, ex.line);
    }
  }
}

#include <cstdio>

int main(int argc, char** argv) {
  if (!denpex::matcher::prefilter_available()) {
    std::puts("skipped: Hyperscan is not available in this build or on this CPU (RE2 alone runs; nothing to compare)");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}

TEST_CASE("prefilter: presence signals have a database of their own, skipped once a source has them", "[prefilter]") {
  if (!denpex::matcher::prefilter_available()) {
    return;
  }
  const Matcher hs = builtin_matcher(true);
  REQUIRE(hs.presence_patterns() >= 1);
  const auto& cat = builtin();
  const auto megatron = cat.find("stack.megatron");
  REQUIRE(megatron);
  // A Megatron-LM iteration line (the format of megatron/training/training.py's training_log).
  const std::string text =
      " [2024-11-29 18:10:00] iteration      120/  500000 | consumed samples:       122880 | elapsed time per "
      "iteration (ms): 1195.3 | learning rate: 3.000000E-04 | global batch size:  1024 | lm loss: 2.790000E+00 | "
      "loss scale: 1.0 | grad norm: 1.088 | number of skipped iterations:   0 | number of nan iterations:   0 |\n";
  auto named = [&](bool presence) {
    denpex::matcher::Candidates out;
    Diagnostics diags;
    hs.candidates(text, out, diags, nullptr, presence);
    for (const auto& l : out.lines) {
      if (l.pattern < hs.extra_base() && hs.pattern_count() > 0) {
        // pattern index -> entry: the matcher numbers patterns entry by entry, signal by signal
        std::uint32_t k = 0;
        for (std::uint32_t s = 0; s < cat.size(); ++s) {
          for (std::size_t g = 0; g < cat.entries()[s].signals.size(); ++g, ++k) {
            if (k == l.pattern && s == *megatron) {
              return true;
            }
          }
        }
      }
    }
    return false;
  };
  CHECK(named(true));
  CHECK_FALSE(named(false));
}
