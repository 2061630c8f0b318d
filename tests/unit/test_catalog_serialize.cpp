// The built-in catalog's binary form (catalog/serialize.hpp): what start-up
// reads instead of the JSON must be exactly what the JSON loads to.
#include <catch2/catch.hpp>

#include <string>

#include <denpex/catalog/catalog.hpp>
#include <denpex/catalog/serialize.hpp>
#include <denpex/util/diagnostics.hpp>

using denpex::Diagnostics;
namespace catalog = denpex::catalog;

namespace {

catalog::Catalog from_json() {
  Diagnostics diags;
  auto cat = catalog::load_catalog({}, diags);
  REQUIRE_FALSE(diags.has_errors());
  return cat;
}

} // namespace

TEST_CASE("catalog blob: the embedded blob is the JSON catalog, field for field", "[catalog][serialize]") {
  const auto cat = from_json();
  // serialize() writes every field, so equal bytes mean equal entries.
  CHECK(catalog::serialize(cat.entries()) == std::string(catalog::builtin_catalog_blob()));
}

TEST_CASE("catalog blob: round trip, and loading from it gives the same catalog", "[catalog][serialize]") {
  const auto cat = from_json();
  const auto blob = catalog::serialize(cat.entries());
  const auto back = catalog::deserialize(blob);
  REQUIRE(back);
  CHECK(catalog::serialize(*back) == blob);

  Diagnostics diags;
  catalog::LoadOptions lo;
  lo.prebuilt = blob;
  const auto loaded = catalog::load_catalog(lo, diags);
  CHECK_FALSE(diags.has_errors());
  REQUIRE(loaded.size() == cat.size());
  CHECK(catalog::serialize(loaded.entries()) == blob);
  // Relations are rebuilt from the ids: the same explains index.
  for (std::size_t i = 0; i < cat.size(); ++i) {
    for (const auto& e : cat.at(i).explains) {
      CHECK(loaded.explains(i, *loaded.find(e)));
    }
  }
}

TEST_CASE("catalog blob: without examples, the rest is unchanged", "[catalog][serialize]") {
  const auto cat = from_json();
  const auto blob = catalog::serialize(cat.entries());
  const auto lean = catalog::deserialize(blob, false);
  REQUIRE(lean);
  REQUIRE(lean->size() == cat.size());
  for (std::size_t i = 0; i < cat.size(); ++i) {
    CHECK(lean->at(i).match_examples.empty());
    CHECK(lean->at(i).no_match_examples.empty());
    CHECK(lean->at(i).id == cat.at(i).id);
    CHECK(lean->at(i).signals.size() == cat.at(i).signals.size());
    CHECK(lean->at(i).fix.summary == cat.at(i).fix.summary);
  }
}

TEST_CASE("catalog blob: a damaged or foreign blob is refused, never misread", "[catalog][serialize]") {
  const auto blob = catalog::serialize(from_json().entries());
  CHECK_FALSE(catalog::deserialize(""));
  CHECK_FALSE(catalog::deserialize("{\"id\": \"x\"}"));
  // Every cut is refused (the reader checks each length against what is left).
  for (std::size_t cut = 0; cut < blob.size(); cut += 997) {
    CHECK_FALSE(catalog::deserialize(std::string_view(blob).substr(0, cut)));
  }
  CHECK_FALSE(catalog::deserialize(blob + "x")); // trailing bytes
  auto other_version = blob;
  other_version[15] = static_cast<char>(other_version[15] + 1);
  CHECK_FALSE(catalog::deserialize(other_version));
  // A flipped byte may still read (a string's content), but never crashes.
  for (std::size_t at = 20; at < blob.size(); at += 1499) {
    auto flipped = blob;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5a);
    (void)catalog::deserialize(flipped);
  }
}

TEST_CASE("catalog blob: a bad blob falls back to the JSON", "[catalog][serialize]") {
  Diagnostics diags;
  catalog::LoadOptions lo;
  lo.prebuilt = "not a catalog";
  const auto cat = catalog::load_catalog(lo, diags);
  CHECK_FALSE(diags.has_errors());
  CHECK(cat.size() == from_json().size());
}
