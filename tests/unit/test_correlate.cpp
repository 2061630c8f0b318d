// Correlator rules on hand-built hits: no regex, no reader (bloaty's style).
// The lines are real formats (testdata/README.md); only the Hit fields the
// correlator reads are filled in.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>

using denpex::Diagnostics;
using denpex::catalog::Catalog;
using denpex::catalog::CatalogFile;
using denpex::correlate::Hit;
using denpex::correlate::SourceRef;
using nlohmann::json;

namespace {

json entry(const std::string& id, const std::string& role, int priority, std::vector<std::string> explains = {},
           bool generic = false) {
  json j{
      {"id", id},
      {"title", id},
      {"area", "hardware"},
      {"role", role},
      {"severity", "error"},
      {"priority", priority},
      {"signals", json::array({json{{"id", "s"}, {"pattern", "x"}}})},
      {"root_cause", "test"},
      {"fix", json{{"summary", "test"}}},
      {"verify", json{{"summary", "test"}}},
      {"references", json::array({json{{"title", "t"}, {"url", "https://example.invalid/"}}})},
      {"examples", json{{"match", json::array({"x"})}, {"no_match", json::array({"y"})}}},
  };
  if (!explains.empty()) {
    j["explains"] = explains;
  }
  if (generic) {
    j["generic"] = true;
  }
  return j;
}

Catalog make_catalog(const std::vector<json>& entries) {
  Catalog cat;
  Diagnostics diags;
  for (const auto& e : entries) {
    const std::string id = e["id"];
    auto sig = denpex::catalog::parse_signature(CatalogFile{"t/" + id + ".json", e.dump(), false}, diags);
    REQUIRE(sig);
    REQUIRE(cat.add(std::move(*sig), diags));
  }
  cat.finalize(diags);
  REQUIRE(diags.size() == 0);
  return cat;
}

// A hit of entry `id` on `line` of `source`, with a wall-clock stamp
// (year 0 = printed without a year) and optional rank / bus id.
Hit hit(const Catalog& cat, const std::string& id, std::uint32_t source, std::uint64_t line, int year, int month,
        int day, int hour, int minute, std::optional<int> rank = {}, std::string pci = {}) {
  Hit h;
  h.signature = static_cast<std::uint32_t>(*cat.find(id));
  h.source = source;
  h.line_no = line;
  h.last_line_no = line;
  h.text = id;
  h.ctx.time.kind = denpex::context::ClockKind::wall;
  h.ctx.time.wall = denpex::context::WallTime{year, month, day, hour, minute, 0, 0, std::nullopt};
  if (rank) {
    h.ctx.rank = denpex::context::Field<int>{*rank, denpex::context::Origin::prefix};
  }
  if (!pci.empty()) {
    h.ctx.pci = denpex::context::Field<std::string>{pci, denpex::context::Origin::body};
  }
  return h;
}

} // namespace

TEST_CASE("correlate: a cause printed after its symptoms still initiates", "[correlate]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20), entry("t.xid", "cause", 90, {"t.timeout"})});
  std::vector<Hit> hits;
  for (int r = 0; r < 7; ++r) {
    hits.push_back(hit(cat, "t.timeout", 0, 1 + static_cast<std::uint64_t>(r), 2024, 11, 29, 18, 9, r));
  }
  hits.push_back(hit(cat, "t.xid", 1, 5, 2024, 11, 29, 17, 59));
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"rank.log", {}}, SourceRef{"dmesg", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(cat.at(d.incidents[0].signature).id == "t.xid");
  CHECK(d.incidents[0].initiating);
  REQUIRE(d.incidents[0].collateral.size() == 1);
  CHECK(d.incidents[0].collateral[0].count == 7);
  CHECK(d.incidents[0].collateral[0].ranks.size() == 7);
}

