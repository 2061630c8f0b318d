// Correlator rules on hand-built hits: no regex, no reader (bloaty's style).
// The lines are real formats (testdata/README.md); only the Hit fields the
// correlator reads are filled in.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>
#include <denpex/correlate/describe.hpp>

using denpex::Diagnostics;
using denpex::catalog::Catalog;
using denpex::catalog::CatalogFile;
using denpex::scan::Hit;
using denpex::scan::SourceRef;
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

TEST_CASE("correlate: one GPU, one incident, a second GPU is a second one", "[correlate]") {
  const auto cat = make_catalog({entry("t.xid79", "cause", 90)});
  std::vector<Hit> hits{hit(cat, "t.xid79", 0, 1, 2024, 11, 29, 17, 59, {}, "0000:3b:00"),
                        hit(cat, "t.xid79", 0, 2, 2024, 11, 29, 17, 59, {}, "0000:3b:00"),
                        hit(cat, "t.xid79", 0, 3, 2024, 11, 29, 18, 21, {}, "0000:86:00")};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"dmesg", {}}}, cat);
  REQUIRE(d.incidents.size() == 2);
  REQUIRE(d.episodes.size() == 1); // 22 minutes apart: one episode
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
  denpex::scan::ProgressMark mark;
  mark.source = 0;
  mark.line_no = 300;
  mark.time.kind = denpex::context::ClockKind::wall;
  mark.time.wall = denpex::context::WallTime{2024, 11, 29, 17, 30, 0, 0, std::nullopt};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat, {}, {mark});
  REQUIRE(d.incidents.size() == 2);
  CHECK(cat.at(d.incidents[0].signature).id == "t.late");
  CHECK(d.incidents[1].recovered.has_value());
}

TEST_CASE("correlate: in a file several runs appended to, the last run's failure initiates", "[correlate]") {
  const auto cat = make_catalog({entry("t.first", "cause", 80), entry("t.last", "cause", 60),
                                 entry("t.same", "cause", 60)});
  // Unstamped lines, as an appended LSF .err file has them.
  auto bare = [&](const std::string& id, std::uint64_t line) {
    auto h = hit(cat, id, 0, line, 0, 0, 0, 0, 0);
    h.ctx.time = {};
    return h;
  };
  auto relaunch = [](std::uint64_t line) {
    denpex::scan::ProgressMark m;
    m.source = 0;
    m.line_no = line;
    m.relaunch = true;
    return m;
  };
  // Runs begin at lines 1, 20 and 40; the third printed nothing yet: its
  // mark says nothing about the two before it.
  const std::vector<Hit> hits{bare("t.first", 10), bare("t.last", 30)};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.err", {}}}, cat, {},
                                              {relaunch(20), relaunch(40)});
  REQUIRE(d.incidents.size() == 2);
  CHECK(cat.at(d.incidents[0].signature).id == "t.last");
  CHECK(d.incidents[0].initiating);
  REQUIRE(d.incidents[1].recovered);
  CHECK(d.incidents[1].recovered->relaunch);
  CHECK(d.incidents[1].recovered->line_no == 20);
  // The same failure in both runs is one incident that the last run raised.
  auto h1 = bare("t.same", 10);
  auto h2 = bare("t.same", 30);
  h1.text = h2.text = "same";
  const auto d2 = denpex::correlate::correlate({h1, h2}, {SourceRef{"train.err", {}}}, cat, {}, {relaunch(20)});
  REQUIRE(d2.incidents.size() == 1);
  CHECK(d2.incidents[0].initiating);
  CHECK_FALSE(d2.incidents[0].recovered);
  // Another file's relaunch says nothing about this one.
  const auto d3 = denpex::correlate::correlate(hits, {SourceRef{"train.err", {}}, SourceRef{"other.err", {}}}, cat, {},
                                               {[&] {
                                                 auto m = relaunch(20);
                                                 m.source = 1;
                                                 return m;
                                               }()});
  REQUIRE(d3.incidents.size() == 2);
  CHECK(cat.at(d3.incidents[0].signature).id == "t.first");
}

