// Tests for a signal's `when` (src/catalog/condition.cpp): parsing, sizes
// with units, and what a missing or non-numeric capture does. See: #32.
#include <catch2/catch.hpp>

#include <denpex/catalog/condition.hpp>

using denpex::catalog::Condition;

namespace {

bool holds(const char* when, std::vector<std::pair<std::string_view, std::string_view>> captures) {
  auto c = Condition::parse(when);
  REQUIRE(c.has_value());
  return c->holds(captures);
}

} // namespace

TEST_CASE("catalog::Condition::value_of: sizes in bytes, plain numbers", "[catalog][condition]") {
  CHECK(Condition::value_of("2.00 GiB") == Approx(2.0 * 1073741824));
  CHECK(Condition::value_of("40.75 MiB") == Approx(40.75 * 1048576));
  CHECK(Condition::value_of("0 bytes") == Approx(0));
  CHECK(Condition::value_of("1.5 GB") == Approx(1.5e9));
  CHECK(Condition::value_of("7") == Approx(7));
  CHECK_FALSE(Condition::value_of("").has_value());
  CHECK_FALSE(Condition::value_of("GiB").has_value());
  CHECK_FALSE(Condition::value_of("2 parsecs").has_value());
  CHECK_FALSE(Condition::value_of(".").has_value());
}

TEST_CASE("catalog::Condition: the memory others hold, from a real OOM message's figures", "[catalog][condition]") {
  const char* when = "total - free - self > self and total - free - self > 2 GiB";
  // 44.42 GiB, 24.69 MiB free, this process 802 MiB: others hold ~43 GiB.
  CHECK(holds(when, {{"total", "44.42 GiB"}, {"free", "24.69 MiB"}, {"self", "802.00 MiB"}}));
  // 11.66 GiB, 9.81 MiB free, this process 9.74 GiB: others ~1.9 GiB.
  CHECK_FALSE(holds(when, {{"total", "11.66 GiB"}, {"free", "9.81 MiB"}, {"self", "9.74 GiB"}}));
  // A capture that did not take part, or is not a number: false.
  CHECK_FALSE(holds(when, {{"total", "44.42 GiB"}, {"free", "24.69 MiB"}}));
  CHECK_FALSE(holds(when, {{"total", "44.42 GiB"}, {"free", "lots"}, {"self", "802.00 MiB"}}));
  CHECK(holds("a * 2 >= b + 1", {{"a", "3"}, {"b", "5"}}));
  CHECK_FALSE(holds("a * 2 > b + 1", {{"a", "3"}, {"b", "5"}}));
  CHECK(holds("a < 1 KiB", {{"a", "1000 B"}}));
}

TEST_CASE("catalog::Condition::parse: errors say where", "[catalog][condition]") {
  for (const char* bad : {"", "a >", "a = b", "a > b or c > d", "> b", "a > b and"}) {
    DYNAMIC_SECTION(bad) {
      const auto c = Condition::parse(bad);
      REQUIRE_FALSE(c.has_value());
      CHECK(c.error().what.find("at offset") != std::string::npos);
    }
  }
  const auto c = Condition::parse("total - free > self");
  REQUIRE(c.has_value());
  CHECK(c->names() == std::vector<std::string>{"total", "free", "self"});
}