TEST_CASE("correlate: year-less stamps across New Year keep their order", "[correlate]") {
  // syslog "Dec 31 23:59:50" then "Jan  1 00:00:10", no year printed; the
  // file is from January 2025: December belongs to 2024.
  const auto cat = make_catalog({entry("t.a", "cause", 70), entry("t.b", "cause", 70)});
  std::vector<Hit> hits{hit(cat, "t.b", 0, 2, 0, 1, 1, 0, 0), hit(cat, "t.a", 0, 1, 0, 12, 31, 23, 59)};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"syslog", 1735689700}}, cat);
  REQUIRE(d.incidents.size() == 2);
  CHECK(cat.at(d.incidents[0].signature).id == "t.a"); // Dec 31 2024 is earlier than Jan 1 2025
  CHECK(d.incidents[0].decision->rule == denpex::correlate::Rule::earliest_by_time);
}

TEST_CASE("correlate: the most specific cause wins its line", "[correlate]") {
  const auto cat = make_catalog({entry("t.generic", "cause", 40), entry("t.specific", "cause", 80)});
  std::vector<Hit> hits{hit(cat, "t.generic", 0, 3, 2024, 11, 29, 17, 59), hit(cat, "t.specific", 0, 3, 2024, 11, 29, 17, 59)};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(cat.at(d.incidents[0].signature).id == "t.specific");
}

TEST_CASE("correlate: one GPU, one incident; a second GPU is a second one", "[correlate]") {
  const auto cat = make_catalog({entry("t.xid79", "cause", 90)});
  std::vector<Hit> hits{hit(cat, "t.xid79", 0, 1, 2024, 11, 29, 17, 59, {}, "0000:3b:00"),
                        hit(cat, "t.xid79", 0, 2, 2024, 11, 29, 17, 59, {}, "0000:3b:00"),
                        hit(cat, "t.xid79", 0, 3, 2024, 11, 29, 18, 31, {}, "0000:86:00")};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"dmesg", {}}}, cat);
  REQUIRE(d.incidents.size() == 2);
  CHECK(d.incidents[0].pci == "0000:3b:00");
  CHECK(d.incidents[0].count == 2);
  CHECK(d.incidents[1].pci == "0000:86:00");
}

TEST_CASE("correlate: a generic wrapper never initiates while a concrete cause exists", "[correlate]") {
  const auto cat = make_catalog({entry("t.wrapper", "cause", 25), entry("t.real", "cause", 75)});
  std::vector<Hit> hits{hit(cat, "t.wrapper", 0, 1, 2024, 11, 29, 17, 50), hit(cat, "t.real", 0, 9, 2024, 11, 29, 17, 59)};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat);
  REQUIRE_FALSE(d.incidents.empty());
  CHECK(cat.at(d.incidents[0].signature).id == "t.real");
  CHECK(d.incidents[0].decision->generic_skipped == 1);
}

TEST_CASE("correlate: a cause training recovered from does not initiate", "[correlate]") {
  const auto cat = make_catalog({entry("t.early", "cause", 80), entry("t.late", "cause", 60)});
  std::vector<Hit> hits{hit(cat, "t.early", 0, 1, 2024, 11, 29, 16, 0), hit(cat, "t.late", 0, 500, 2024, 11, 29, 17, 59)};
  denpex::correlate::ProgressMark mark;
  mark.source = 0;
  mark.line_no = 300;
  mark.time.kind = denpex::context::ClockKind::wall;
  mark.time.wall = denpex::context::WallTime{2024, 11, 29, 17, 30, 0, 0, std::nullopt};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat, {}, {mark});
  REQUIRE(d.incidents.size() == 2);
  CHECK(cat.at(d.incidents[0].signature).id == "t.late");
  CHECK(d.incidents[1].recovered.has_value());
}

TEST_CASE("correlate: symptom-only timeouts name the rank that never reported", "[correlate]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20)});
  std::vector<Hit> hits;
  for (int r : {0, 1, 2, 4, 5, 6, 7}) {
    auto h = hit(cat, "t.timeout", 0, static_cast<std::uint64_t>(r + 1), 2024, 11, 29, 18, 9, r);
    h.captures = {{"seq", "4821"}, {"op", "ALLREDUCE"}, {"nranks", "8"}};
    hits.push_back(h);
  }
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.empty());
  REQUIRE(d.inference);
  CHECK(d.inference->world_size == 8);
  CHECK(d.inference->missing_ranks == std::vector<int>{3});
}