TEST_CASE("correlate: failures printed after the run said it completed do not initiate", "[correlate]") {
  auto done = entry("t.done", "context", 5);
  done["tags"] = {"run-completed"};
  const auto cat = make_catalog({done, entry("t.exc", "cause", 60), entry("t.real", "cause", 60)});
  auto bare = [&](const std::string& id, std::uint32_t source, std::uint64_t line) {
    auto h = hit(cat, id, source, line, 0, 0, 0, 0, 0);
    h.ctx.time = {};
    return h;
  };
  // A failure before the completion line is the run's; one after it is the shutdown's.
  const auto d = denpex::correlate::correlate({bare("t.real", 0, 5), bare("t.done", 0, 10), bare("t.exc", 0, 20)},
                                              {SourceRef{"result.txt", {}}}, cat);
  REQUIRE(d.incidents.size() == 2);
  CHECK(cat.at(d.incidents[0].signature).id == "t.real");
  CHECK(d.incidents[0].initiating);
  REQUIRE(d.incidents[1].recovered);
  CHECK(d.incidents[1].recovered->completed);
  // Only in its own file, and not past a new run of that file.
  const auto d2 = denpex::correlate::correlate({bare("t.done", 1, 10), bare("t.exc", 0, 20)},
                                               {SourceRef{"a.txt", {}}, SourceRef{"b.txt", {}}}, cat);
  REQUIRE(d2.incidents.size() == 1);
  CHECK(d2.incidents[0].initiating);
  denpex::scan::ProgressMark again;
  again.source = 0;
  again.line_no = 15;
  again.relaunch = true;
  const auto d3 = denpex::correlate::correlate({bare("t.done", 0, 10), bare("t.exc", 0, 20)}, {SourceRef{"a.txt", {}}},
                                               cat, {}, {again});
  REQUIRE(d3.incidents.size() == 1);
  CHECK(d3.incidents[0].initiating);
  CHECK_FALSE(d3.incidents[0].recovered);
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
  REQUIRE(d.inference);
  CHECK(d.inference->world_size == 8);
  CHECK(d.inference->missing_ranks == std::vector<int>{3});
  // A failed run always has a headline: the first report, marked as a symptom.
  REQUIRE(d.incidents.size() == 1);
  CHECK(d.incidents[0].initiating);
  CHECK(d.incidents[0].decision->rule == denpex::correlate::Rule::upstream_symptom);
  CHECK(d.incidents[0].confidence == denpex::correlate::Confidence::low);
  CHECK(d.unexplained.empty());
}

// --- Correlator v2 passes ---

namespace {

json with_severity(json e, const std::string& severity) {
  e["severity"] = severity;
  return e;
}

Hit with_capture(Hit h, const std::string& k, const std::string& v) {
  h.captures.emplace_back(k, v);
  return h;
}

} // namespace

TEST_CASE("r13_episodes: a quiet gap splits episodes, the terminal one decides", "[correlate][episodes]") {
  // NVSwitch record at 05:02, training goes on, a GPU falls off the bus at
  // 06:14: the earlier cause is an earlier episode, never the initiator.
  const auto cat = make_catalog({entry("t.sxid", "cause", 72), entry("t.xid79", "cause", 90)});
  std::vector<Hit> hits{hit(cat, "t.sxid", 0, 1, 2024, 11, 29, 5, 2), hit(cat, "t.xid79", 0, 2, 2024, 11, 29, 6, 14)};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"dmesg", {}}}, cat);
  REQUIRE(d.incidents.size() == 2);
  CHECK(cat.at(d.incidents[0].signature).id == "t.xid79");
  CHECK(d.incidents[0].decision->earlier_skipped == 1);
  CHECK(d.incidents[1].earlier_episode);
  REQUIRE(d.episodes.size() == 2);
  CHECK(d.episodes[1].started_by == denpex::correlate::Episode::Start::quiet_gap);
  CHECK(d.episodes[1].gap_us == 72LL * 60 * 1'000'000);
  CHECK(d.episodes[1].terminal);
  CHECK_FALSE(d.episodes[0].terminal);
}

