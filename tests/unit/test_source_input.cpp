// Unit tests for the in-memory InputOpener (the test seam of source/input.hpp).
// Compressed and archived inputs are covered by other suites.
#include <catch2/catch.hpp>

#include <denpex/source/input.hpp>
#include <denpex/source/line_reader.hpp>
#include <denpex/util/diagnostics.hpp>

#include <string>
#include <vector>

using denpex::Diagnostics;
using denpex::ErrorKind;
using denpex::source::ByteStream;
using denpex::source::LineReader;
using denpex::source::make_memory_opener;
using denpex::source::SourceInfo;

namespace {

// Real lines: NVRM Xid 79 (NVIDIA/open-gpu-kernel-modules#1151, via
// signatures/driver/driver.nvrm.gpu-lost.json) and an NCCL INFO line
// (facebookresearch/deit#28).
const std::string k_dmesg = "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.\n";
const std::string k_rank0 = "gpu-dev006:25486:25486 [0] NCCL INFO Using network IB\n";

struct Visit {
  std::string name;
  std::string path;
  std::string text;
};

std::vector<Visit> read_unit(denpex::source::InputOpener& opener, const denpex::source::InputUnit& unit,
                             Diagnostics& diags) {
  std::vector<Visit> visits;
  opener.read(unit, diags, [&](SourceInfo& info, ByteStream& stream) {
    Visit v{info.name, info.path, {}};
    LineReader reader(stream, info.name);
    for (;;) {
      auto chunk = reader.next();
      REQUIRE(chunk);
      if (!chunk->has_value()) {
        break;
      }
      v.text.append((*chunk)->text);
    }
    visits.push_back(std::move(v));
    return true;
  });
  return visits;
}

} // namespace

TEST_CASE("source::make_memory_opener: plain text is visited once under its name", "[source]") {
  auto opener = make_memory_opener({{"node-017/dmesg", k_dmesg}, {"rank_0.log", k_rank0}});
  Diagnostics diags;
  auto units = opener->expand({"rank_0.log", "node-017/dmesg"}, diags);
  CHECK(diags.size() == 0);
  REQUIRE(units.size() == 2);
  CHECK(units[0].path == "rank_0.log"); // in the order given
  CHECK(units[1].path == "node-017/dmesg");
  CHECK_FALSE(units[0].from_walk);

  auto visits = read_unit(*opener, units[1], diags);
  CHECK(diags.size() == 0);
  REQUIRE(visits.size() == 1);
  CHECK(visits[0].name == "node-017/dmesg");
  CHECK(visits[0].path == "node-017/dmesg");
  CHECK(visits[0].text == k_dmesg);

  visits = read_unit(*opener, units[0], diags);
  REQUIRE(visits.size() == 1);
  CHECK(visits[0].name == "rank_0.log");
  CHECK(visits[0].text == k_rank0);
}

TEST_CASE("source::make_memory_opener: an unknown name is a one-line error", "[source]") {
  auto opener = make_memory_opener({{"rank_0.log", k_rank0}});
  Diagnostics diags;
  auto units = opener->expand({"missing.log", "rank_0.log"}, diags);
  REQUIRE(units.size() == 1);
  CHECK(units[0].path == "rank_0.log");
  auto items = diags.items();
  REQUIRE(items.size() == 1);
  CHECK(items[0].level == denpex::Level::error);
  CHECK(items[0].error.kind == ErrorKind::io);
  const auto text = denpex::format_diagnostic(items[0]);
  CHECK(text == "denpex: error: missing.log: No such file or directory");
  CHECK(text.find('\n') == std::string::npos);
}

TEST_CASE("source::make_memory_opener: empty content is visited with an empty stream", "[source]") {
  auto opener = make_memory_opener({{"empty.log", ""}});
  Diagnostics diags;
  auto units = opener->expand({"empty.log"}, diags);
  REQUIRE(units.size() == 1);
  auto visits = read_unit(*opener, units[0], diags);
  CHECK(diags.size() == 0);
  REQUIRE(visits.size() == 1);
  CHECK(visits[0].text.empty());
}

TEST_CASE("source::make_memory_opener: text with NULs is read, not skipped, when named", "[source]") {
  // A crash-truncated log: real text followed by zero blocks. Named inputs are
  // read to the end (style guide: "convert, never quit").
  std::string content = k_dmesg;
  content.append(8, '\0');
  auto opener = make_memory_opener({{"dmesg", content}});
  Diagnostics diags;
  auto units = opener->expand({"dmesg"}, diags);
  REQUIRE(units.size() == 1);
  auto visits = read_unit(*opener, units[0], diags);
  CHECK(diags.size() == 0);
  REQUIRE(visits.size() == 1);
  CHECK(visits[0].text == k_dmesg + std::string(8, '\n'));
}

TEST_CASE("source::make_memory_opener: visitor returning false stops the unit", "[source]") {
  auto opener = make_memory_opener({{"a.log", k_rank0}});
  Diagnostics diags;
  auto units = opener->expand({"a.log"}, diags);
  REQUIRE(units.size() == 1);
  int calls = 0;
  opener->read(units[0], diags, [&](SourceInfo&, ByteStream&) {
    ++calls;
    return false;
  });
  CHECK(calls == 1);
  CHECK(diags.size() == 0);
}

TEST_CASE("directory walks skip what is not a log, and --include/--exclude change it", "[source][walk]") {
  using denpex::source::walk_skip_reason;
  denpex::source::InputOptions o;
  CHECK(walk_skip_reason("node-dump/make_fixture.py", false, o));
  CHECK(walk_skip_reason(".git", true, o));
  CHECK(walk_skip_reason("run/__pycache__", true, o));
  CHECK(walk_skip_reason("model/weights.safetensors", false, o));
  CHECK_FALSE(walk_skip_reason("rank_3.log", false, o));
  CHECK_FALSE(walk_skip_reason("slurm-1234.out", false, o));
  CHECK_FALSE(walk_skip_reason("torchelastic/attempt_0/3/error.json", false, o));
  CHECK_FALSE(walk_skip_reason("logs", true, o));
  o.include = {"*.sh"};
  o.exclude = {"checkpoints", "*.csv"};
  CHECK_FALSE(walk_skip_reason("job/run.sh", false, o));
  CHECK(walk_skip_reason("checkpoints", true, o));
  CHECK(*walk_skip_reason("metrics/loss.csv", false, o) == "excluded by --exclude");
}

#include <denpex/util/strings.hpp>

TEST_CASE("edit_distance: the nearest subcommand to a misspelling", "[util]") {
  CHECK(denpex::util::edit_distance("diagnos", "diagnose") == 1);
  CHECK(denpex::util::edit_distance("gerp", "grep") == 2);
  CHECK(denpex::util::edit_distance("", "abc") == 3);
  CHECK(denpex::util::edit_distance("same", "same") == 0);
}
