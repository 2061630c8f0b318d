// Line formats as data (context/formats.hpp): the built-in files' samples
// run through the hand-written scanners they describe, and a team's own
// format fills the fields the scanners leave empty.
#include <catch2/catch.hpp>

#include <denpex/context/formats.hpp>

using denpex::Diagnostics;
using denpex::context::FormatFile;
using denpex::context::FormatSet;

TEST_CASE("formats: every built-in sample gives its fields through the scanner it describes", "[context][formats]") {
  Diagnostics diags;
  const auto files = denpex::context::builtin_format_files();
  REQUIRE(files.size() >= 10);
  const auto set = FormatSet::load(files, diags, /*check_builtin=*/true);
  for (const auto& d : diags.items()) {
    FAIL_CHECK(denpex::format_diagnostic(d));
  }
  CHECK(set.formats().size() == files.size());
  CHECK_FALSE(set.has_data_formats());
}

TEST_CASE("formats: a team's prefix fills rank, host and time", "[context][formats]") {
  const std::string text = R"({
    "id": "acme-launcher",
    "description": "acme's launcher: <<host/rank>> HH:MM:SS",
    "pattern": "^<<(?P<host>[\\w.-]+)/(?P<rank>\\d+)>> (?P<hour>\\d{2}):(?P<minute>\\d{2}):(?P<second>\\d{2}) ",
    "samples": [{"line": "<<gpu-07/12>> 17:59:58 RuntimeError: boom", "fields": {"host": "gpu-07", "rank": "12", "hour": "17"}}]
  })";
  Diagnostics diags;
  const auto set = FormatSet::load({FormatFile{"acme.json", text}}, diags);
  REQUIRE(diags.size() == 0);
  REQUIRE(set.has_data_formats());
  auto ctx = denpex::context::parse_line("<<gpu-07/12>> 17:59:58 RuntimeError: boom");
  CHECK_FALSE(ctx.rank);
  set.apply("<<gpu-07/12>> 17:59:58 RuntimeError: boom", ctx);
  REQUIRE(ctx.rank);
  CHECK(ctx.rank->value == 12);
  REQUIRE(ctx.host);
  CHECK(ctx.host->value == "gpu-07");
  CHECK(ctx.time.kind == denpex::context::ClockKind::wall);
  CHECK(ctx.time.wall.hour == 17);
}

TEST_CASE("formats: bad files are reported with the file and the field, and left out", "[context][formats]") {
  Diagnostics diags;
  const auto set = FormatSet::load(
      {FormatFile{"a.json", R"json({"id": "a", "pattern": "(?P<nodename>x)", "samples": [{"line": "x", "fields": {}}]})json"},
       FormatFile{"b.json", R"json({"id": "b", "pattern": "^r(?P<rank>\\d)", "samples": [{"line": "r3", "fields": {"rank": "4"}}]})json"},
       FormatFile{"c.json", "{"}},
      diags);
  CHECK(set.formats().empty());
  REQUIRE(diags.size() == 3);
  const auto items = diags.items();
  CHECK(denpex::format_diagnostic(items[0]).find("a.json: /pattern") != std::string::npos);
  CHECK(denpex::format_diagnostic(items[1]).find("expected '4', got '3'") != std::string::npos);
  CHECK(denpex::format_diagnostic(items[2]).find("c.json") != std::string::npos);
}

TEST_CASE("formats: each kind of bad key or sample names its place in the file", "[context][formats]") {
  const std::pair<std::string, std::string> cases[] = {
      {R"json({"id": "d", "pattern": "x", "colour": "red", "samples": [{"line": "x", "fields": {}}]})json",
       "d.json: /colour"},
      {R"json({"id": "d", "pattern": "x", "samples": ["x"]})json", "d.json: /samples/0"},
      {R"json({"id": "d", "pattern": "x", "samples": [{"line": "x", "fields": {"nodename": "a"}}]})json",
       "d.json: /samples/0/fields/nodename"},
      {R"json({"id": "d", "pattern": "^x", "samples": [{"line": "y", "fields": {}}]})json",
       "the pattern does not match: y"},
      {R"json({"id": "d", "pattern": "x", "samples": []})json", "at least one sample"},
      {R"json({"id": "d", "pattern": "(x", "samples": [{"line": "x", "fields": {}}]})json", "invalid regex"},
      {"[1]", "expected an object"},
  };
  for (const auto& [text, want] : cases) {
    Diagnostics diags;
    const auto set = FormatSet::load({FormatFile{"d.json", text}}, diags);
    INFO(text);
    CHECK(set.formats().empty());
    REQUIRE(diags.size() >= 1);
    CHECK(denpex::format_diagnostic(diags.items()[0]).find(want) != std::string::npos);
  }
}