TEST_CASE("r13_episodes: a watchdog's Timeout(ms) says when its collective began", "[correlate][episodes]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20), entry("t.xid", "cause", 90, {"t.timeout"})});
  std::vector<Hit> hits{hit(cat, "t.xid", 0, 1, 2024, 11, 29, 5, 0)};
  SECTION("45-minute timeout: one episode") {
    hits.push_back(with_capture(hit(cat, "t.timeout", 1, 1, 2024, 11, 29, 5, 45, 3), "timeout_ms", "2700000"));
    const auto d = denpex::correlate::correlate(hits, {SourceRef{"dmesg", {}}, SourceRef{"rank3.log", {}}}, cat);
    REQUIRE(d.episodes.size() == 1);
    CHECK(d.incidents[0].initiating);
    CHECK_FALSE(d.incidents[0].decision->fell_back);
    REQUIRE(d.incidents[0].collateral.size() == 1);
  }
  SECTION("no Timeout(ms): the symptom is its own episode; the cause before it still decides, said so") {
    hits.push_back(hit(cat, "t.timeout", 1, 1, 2024, 11, 29, 5, 45, 3));
    const auto d = denpex::correlate::correlate(hits, {SourceRef{"dmesg", {}}, SourceRef{"rank3.log", {}}}, cat);
    REQUIRE(d.episodes.size() == 2);
    CHECK(d.incidents[0].initiating);
    CHECK(d.incidents[0].decision->fell_back);
    CHECK(d.incidents[0].confidence == denpex::correlate::Confidence::medium);
  }
}

TEST_CASE("r13_choose: a warning-level cause does not initiate when an error follows in its episode",
          "[correlate][choose]") {
  const auto cat = make_catalog({with_severity(entry("t.nonfatal", "cause", 70), "warning"),
                                 with_severity(entry("t.fatal", "cause", 60), "critical")});
  std::vector<Hit> hits{hit(cat, "t.nonfatal", 0, 1, 2024, 11, 29, 6, 0), hit(cat, "t.fatal", 0, 2, 2024, 11, 29, 6, 5)};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"dmesg", {}}}, cat);
  REQUIRE(d.incidents.size() == 2);
  CHECK(cat.at(d.incidents[0].signature).id == "t.fatal");
  CHECK(d.incidents[0].decision->nonfatal_skipped == 1);
  CHECK(d.incidents[0].decision->rule == denpex::correlate::Rule::only_cause);

  SECTION("a warning alone still initiates") {
    const auto d1 = denpex::correlate::correlate({hits[0]}, {SourceRef{"dmesg", {}}}, cat);
    REQUIRE(d1.incidents.size() == 1);
    CHECK(d1.incidents[0].initiating);
  }
}

TEST_CASE("r13_episodes: a borrowed stamp neither splits episodes nor makes a line earlier than its episode",
          "[correlate][episodes]") {
  // A RuntimeError printed under the run's first log line (no stamp of its
  // own) and a GPU that fell off the bus 90 minutes later: one episode, and
  // the GPU explains the CUDA error.
  const auto cat = make_catalog({entry("t.cuda", "cause", 70), entry("t.xid79", "cause", 90, {"t.cuda"})});
  auto cuda = hit(cat, "t.cuda", 0, 2, 2024, 11, 29, 4, 49, 3);
  cuda.ctx.time.origin = denpex::context::Origin::neighbour;
  std::vector<Hit> hits{cuda, hit(cat, "t.xid79", 1, 7, 2024, 11, 29, 6, 14)};
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}, SourceRef{"dmesg", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(cat.at(d.incidents[0].signature).id == "t.xid79");
  REQUIRE(d.incidents[0].collateral.size() == 1);
  CHECK(d.episodes.size() == 1);
}

TEST_CASE("r13_describe: decisions are worded from their facts", "[correlate][describe]") {
  denpex::correlate::Diagnosis d;
  denpex::correlate::Decision dec;
  dec.rule = denpex::correlate::Rule::only_cause;
  dec.recovered_skipped = 1;
  CHECK(denpex::correlate::describe(dec, d) == "the only cause the run did not recover from");
  dec.generic_skipped = 2;
  CHECK(denpex::correlate::describe(dec, d) ==
        "the only cause in the logs; generic announcements were not considered; causes that training recovered from "
        "were not considered");
  CHECK(denpex::correlate::to_string(denpex::correlate::Rule::concurrent_most_specific) == "concurrent-most-specific");
}

// --- Generic evidence ---

namespace {

json headline_entry(const std::string& id, int priority, std::vector<std::string> explains = {}) {
  json e = entry(id, "cause", priority, std::move(explains));
  e["headline"] = "{type}: {message}";
  e["signals"] = json::array({json{{"id", "s"}, {"pattern", "(?P<type>x): (?P<message>y)"}}});
  return e;
}

Hit exception(const Catalog& cat, const std::string& id, std::uint64_t line, int minute, int rank, const std::string& type,
              const std::string& message) {
  auto h = hit(cat, id, 0, line, 2024, 11, 29, 18, minute, rank);
  h.captures = {{"type", type}, {"message", message}};
  return h;
}

} // namespace

TEST_CASE("r14: the first rank's exception heads the run and explains the others' timeouts", "[correlate][generic]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20), headline_entry("t.exc", 34, {"t.timeout"})});
  std::vector<Hit> hits{exception(cat, "t.exc", 1, 0, 3, "FileNotFoundError", "No such file: shard_17")};
  for (int r : {0, 1, 2}) {
    hits.push_back(hit(cat, "t.timeout", 0, 2 + static_cast<std::uint64_t>(r), 2024, 11, 29, 18, 10, r));
  }
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(d.incidents[0].headline == "FileNotFoundError: No such file: shard_17");
  CHECK(d.incidents[0].initiating);
  CHECK_FALSE(d.incidents[0].simultaneous);
  CHECK(d.incidents[0].confidence == denpex::correlate::Confidence::medium);
  REQUIRE(d.incidents[0].collateral.size() == 1);
  CHECK(d.incidents[0].collateral[0].ranks.size() == 3);
}

TEST_CASE("r14: the same exception on every rank at once claims no first rank", "[correlate][generic]") {
  const auto cat = make_catalog({headline_entry("t.exc", 34)});
  std::vector<Hit> hits;
  for (int r = 0; r < 4; ++r) {
    hits.push_back(exception(cat, "t.exc", 1 + static_cast<std::uint64_t>(r), 0, r, "ValueError", "heads (40) % tp (6)"));
  }
  auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(d.incidents[0].simultaneous);
  CHECK(d.incidents[0].ranks.size() == 4);
  CHECK(denpex::correlate::describe_simultaneous(d.incidents[0]).find("ranks 0-3") != std::string::npos);

  // Minutes apart: rank 2 was first.
  hits[2].ctx.time.wall.minute = 0;
  for (auto k : {0, 1, 3}) {
    hits[static_cast<std::size_t>(k)].ctx.time.wall.minute = 5;
  }
  d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK_FALSE(d.incidents[0].simultaneous);
  REQUIRE(d.incidents[0].first.ctx.rank);
  CHECK(d.incidents[0].first.ctx.rank->value == 2);
}

TEST_CASE("r14: an exception chain is one incident named by its last exception", "[correlate][generic]") {
  const auto cat = make_catalog({headline_entry("t.exc", 34)});
  auto root = exception(cat, "t.exc", 9, 0, 1, "KeyError", "'model.layers.0.weight'");
  auto last = exception(cat, "t.exc", 18, 0, 1, "RuntimeError", "Error(s) in loading state_dict");
  auto tb = std::make_shared<denpex::context::Traceback>();
  tb->frames = {{"/workspace/train.py", 231, "<module>"}, {"/usr/lib/python3/dist-packages/torch/nn/modules/module.py", 2152, "load_state_dict"}};
  tb->frame_count = 2;
  tb->chain = {{"KeyError: 'model.layers.0.weight'", 9, denpex::context::ChainLink::during_handling}};
  last.traceback = tb;
  const auto d = denpex::correlate::correlate({root, last}, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(d.incidents[0].headline == "RuntimeError: Error(s) in loading state_dict");
  REQUIRE(d.incidents[0].traceback);
  CHECK(d.incidents[0].traceback->user_frame()->file == "/workspace/train.py");
  CHECK(denpex::correlate::describe_chain(d.incidents[0], d) ==
        "raised while handling KeyError: 'model.layers.0.weight' (train.log:9)");
}

TEST_CASE("r14: a catalogued cause beats generic evidence, an exception the run continued past initiates nothing",
          "[correlate][generic]") {
  const auto cat = make_catalog({headline_entry("t.exc", 34), entry("t.oom", "cause", 60)});
  const auto d = denpex::correlate::correlate(
      {exception(cat, "t.exc", 1, 0, 0, "ValueError", "bad"), hit(cat, "t.oom", 0, 5, 2024, 11, 29, 18, 1, 1)},
      {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 2);
  CHECK(cat.at(d.incidents[0].signature).id == "t.oom");
  CHECK(d.incidents[0].decision->generic_skipped == 1);

  denpex::scan::ProgressMark later;
  later.source = 0;
  later.line_no = 9;
  later.time.kind = denpex::context::ClockKind::wall;
  later.time.wall = denpex::context::WallTime{2024, 11, 29, 19, 30, 0, 0, std::nullopt};
  const auto r = denpex::correlate::correlate({exception(cat, "t.exc", 1, 0, 0, "ValueError", "bad")},
                                              {SourceRef{"train.log", {}}}, cat, {}, {later});
  REQUIRE(r.incidents.size() == 1);
  CHECK(r.incidents[0].recovered);
  CHECK_FALSE(r.incidents[0].initiating);
  CHECK(r.initiating() == nullptr);
}

// --- Identity across sources ---

namespace {

Hit init_line(const Catalog& cat, std::uint64_t line, const std::string& host, std::int64_t pid, int rank, int nranks,
              const std::string& bus_id) {
  auto h = hit(cat, "t.init", 0, line, 2024, 11, 29, 17, 41);
  h.ctx.host = denpex::context::Field<std::string>{host, denpex::context::Origin::body};
  h.ctx.pid = denpex::context::Field<std::int64_t>{pid, denpex::context::Origin::body};
  h.captures = {{"rank", std::to_string(rank)}, {"nranks", std::to_string(nranks)}, {"bus_id", bus_id}};
  return h;
}

} // namespace

TEST_CASE("identity: NCCL's init lines tie a process and a bus id to the global rank", "[correlate][identity]") {
  const auto cat = make_catalog({entry("t.init", "context", 1), entry("t.xid", "cause", 90, {"t.nccl"}),
                                 entry("t.nccl", "symptom", 20)});
  std::vector<Hit> hits{
      // the subgroup communicator first: its "rank 0" is a position in a pair
      init_line(cat, 1, "node-b", 40004, 0, 2, "9a000"),
      init_line(cat, 2, "node-b", 40004, 4, 8, "9a000"),
      init_line(cat, 3, "node-b", 40005, 5, 8, "ab000"),
  };
  // The kernel's Xid names only the bus; NCCL's WARN names only host and pid.
  hits.push_back(hit(cat, "t.xid", 1, 1, 2024, 11, 29, 17, 59, std::nullopt, "0000:9a:00"));
  auto warn = hit(cat, "t.nccl", 0, 9, 2024, 11, 29, 17, 59);
  warn.ctx.host = denpex::context::Field<std::string>{"node-b", denpex::context::Origin::body};
  warn.ctx.pid = denpex::context::Field<std::int64_t>{40005, denpex::context::Origin::body};
  hits.push_back(warn);
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"nccl.log", {}}, SourceRef{"node-b/dmesg", {}}}, cat);
  REQUIRE(d.identities.size() == 2);
  CHECK(d.identities[0].rank == 4);
  CHECK(d.identities[0].pci == "0000:9a:00");
  CHECK(d.identities[1].pci == "0000:ab:00");
  REQUIRE(d.incidents.size() == 1);
  const auto& inc = d.incidents[0];
  REQUIRE(inc.first.ctx.rank);
  CHECK(inc.first.ctx.rank->value == 4);
  CHECK(inc.first.ctx.rank->origin == denpex::context::Origin::identity);
  CHECK(denpex::correlate::describe_identity(inc.first, d).find("pid 40004 on node-b (GPU 0000:9a:00) is rank 4 of 8") !=
        std::string::npos);
  REQUIRE(inc.collateral.size() == 1);
  CHECK(inc.collateral[0].ranks == std::set<int>{5});
}

TEST_CASE("a monitoring tool's report of an Xid stands for the missing kernel line", "[correlate][xid]") {
  const auto cat = make_catalog({entry("xid.79", "cause", 90), entry("t.tool", "symptom", 20, {}, true)});
  auto report = hit(cat, "t.tool", 0, 1, 2024, 11, 29, 18, 0, std::nullopt, "0000:9b:00");
  report.captures = {{"reports_xid", "79"}};
  auto d = denpex::correlate::correlate({report}, {SourceRef{"gpud.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(cat.at(d.incidents[0].signature).id == "xid.79");
  CHECK(d.incidents[0].inferred_from_tool);
  CHECK(denpex::correlate::describe_inferred(d.incidents[0]).find("monitoring tool") != std::string::npos);

  // With the kernel's own line present, the report is its collateral.
  auto kernel = hit(cat, "xid.79", 1, 3, 2024, 11, 29, 17, 59, std::nullopt, "0000:9b:00");
  d = denpex::correlate::correlate({report, kernel}, {SourceRef{"gpud.log", {}}, SourceRef{"dmesg", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(d.incidents[0].inferred_xid.empty());
  REQUIRE(d.incidents[0].collateral.size() == 1);
}

TEST_CASE("r14: a direct-cause chain is named by its root, with what it caused", "[correlate][generic]") {
  const auto cat = make_catalog({headline_entry("t.exc", 34)});
  auto root = exception(cat, "t.exc", 3, 0, 7, "RuntimeError", "worker SIGBUS");
  auto last = exception(cat, "t.exc", 9, 0, 7, "RuntimeError", "worker exited unexpectedly");
  last.text = "7: [rank7]: RuntimeError: worker exited unexpectedly";
  auto tb = std::make_shared<denpex::context::Traceback>();
  tb->chain = {{"RuntimeError: worker SIGBUS", 3, denpex::context::ChainLink::direct_cause}};
  last.traceback = tb;
  const auto d = denpex::correlate::correlate({root, last}, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(d.incidents[0].headline == "RuntimeError: worker SIGBUS");
  REQUIRE(d.incidents[0].later.size() == 1);
  CHECK(d.incidents[0].later[0].text == "RuntimeError: worker exited unexpectedly");
  CHECK(denpex::correlate::describe_chain(d.incidents[0], d) ==
        "it caused RuntimeError: worker exited unexpectedly (train.log:9)");
}

// --- Clocks across nodes ---

namespace {

Hit on_node(Hit h, const std::string& host, int second, int micros = 0) {
  h.ctx.host = denpex::context::Field<std::string>{host, denpex::context::Origin::prefix};
  h.ctx.time.wall.second = second;
  h.ctx.time.wall.micros = micros;
  return h;
}

denpex::correlate::Diagnosis two_nodes(const Catalog& cat, const std::string& first_host, const std::string& first_id,
                                       const std::string& second_host, const std::string& second_id,
                                       std::int64_t node_skew_us) {
  std::vector<Hit> hits{on_node(hit(cat, first_id, 0, 1, 2024, 11, 29, 18, 0), first_host, 0),
                        on_node(hit(cat, second_id, 1, 1, 2024, 11, 29, 18, 0), second_host, 2, 500'000)};
  denpex::correlate::CorrelateOptions o;
  o.node_skew_us = node_skew_us;
  return denpex::correlate::correlate(hits, {SourceRef{"a.log", {}}, SourceRef{"b.log", {}}}, cat, o);
}

} // namespace

TEST_CASE("clocks: another node's cause within the tolerance is concurrent and reported", "[correlate][clocks]") {
  const auto cat = make_catalog({entry("t.xid", "cause", 90), entry("t.ib", "cause", 80)});
  SECTION("2.5 s apart on two nodes, 1 s tolerance: concurrent; the risk is named with what would settle it") {
    const auto d = two_nodes(cat, "node-a", "t.xid", "node-b", "t.ib", 1'000'000);
    const auto* init = d.initiating();
    REQUIRE(init != nullptr);
    CHECK(cat.at(init->signature).id == "t.xid");
    REQUIRE(init->decision);
    CHECK(init->decision->rule == denpex::correlate::Rule::concurrent_most_specific);
    REQUIRE(init->decision->clock_risk);
    CHECK(init->decision->clock_risk->host == "node-b");
    CHECK(init->decision->clock_risk->delta_us == 2'500'000);
    CHECK(cat.at(init->decision->clock_risk->signature).id == "t.ib");
    CHECK(denpex::correlate::describe(*init->decision, d).find(
              "causes within 2.0 s of it (3.0 s on another node) are treated as concurrent") != std::string::npos);
    CHECK(denpex::correlate::describe(*init->decision, d).find(
              "stamped 2.5 s after it, inside the window for different nodes (2.0 s concurrency plus 1.0 s clock "
              "tolerance)") != std::string::npos);
    REQUIRE_FALSE(init->missing.empty());
    CHECK(init->missing.back().kind == denpex::correlate::MissingFact::Kind::clock_offset);
    CHECK(denpex::correlate::describe(init->missing.back(), *init, cat).find("if node-b's clock ran ahead of node-a's by more than 2.5 s, its t.ib came first") !=
          std::string::npos);
  }
  SECTION("no tolerance: ordered by time, nothing to report") {
    const auto d = two_nodes(cat, "node-a", "t.xid", "node-b", "t.ib", 0);
    REQUIRE(d.initiating() != nullptr);
    CHECK(d.initiating()->decision->rule == denpex::correlate::Rule::earliest_by_time);
    CHECK_FALSE(d.initiating()->decision->clock_risk);
  }
  SECTION("one node: one clock, no tolerance added") {
    const auto d = two_nodes(cat, "node-a", "t.xid", "node-a", "t.ib", 1'000'000);
    REQUIRE(d.initiating() != nullptr);
    CHECK(d.initiating()->decision->rule == denpex::correlate::Rule::earliest_by_time);
    CHECK_FALSE(d.initiating()->decision->clock_risk);
  }
  SECTION("the more specific cause stamped later: the earlier one is named as the risk") {
    const auto d = two_nodes(cat, "node-b", "t.ib", "node-a", "t.xid", 1'000'000);
    const auto* init = d.initiating();
    REQUIRE(init != nullptr);
    CHECK(cat.at(init->signature).id == "t.xid");
    REQUIRE(init->decision->clock_risk);
    CHECK(init->decision->clock_risk->delta_us == -2'500'000);
    CHECK(denpex::correlate::describe(init->missing.back(), *init, cat)
              .find("unless node-b's clock ran behind node-a's by more than 2.5 s, its t.ib came first") !=
          std::string::npos);
  }
}

TEST_CASE("clocks: a symptom stamped slightly before its cause on another node is still its collateral",
          "[correlate][clocks]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20), entry("t.xid", "cause", 90, {"t.timeout"})});
  std::vector<Hit> hits{on_node(hit(cat, "t.xid", 0, 1, 2024, 11, 29, 18, 0), "node-a", 10),
                        on_node(hit(cat, "t.timeout", 1, 1, 2024, 11, 29, 18, 0, 5), "node-b", 7, 500'000)};
  denpex::correlate::CorrelateOptions o;
  o.node_skew_us = 1'000'000; // 2.5 s early: inside the 2 s window plus 1 s between nodes
  auto d = denpex::correlate::correlate(hits, {SourceRef{"a.log", {}}, SourceRef{"b.log", {}}}, cat, o);
  REQUIRE(d.initiating() != nullptr);
  CHECK(d.initiating()->collateral.size() == 1);
  o.node_skew_us = 0;
  d = denpex::correlate::correlate(hits, {SourceRef{"a.log", {}}, SourceRef{"b.log", {}}}, cat, o);
  REQUIRE(d.initiating() != nullptr);
  CHECK(d.initiating()->collateral.empty());
}

// srun's "task N: Exited with exit code C" is printed after the task ended:
// collateral of whatever came before it, the first failure only when nothing
// did (facebookresearch/deit#102: task 5 exits, then the step is torn down
// and the other tasks are reported Killed).
TEST_CASE("joins_earlier: a task's exit line joins the incident before it, else names the first task",
          "[correlate][generic]") {
  json exit_code = entry("t.exit-code", "cause", 31);
  exit_code["headline"] = "srun task {tasks} exited";
  exit_code["signals"] = json::array({json{{"id", "s"}, {"pattern", "task (?P<tasks>\\d+): Exited"}}});
  exit_code["joins_earlier"] = true;
  json killed = entry("t.killed", "cause", 32);
  killed["headline"] = "srun task killed";
  const auto cat = make_catalog({headline_entry("t.exc", 34), exit_code, killed});

  SECTION("after an exception: its collateral") {
    auto e = exception(cat, "t.exc", 3, 0, 3, "FileNotFoundError", "No such file: shard_17");
    auto x = hit(cat, "t.exit-code", 0, 9, 2024, 11, 29, 18, 1);
    x.captures = {{"tasks", "3"}};
    const auto d = denpex::correlate::correlate({e, x}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(cat.at(d.incidents[0].signature).id == "t.exc");
    REQUIRE(d.incidents[0].collateral.size() == 1);
    CHECK(cat.at(d.incidents[0].collateral[0].signature).id == "t.exit-code");
  }
  SECTION("the same stamp as a later line: not that line's collateral") {
    auto x = hit(cat, "t.exit-code", 0, 9, 2024, 11, 29, 18, 1); // borrowed the stamp above it
    x.captures = {{"tasks", "3"}};
    auto e = exception(cat, "t.exc", 12, 1, 3, "FileNotFoundError", "No such file: shard_17");
    const auto d = denpex::correlate::correlate({x, e}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 2);
    for (const auto& inc : d.incidents) {
      CHECK(inc.collateral.empty());
    }
  }
  SECTION("first in the log, before the killed tasks: it initiates") {
    auto x = hit(cat, "t.exit-code", 0, 1, 2024, 11, 29, 18, 1);
    x.ctx.time.kind = denpex::context::ClockKind::none; // srun's status lines carry no stamp
    x.captures = {{"tasks", "5"}};
    std::vector<Hit> hits{x};
    for (std::uint64_t line = 4; line < 8; ++line) {
      hits.push_back(hit(cat, "t.killed", 0, line, 2021, 7, 14, 8, 0));
    }
    const auto d = denpex::correlate::correlate(hits, {SourceRef{"slurm.out", {}}}, cat);
    const auto init = std::find_if(d.incidents.begin(), d.incidents.end(), [](const auto& i) { return i.initiating; });
    REQUIRE(init != d.incidents.end());
    CHECK(cat.at(init->signature).id == "t.exit-code");
    CHECK(init->headline == "srun task 5 exited");
  }
}
