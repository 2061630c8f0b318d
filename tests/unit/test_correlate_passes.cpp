// One place per correlator pass (src/correlate/passes.hpp): for each pass, a
// behaviour that fails when the pass is removed or broken. Hits are built by
// hand (no regex, no reader), as in test_correlate.cpp; their texts are real
// line formats (testdata/README.md), though only the Hit fields the
// correlator reads decide anything. Rules already covered in
// test_correlate.cpp and test_correlate_runs.cpp are not repeated here.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>

#include "../../src/correlate/passes.hpp"

using denpex::Diagnostics;
using denpex::catalog::Catalog;
using denpex::catalog::CatalogFile;
using denpex::catalog::Severity;
using denpex::context::ClockKind;
using denpex::context::Field;
using denpex::context::Origin;
using denpex::context::WallTime;
using denpex::correlate::Confidence;
using denpex::correlate::CorrelateOptions;
using denpex::correlate::Diagnosis;
using denpex::correlate::Episode;
using denpex::correlate::Incident;
using denpex::correlate::Inference;
using denpex::correlate::MissingFact;
using denpex::correlate::Rule;
using denpex::scan::Hit;
using denpex::scan::ProgressMark;
using denpex::scan::SourceRef;
using nlohmann::json;

namespace {

// --- A small catalog, as in test_correlate.cpp ---

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

// The entry with one more field set.
json with(json e, const std::string& key, json value) {
  e[key] = std::move(value);
  return e;
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

// --- Hits ---

// A hit of entry `id` on `line` of `source`, with a wall-clock stamp
// (year 0 = printed without a year) and optional rank / bus id (copied from
// test_correlate.cpp).
Hit hit(const Catalog& cat, const std::string& id, std::uint32_t source, std::uint64_t line, int year, int month,
        int day, int hour, int minute, std::optional<int> rank = {}, std::string pci = {}) {
  Hit h;
  h.signature = static_cast<std::uint32_t>(*cat.find(id));
  h.source = source;
  h.line_no = line;
  h.last_line_no = line;
  h.text = id;
  h.ctx.time.kind = ClockKind::wall;
  h.ctx.time.wall = WallTime{year, month, day, hour, minute, 0, 0, std::nullopt};
  if (rank) {
    h.ctx.rank = Field<int>{*rank, Origin::prefix};
  }
  if (!pci.empty()) {
    h.ctx.pci = Field<std::string>{pci, Origin::body};
  }
  return h;
}

// The line as printed.
Hit said(Hit h, std::string text) {
  h.text = std::move(text);
  return h;
}

Hit at_second(Hit h, int second) {
  h.ctx.time.wall.second = second;
  return h;
}

// A line with no stamp at all (srun's status lines, an appended .err file).
Hit unstamped(Hit h) {
  h.ctx.time = {};
  return h;
}

// A line without a stamp of its own: it borrowed the nearest earlier one.
Hit borrowed(Hit h) {
  h.ctx.time.origin = Origin::neighbour;
  return h;
}

// Raw dmesg: seconds since boot, comparable only within its own source.
Hit since_boot(Hit h, std::int64_t micros) {
  h.ctx.time = {};
  h.ctx.time.kind = ClockKind::monotonic;
  h.ctx.time.mono_micros = micros;
  h.ctx.time.format = "dmesg";
  return h;
}

Hit on_host(Hit h, const std::string& host, Origin origin = Origin::prefix) {
  h.ctx.host = Field<std::string>{host, origin};
  return h;
}

Hit with_pid(Hit h, std::int64_t pid) {
  h.ctx.pid = Field<std::int64_t>{pid, Origin::body};
  return h;
}

Hit with_capture(Hit h, const std::string& k, const std::string& v) {
  h.captures.emplace_back(k, v);
  return h;
}

Hit of_signal(Hit h, std::uint32_t signal) {
  h.signal = signal;
  return h;
}

ProgressMark progress(std::uint32_t source, std::uint64_t line, int hour, int minute, int second, std::string text) {
  ProgressMark m;
  m.source = source;
  m.line_no = line;
  m.time.kind = ClockKind::wall;
  m.time.wall = WallTime{2024, 11, 29, hour, minute, second, 0, std::nullopt};
  m.text = std::move(text);
  return m;
}

std::int64_t epoch_us(int year, int month, int day, int hour, int minute, int second) {
  return denpex::context::to_epoch_micros(WallTime{year, month, day, hour, minute, second, 0, std::nullopt}, year);
}

const std::string& id_of(const Catalog& cat, const Incident& inc) { return cat.at(inc.signature).id; }

const Incident* incident_of(const Diagnosis& d, const Catalog& cat, const std::string& id) {
  for (const auto& inc : d.incidents) {
    if (id_of(cat, inc) == id) {
      return &inc;
    }
  }
  return nullptr;
}

bool has_missing(const Incident& inc, MissingFact::Kind kind) {
  return std::any_of(inc.missing.begin(), inc.missing.end(), [&](const MissingFact& m) { return m.kind == kind; });
}

// Real lines (testdata/README.md says where each comes from).
const std::string k_xid79 =
    "[Fri Nov 29 17:59:58 2024] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
    "the bus.";
const std::string k_nccl_700 = "[rank3]:[2024-11-29 17:59:58] node-017:2339:2380 [3] enqueue.cc:1556 NCCL WARN Cuda "
                               "failure 700 'an illegal memory access was encountered'";
const std::string k_watchdog_exc =
    "[rank3]:[E1129 17:59:58.871342 2339 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID "
    "0(default_pg) Rank 3] Process group watchdog thread terminated with exception: CUDA error: an illegal memory "
    "access was encountered";

std::string watchdog_timeout(int rank, std::int64_t seq, const std::string& op) {
  return "[rank" + std::to_string(rank) +
         "]:[E1129 18:09:58.100000 2336 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:616] [Rank " +
         std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + std::to_string(seq) + ", OpType=" + op +
         ", NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for 600012 milliseconds before "
         "timing out.";
}

// A watchdog timeout of `rank` with the captures the real entry reads.
Hit timeout_of(const Catalog& cat, const std::string& id, int rank, std::int64_t seq, const std::string& op,
               std::optional<int> nranks = 8) {
  auto h = said(at_second(hit(cat, id, 0, 100 + static_cast<std::uint64_t>(rank), 2024, 11, 29, 18, 9, rank), 58),
                watchdog_timeout(rank, seq, op));
  h.captures = {{"seq", std::to_string(seq)}, {"op", op}, {"timeout_ms", "600000"}};
  if (nranks) {
    h.captures.emplace_back("nranks", std::to_string(*nranks));
  }
  return h;
}

} // namespace

// --- clocks ---

TEST_CASE("correlate pass clocks: year-less stamps take --year, else the latest printed year, else file times, else "
          "the current year",
          "[correlate][passes][clocks]") {
  const auto cat = make_catalog({entry("t.xid", "cause", 90), entry("t.other", "cause", 50)});
  // syslog prints no year: "Nov 29 17:59:58 node-017 kernel: NVRM: Xid ..."
  const auto yearless =
      said(at_second(hit(cat, "t.xid", 0, 7, 0, 11, 29, 17, 59), 58),
           "Nov 29 17:59:58 node-017 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has "
           "fallen off the bus.");
  const std::int64_t dec_2024 = 1733443200; // 2024-12-06
  const std::int64_t jun_2025 = 1748736000; // 2025-06-01

  SECTION("--year") {
    CorrelateOptions o;
    o.assume_year = 2023;
    const auto d = denpex::correlate::correlate({yearless}, {SourceRef{"syslog", jun_2025}}, cat, o);
    CHECK(d.assumed_year == 2023);
    CHECK(d.clocks.year_from == denpex::correlate::ClockFacts::YearFrom::option);
    CHECK(d.clocks.yearless);
    CHECK(d.clocks.zoneless);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].first.time_us == epoch_us(2023, 11, 29, 17, 59, 58));
  }
  SECTION("a printed year wins over the files' times") {
    const auto printed = said(at_second(hit(cat, "t.other", 1, 3, 2024, 11, 29, 18, 0), 1),
                              "[Fri Nov 29 18:00:01 2024] NVRM: Xid (PCI:0000:3b:00): 45, pid=2339, name=python3, Ch "
                              "00000008");
    const auto d = denpex::correlate::correlate({yearless, printed},
                                                {SourceRef{"syslog", jun_2025}, SourceRef{"dmesg.log", jun_2025}}, cat);
    CHECK(d.assumed_year == 2024);
    CHECK(d.clocks.year_from == denpex::correlate::ClockFacts::YearFrom::stamps);
    const auto* xid = incident_of(d, cat, "t.xid");
    REQUIRE(xid != nullptr);
    CHECK(xid->first.time_us == epoch_us(2024, 11, 29, 17, 59, 58));
  }
  SECTION("the files' modification times") {
    const auto d = denpex::correlate::correlate({yearless}, {SourceRef{"syslog", dec_2024}}, cat);
    CHECK(d.assumed_year == 2024);
    CHECK(d.clocks.year_from == denpex::correlate::ClockFacts::YearFrom::mtime);
  }
  SECTION("the current year, last") {
    CorrelateOptions o;
    o.now_year = 2022;
    const auto d = denpex::correlate::correlate({yearless}, {SourceRef{"syslog", {}}}, cat, o);
    CHECK(d.assumed_year == 2022);
    CHECK(d.clocks.year_from == denpex::correlate::ClockFacts::YearFrom::now);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].first.time_us == epoch_us(2022, 11, 29, 17, 59, 58));
  }
}

TEST_CASE("correlate pass clocks: raw dmesg seconds-since-boot are one clock per source",
          "[correlate][passes][clocks]") {
  const auto cat = make_catalog({entry("t.link", "cause", 60), entry("t.xid", "cause", 90)});
  const auto link = since_boot(
      said(hit(cat, "t.link", 0, 1, 0, 0, 0, 0, 0), "[  100.000000] mlx5_core 0000:c1:00.0 mlx5_3: Port: 1 Link DOWN"),
      100'000'000);
  const auto xid =
      since_boot(said(hit(cat, "t.xid", 0, 2, 0, 0, 0, 0, 0),
                      "[  512.345678] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU "
                      "has fallen off the bus."),
                 512'345'678);
  SECTION("one source: its own seconds order the lines") {
    const auto d = denpex::correlate::correlate({link, xid}, {SourceRef{"dmesg", {}}}, cat);
    CHECK(d.clocks.monotonic);
    REQUIRE(d.initiating() != nullptr);
    CHECK(id_of(cat, *d.initiating()) == "t.link");
    CHECK(d.initiating()->decision->rule == Rule::earliest_by_time);
    CHECK_FALSE(d.initiating()->first.time_us); // no wall clock
    REQUIRE(d.episodes.size() == 1);
    CHECK(d.episodes[0].domain == 1);
    CHECK_FALSE(d.episodes[0].start_us);
  }
  SECTION("two sources: two clocks that never compare; priority decides") {
    auto xid_b = xid;
    xid_b.source = 1;
    const auto d = denpex::correlate::correlate({link, xid_b},
                                                {SourceRef{"node-a/dmesg", {}}, SourceRef{"node-b/dmesg", {}}}, cat);
    REQUIRE(d.initiating() != nullptr);
    CHECK(id_of(cat, *d.initiating()) == "t.xid");
    CHECK(d.initiating()->decision->rule == Rule::priority_across_clocks);
    REQUIRE(d.episodes.size() == 2);
    CHECK(d.episodes[0].domain == 1);
    CHECK(d.episodes[1].domain == 2);
    CHECK(d.episodes[0].terminal);
    CHECK(d.episodes[1].terminal);
  }
}

TEST_CASE("correlate pass clocks: a watchdog's Timeout(ms) says when its failure began, an absurd one is ignored",
          "[correlate][passes][clocks]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20)});
  const auto printed = epoch_us(2024, 11, 29, 18, 9, 58);
  auto fired = timeout_of(cat, "t.timeout", 0, 4821, "ALLREDUCE");
  auto absurd = with_capture(said(at_second(hit(cat, "t.timeout", 0, 102, 2024, 11, 29, 18, 9, 1), 58),
                                  watchdog_timeout(1, 4821, "ALLREDUCE")),
                             "timeout_ms", "2199023255552"); // 2^41 ms: about 70 years
  SECTION("the pass itself") {
    const std::vector<Hit> hits{fired, absurd};
    Diagnosis d;
    d.sources = {SourceRef{"train.log", {}}};
    CorrelateOptions o;
    std::vector<ProgressMark> marks;
    denpex::correlate::detail::State s{cat, o, marks, d};
    denpex::correlate::detail::pass_clocks(s, hits);
    REQUIRE(s.records.size() == 2);
    REQUIRE(s.records[0].stamp);
    CHECK(s.records[0].stamp->t == printed);
    CHECK(s.records[0].stamp->domain == 0);
    REQUIRE(s.records[0].began);
    CHECK(s.records[0].began->t == printed - 600'000'000);
    REQUIRE(s.records[1].began);
    CHECK(s.records[1].began->t == printed);
  }
  SECTION("through correlate(): the episode starts when the collective was entered") {
    const auto d = denpex::correlate::correlate({fired}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.episodes.size() == 1);
    CHECK(d.episodes[0].start_us == printed - 600'000'000);
    CHECK(d.episodes[0].end_us == printed);
  }
}

// --- runs ---

TEST_CASE("correlate pass runs: a file with no job id joins the job whose span it shares, runs are ordered by time",
          "[correlate][passes][runs]") {
  const auto cat = make_catalog({entry("t.xid", "cause", 90), entry("t.exit", "cause", 40)});
  const std::vector<Hit> hits{
      said(hit(cat, "t.exit", 0, 40, 2024, 11, 29, 18, 1), "srun: error: node-017: task 3: Exited with exit code 1"),
      said(hit(cat, "t.exit", 1, 12, 2024, 6, 11, 9, 30), "srun: error: node-004: task 0: Exited with exit code 1"),
      said(at_second(hit(cat, "t.xid", 2, 5, 2024, 11, 29, 17, 59), 58), k_xid79),
  };
  const auto d = denpex::correlate::correlate(
      hits, {SourceRef{"slurm-4802.out", {}}, SourceRef{"slurm-4711.out", {}}, SourceRef{"node-017/dmesg.log", {}}},
      cat);
  REQUIRE(d.runs.size() == 2);
  CHECK(d.runs[0].job == "4711"); // June, before November
  CHECK(d.runs[0].sources == std::vector<std::uint32_t>{1});
  CHECK(d.runs[1].job == "4802");
  CHECK(d.runs[1].sources == std::vector<std::uint32_t>{0, 2});
  CHECK(d.runs[1].start_us == epoch_us(2024, 11, 29, 17, 59, 58));
  REQUIRE(d.initiating() != nullptr);
  CHECK(d.initiating()->first.source == 2);
}

// --- identity ---

namespace {

Hit comm_init(const Catalog& cat, std::uint64_t line, const std::string& host, std::int64_t pid, int rank, int nranks,
              const std::string& bus_id) {
  auto h = said(hit(cat, "t.init", 0, line, 2024, 11, 29, 17, 41),
                "[2024-11-29 17:41:02] " + host + ":" + std::to_string(pid) + ":" + std::to_string(pid) + " [" +
                    std::to_string(rank % 8) + "] NCCL INFO ncclCommInitRank comm 0x55d0c6a400 rank " +
                    std::to_string(rank) + " nranks " + std::to_string(nranks) + " cudaDev 4 nvmlDev 4 busId " +
                    bus_id + " commId 0x7f3e5a0b1c2d3e4f - Init COMPLETE");
  h = with_pid(on_host(h, host, Origin::body), pid);
  h.captures = {{"rank", std::to_string(rank)}, {"nranks", std::to_string(nranks)}, {"bus_id", bus_id}};
  return h;
}

} // namespace

TEST_CASE("correlate pass identity: a bus id two hosts share names no rank, on a named host it does",
          "[correlate][passes][identity]") {
  const auto cat = make_catalog({entry("t.init", "context", 1), entry("t.xid", "cause", 90)});
  std::vector<Hit> hits{comm_init(cat, 1, "node-a", 40004, 4, 16, "9a000"),
                        comm_init(cat, 2, "node-b", 50004, 12, 16, "9a000")};
  const auto xid = said(at_second(hit(cat, "t.xid", 1, 9, 2024, 11, 29, 17, 59, std::nullopt, "0000:9a:00"), 58),
                        "[Fri Nov 29 17:59:58 2024] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, "
                        "GPU has fallen off the bus.");
  const std::vector<SourceRef> sources{SourceRef{"nccl-debug.log", {}}, SourceRef{"dmesg.log", {}}};
  SECTION("no host: two GPUs with that bus id, no rank") {
    hits.push_back(xid);
    const auto d = denpex::correlate::correlate(hits, sources, cat);
    REQUIRE(d.identities.size() == 2);
    CHECK(d.identities[0].host == "node-a");
    CHECK(d.identities[1].host == "node-b");
    REQUIRE(d.incidents.size() == 1);
    CHECK_FALSE(d.incidents[0].first.ctx.rank);
    CHECK(d.incidents[0].ranks.empty());
  }
  SECTION("its host named: that host's GPU, that process's global rank") {
    hits.push_back(on_host(xid, "node-b", Origin::file_name));
    const auto d = denpex::correlate::correlate(hits, sources, cat);
    REQUIRE(d.incidents.size() == 1);
    const auto& inc = d.incidents[0];
    REQUIRE(inc.first.ctx.rank);
    CHECK(inc.first.ctx.rank->value == 12);
    CHECK(inc.first.ctx.rank->origin == Origin::identity);
    CHECK(inc.ranks == std::set<int>{12});
    const auto* link = d.identity_of(inc.first);
    REQUIRE(link != nullptr);
    CHECK(link->host == "node-b");
    CHECK(link->nranks == 16);
  }
}

TEST_CASE("correlate pass identity: the line's own rank beats its capture, --node names the host of lines that name "
          "none",
          "[correlate][passes][identity]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20)});
  // A subgroup's watchdog: "[Rank 1]" is the rank in the group, the
  // launcher's "[rank5]:" prefix the global one.
  auto in_group = with_capture(said(at_second(hit(cat, "t.timeout", 0, 9, 2024, 11, 29, 18, 9), 58),
                                    "[E1129 18:09:58.100000 2336 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:616] "
                                    "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=17, "
                                    "OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
                                    "milliseconds before timing out."),
                               "rank", "1");
  SECTION("a capture alone") {
    const auto d = denpex::correlate::correlate({in_group}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    REQUIRE(d.incidents[0].first.ctx.rank);
    CHECK(d.incidents[0].first.ctx.rank->value == 1);
    CHECK(d.incidents[0].first.ctx.rank->origin == Origin::capture);
    CHECK(d.incidents[0].ranks == std::set<int>{1});
    CHECK(d.incidents[0].hosts.empty());
  }
  SECTION("the prefix's rank wins, and --node gives the host") {
    in_group.ctx.rank = Field<int>{5, Origin::prefix};
    in_group.text = "[rank5]:" + in_group.text;
    CorrelateOptions o;
    o.node = "node-017";
    const auto d = denpex::correlate::correlate({in_group}, {SourceRef{"train.log", {}}}, cat, o);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].ranks == std::set<int>{5});
    CHECK(d.incidents[0].hosts == std::set<std::string>{"node-017"});
    REQUIRE(d.incidents[0].first.ctx.host);
    CHECK(d.incidents[0].first.ctx.host->value == "node-017");
    CHECK(d.incidents[0].first.ctx.host->origin == Origin::option);
  }
}

// --- fold ---

namespace {

// NCCL's CUDA error 700 with NVLS in use: the anchor, and a supporting
// signal (NCCL's NVLS init line) that never raises the entry alone.
json nvls_700(const std::string& id, bool required) {
  auto e = entry(id, "cause", 80);
  e["signals"] = json::array({json{{"id", "cuda-700"}, {"pattern", "NCCL WARN Cuda failure 700"}},
                              json{{"id", "nvls-in-use"},
                                   {"pattern", "NCCL INFO NVLS comm"},
                                   {"anchor", false},
                                   {"if_missing", "NCCL's NVLS init lines (NCCL_DEBUG=INFO)"}}});
  if (required) {
    e["requires"] = json::array({"nvls-in-use"});
  }
  return e;
}

Hit nvls_line(const Catalog& cat, const std::string& id) {
  return of_signal(
      said(at_second(hit(cat, id, 0, 27, 2024, 11, 29, 17, 58, 3), 11),
           "[rank3]:[2024-11-29 17:58:11] node-017:2339:2380 [3] NCCL INFO NVLS comm 0x5586d3c0 headRank 3 "
           "nHeads 8 buffSize 4194304 memSize 2097152 nvlsPerRankSize 301989888 nvlsTotalSize 2415919104"),
      1);
}

Hit cuda_700_line(const Catalog& cat, const std::string& id) {
  return said(at_second(hit(cat, id, 0, 41, 2024, 11, 29, 17, 59, 3), 58), k_nccl_700);
}

} // namespace

TEST_CASE("correlate pass fold: a supporting signal never raises its entry, beside an anchor it adds evidence",
          "[correlate][passes][fold]") {
  const auto cat = make_catalog({nvls_700("t.nvls", false)});
  SECTION("supporting alone") {
    const auto d = denpex::correlate::correlate({nvls_line(cat, "t.nvls")}, {SourceRef{"train.log", {}}}, cat);
    CHECK(d.incidents.empty());
    CHECK(d.unexplained.empty());
  }
  SECTION("with its anchor") {
    const auto d = denpex::correlate::correlate({nvls_line(cat, "t.nvls"), cuda_700_line(cat, "t.nvls")},
                                                {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    const auto& inc = d.incidents[0];
    CHECK(inc.first.line_no == 41); // the anchor says where and when, though the support came first
    CHECK(inc.count == 1);
    REQUIRE(inc.signals.size() == 2);
    CHECK(inc.signals[0].count == 1);
    CHECK(inc.signals[1].count == 1);
    REQUIRE(inc.signals[1].first);
    CHECK(inc.signals[1].first->line_no == 27);
  }
}

TEST_CASE("correlate pass fold: an entry that requires other evidence is raised only with it",
          "[correlate][passes][fold]") {
  const auto cat = make_catalog({nvls_700("t.nvls", true)});
  SECTION("the anchor without the required evidence") {
    const auto d = denpex::correlate::correlate({cuda_700_line(cat, "t.nvls")}, {SourceRef{"train.log", {}}}, cat);
    CHECK(d.incidents.empty());
  }
  SECTION("with it") {
    const auto d = denpex::correlate::correlate({cuda_700_line(cat, "t.nvls"), nvls_line(cat, "t.nvls")},
                                                {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].initiating);
  }
}

TEST_CASE("correlate pass fold: a line without a bus id joins the one GPU's incident of its entry",
          "[correlate][passes][fold]") {
  auto xid79 = entry("t.xid79", "cause", 90);
  xid79["signals"] = json::array({json{{"id", "xid-line"}, {"pattern", "Xid .*: 79"}},
                                  json{{"id", "fallen-off-bus-probe"}, {"pattern", "fallen off the bus and is not"}}});
  const auto cat = make_catalog({xid79});
  const auto on_3b =
      said(at_second(hit(cat, "t.xid79", 0, 5, 2024, 11, 29, 17, 59, std::nullopt, "0000:3b:00"), 58), k_xid79);
  const auto busless = of_signal(said(at_second(hit(cat, "t.xid79", 0, 6, 2024, 11, 29, 17, 59), 58),
                                      "               NVRM: fallen off the bus and is not responding to commands."),
                                 1);
  SECTION("one GPU") {
    const auto d = denpex::correlate::correlate({on_3b, busless}, {SourceRef{"dmesg", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].pci == "0000:3b:00");
    CHECK(d.incidents[0].count == 2);
    CHECK(d.incidents[0].signals[1].count == 1);
  }
  SECTION("two GPUs: which one it was about is unknown, so it stays apart") {
    const auto on_86 = said(at_second(hit(cat, "t.xid79", 0, 7, 2024, 11, 29, 17, 59, std::nullopt, "0000:86:00"), 58),
                            "[Fri Nov 29 17:59:58 2024] NVRM: Xid (PCI:0000:86:00): 79, pid='<unknown>', "
                            "name=<unknown>, GPU has fallen off the bus.");
    const auto d = denpex::correlate::correlate({on_3b, busless, on_86}, {SourceRef{"dmesg", {}}}, cat);
    CHECK(d.incidents.size() == 3);
  }
}

TEST_CASE("correlate pass fold: a report on the line of a raised cause folds into it", "[correlate][passes][fold]") {
  const auto cat = make_catalog({entry("t.cuda-700", "cause", 70), entry("t.watchdog-exc", "symptom", 20)});
  const auto report = said(at_second(hit(cat, "t.watchdog-exc", 0, 43, 2024, 11, 29, 17, 59, 3), 58), k_watchdog_exc);
  SECTION("alone, the report heads the run") {
    const auto d = denpex::correlate::correlate({report}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(id_of(cat, d.incidents[0]) == "t.watchdog-exc");
  }
  SECTION("with a cause on the same line: one incident, nothing beside it") {
    const auto cause = said(at_second(hit(cat, "t.cuda-700", 0, 43, 2024, 11, 29, 17, 59, 3), 58), k_watchdog_exc);
    const auto d = denpex::correlate::correlate({report, cause}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(id_of(cat, d.incidents[0]) == "t.cuda-700");
    CHECK(d.incidents[0].collateral.empty());
    CHECK(d.unexplained.empty());
  }
}

TEST_CASE("correlate pass fold: a report that names a missing earlier Xid seeds an inferred incident",
          "[correlate][passes][fold]") {
  const auto cat = make_catalog({entry("xid.149", "cause", 90, {"xid.45"}), entry("xid.45", "symptom", 20)});
  const auto report = with_capture(
      said(at_second(hit(cat, "xid.45", 0, 8, 2024, 11, 29, 18, 0, std::nullopt, "0000:dc:00"), 1),
           "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149"),
      "caused_by", "149");
  SECTION("the named Xid's line is missing") {
    const auto d = denpex::correlate::correlate({report}, {SourceRef{"dmesg", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    const auto& inc = d.incidents[0];
    CHECK(id_of(cat, inc) == "xid.149");
    CHECK(inc.inferred_xid == "149");
    CHECK_FALSE(inc.inferred_from_tool);
    CHECK(inc.initiating);
    const auto it = std::find_if(inc.missing.begin(), inc.missing.end(),
                                 [](const MissingFact& m) { return m.kind == MissingFact::Kind::xid_line; });
    REQUIRE(it != inc.missing.end());
    CHECK(it->xid == "149");
    CHECK(it->gpu == "0000:dc:00");
    REQUIRE(inc.collateral.size() == 1);
    CHECK(cat.at(inc.collateral[0].signature).id == "xid.45");
  }
  SECTION("the named Xid's line is there: nothing is inferred") {
    const auto own = said(at_second(hit(cat, "xid.149", 0, 7, 2024, 11, 29, 18, 0, std::nullopt, "0000:dc:00"), 0),
                          "NVRM: Xid (PCI:0000:dc:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000 "
                          "0x00000000 0x00000000 0x00000000 0x00000000)");
    const auto d = denpex::correlate::correlate({own, report}, {SourceRef{"dmesg", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].inferred_xid.empty());
    CHECK_FALSE(has_missing(d.incidents[0], MissingFact::Kind::xid_line));
  }
}

// --- episodes ---

TEST_CASE("correlate pass episodes: training progress starts a new episode, the episode names the progress line",
          "[correlate][passes][episodes]") {
  const auto cat = make_catalog({entry("t.sxid", "cause", 72), entry("t.xid79", "cause", 90)});
  // 18 minutes apart: no quiet gap, only progress can split them.
  const std::vector<Hit> hits{
      said(at_second(hit(cat, "t.sxid", 0, 4, 2024, 11, 29, 5, 2), 11),
           "[Fri Nov 29 05:02:11 2024] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 22013, Non-fatal, Link 60 Minion "
           "Link DLREQ interrupt"),
      said(at_second(hit(cat, "t.xid79", 0, 7, 2024, 11, 29, 5, 20), 40),
           "[Fri Nov 29 05:20:40 2024] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
           "off the bus."),
  };
  const std::vector<SourceRef> sources{SourceRef{"node-000/dmesg.log", {}}, SourceRef{"node-000/train.log", {}}};
  SECTION("without progress: one episode, the earlier cause initiates") {
    const auto d = denpex::correlate::correlate(hits, sources, cat);
    CHECK(d.episodes.size() == 1);
    REQUIRE(d.initiating() != nullptr);
    CHECK(id_of(cat, *d.initiating()) == "t.sxid");
  }
  SECTION("with progress between them: two episodes") {
    const auto d = denpex::correlate::correlate(
        hits, sources, cat, {},
        {progress(1, 120, 5, 10, 0,
                  "[rank0]:2024-11-29 05:10:00,000 - INFO - train.py:212 - step 1240 | loss 2.5280 | lr 3.0e-04 | "
                  "tokens/s 412034")});
    REQUIRE(d.episodes.size() == 2);
    CHECK(d.episodes[0].started_by == Episode::Start::first);
    CHECK(d.episodes[1].started_by == Episode::Start::progress);
    CHECK(d.episodes[1].progress_source == 1);
    CHECK(d.episodes[1].progress_line == 120);
    CHECK(d.episodes[1].terminal);
    REQUIRE(d.initiating() != nullptr);
    CHECK(id_of(cat, *d.initiating()) == "t.xid79");
    CHECK(d.initiating()->episode == std::optional<std::size_t>{1});
    const auto* sxid = incident_of(d, cat, "t.sxid");
    REQUIRE(sxid != nullptr);
    REQUIRE(sxid->recovered);
    CHECK(sxid->recovered->line_no == 120);
    CHECK_FALSE(sxid->earlier_episode); // recovered says it; not both
  }
}

TEST_CASE("correlate pass episodes: progress within the margin after a cause is not recovery",
          "[correlate][passes][episodes]") {
  const auto cat = make_catalog({entry("t.xid79", "cause", 90)});
  const std::vector<Hit> hits{said(at_second(hit(cat, "t.xid79", 0, 7, 2024, 11, 29, 17, 59), 58), k_xid79)};
  // A rank still printing its step 30 s after the GPU fell off the bus.
  const std::vector<ProgressMark> marks{
      progress(1, 52, 18, 0, 28,
               "[rank0]:2024-11-29 18:00:28,185 INFO train.py:212 step 501 loss 2.3400 lr 3.0e-04 tokens/s 412337")};
  const std::vector<SourceRef> sources{SourceRef{"dmesg", {}}, SourceRef{"train.log", {}}};
  SECTION("default margin, 60 s") {
    const auto d = denpex::correlate::correlate(hits, sources, cat, {}, marks);
    REQUIRE(d.incidents.size() == 1);
    CHECK_FALSE(d.incidents[0].recovered);
    CHECK(d.incidents[0].initiating);
  }
  SECTION("a 10 s margin") {
    CorrelateOptions o;
    o.progress_margin_us = 10'000'000;
    const auto d = denpex::correlate::correlate(hits, sources, cat, o, marks);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].recovered);
    CHECK(d.initiating() == nullptr);
  }
}

// --- causality ---

TEST_CASE("correlate pass causality: one failure reported by two layers on the same ranks is one incident",
          "[correlate][passes][causality]") {
  const auto cat = make_catalog({entry("t.nccl-700", "cause", 70), entry("t.torch-cuda", "cause", 60)});
  const auto warn = said(at_second(hit(cat, "t.nccl-700", 0, 41, 2024, 11, 29, 17, 59, 3), 58), k_nccl_700);
  auto exc = said(at_second(hit(cat, "t.torch-cuda", 0, 43, 2024, 11, 29, 17, 59, 3), 58), k_watchdog_exc);
  SECTION("same rank, same second") {
    const auto d = denpex::correlate::correlate({warn, exc}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(id_of(cat, d.incidents[0]) == "t.nccl-700"); // the more specific entry keeps it
    REQUIRE(d.incidents[0].collateral.size() == 1);
    CHECK(cat.at(d.incidents[0].collateral[0].signature).id == "t.torch-cuda");
  }
  SECTION("another rank: two failures") {
    exc.ctx.rank = Field<int>{5, Origin::prefix};
    const auto d = denpex::correlate::correlate({warn, exc}, {SourceRef{"train.log", {}}}, cat);
    CHECK(d.incidents.size() == 2);
  }
  SECTION("a minute apart: two failures") {
    exc.ctx.time.wall.minute = 1;
    exc.ctx.time.wall.hour = 18;
    const auto d = denpex::correlate::correlate({warn, exc}, {SourceRef{"train.log", {}}}, cat);
    CHECK(d.incidents.size() == 2);
  }
}

TEST_CASE("correlate pass causality: a GPU fault explains only its own node's errors, a network fault its peers' too",
          "[correlate][passes][causality]") {
  const auto cat = make_catalog({entry("t.xid79", "cause", 90, {"t.cuda"}), entry("t.cuda", "cause", 60),
                                 with(entry("t.link-down", "cause", 85, {"t.ib-retry"}), "area", "network"),
                                 with(entry("t.ib-retry", "cause", 65), "area", "network")});
  const auto xid = on_host(said(at_second(hit(cat, "t.xid79", 0, 5, 2024, 11, 29, 17, 59), 58), k_xid79), "node-a");
  auto cuda = said(at_second(hit(cat, "t.cuda", 1, 9, 2024, 11, 29, 18, 0, 3), 3),
                   "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered");
  SECTION("GPU fault, same node") {
    const auto d = denpex::correlate::correlate({xid, on_host(cuda, "node-a")},
                                                {SourceRef{"dmesg", {}}, SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(id_of(cat, d.incidents[0]) == "t.xid79");
  }
  SECTION("GPU fault, another node") {
    const auto d = denpex::correlate::correlate({xid, on_host(cuda, "node-b")},
                                                {SourceRef{"dmesg", {}}, SourceRef{"train.log", {}}}, cat);
    CHECK(d.incidents.size() == 2);
  }
  SECTION("network fault, another node") {
    const auto link = on_host(said(at_second(hit(cat, "t.link-down", 0, 5, 2024, 11, 29, 21, 47), 30),
                                   "Nov 29 21:47:30 node-023 kernel: mlx5_core 0000:c1:00.0 mlx5_3: Port: 1 Link DOWN"),
                              "node-023");
    const auto retry = on_host(
        said(
            at_second(hit(cat, "t.ib-retry", 1, 9, 2024, 11, 29, 21, 47, 5), 52),
            "[2024-11-29 21:47:52] node-017:91234:91301 [5] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
            "from peer 10.2.4.23<40128> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) reqSize=0 "
            "vendor_err=129"),
        "node-017");
    const auto d = denpex::correlate::correlate({link, retry},
                                                {SourceRef{"node-023.log", {}}, SourceRef{"node-017.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(id_of(cat, d.incidents[0]) == "t.link-down");
  }
}

TEST_CASE("correlate pass causality: a line that names its cause joins that Xid's incident on the same GPU",
          "[correlate][passes][causality]") {
  // A cause entry whose line names an earlier Xid (no `explains` between them).
  const auto cat = make_catalog({entry("xid.149", "cause", 90), entry("xid.45", "cause", 40)});
  const auto x149 =
      said(at_second(hit(cat, "xid.149", 0, 7, 2024, 11, 29, 18, 0, std::nullopt, "0000:dc:00"), 0),
           "NVRM: Xid (PCI:0000:dc:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000 0x00000000 "
           "0x00000000 0x00000000 0x00000000)");
  auto x45 = with_capture(
      said(at_second(hit(cat, "xid.45", 0, 8, 2024, 11, 29, 18, 0, std::nullopt, "0000:dc:00"), 1),
           "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149"),
      "caused_by", "149");
  SECTION("same GPU") {
    const auto d = denpex::correlate::correlate({x149, x45}, {SourceRef{"dmesg", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(id_of(cat, d.incidents[0]) == "xid.149");
    REQUIRE(d.incidents[0].collateral.size() == 1);
    CHECK(cat.at(d.incidents[0].collateral[0].signature).id == "xid.45");
  }
  SECTION("another GPU") {
    x45.ctx.pci->value = "0000:ed:00";
    const auto d = denpex::correlate::correlate({x149, x45}, {SourceRef{"dmesg", {}}}, cat);
    CHECK(d.incidents.size() == 2);
  }
}

TEST_CASE("correlate pass causality: `explains` never reaches across episodes", "[correlate][passes][causality]") {
  const auto cat = make_catalog({entry("t.xid79", "cause", 90, {"t.cuda"}), entry("t.cuda", "cause", 60)});
  const auto xid = said(at_second(hit(cat, "t.xid79", 0, 5, 2024, 11, 29, 5, 0), 0),
                        "[Fri Nov 29 05:00:00 2024] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, "
                        "GPU has fallen off the bus.");
  auto cuda = said(at_second(hit(cat, "t.cuda", 1, 9, 2024, 11, 29, 5, 5, 3), 0),
                   "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered");
  const std::vector<SourceRef> sources{SourceRef{"dmesg", {}}, SourceRef{"train.log", {}}};
  SECTION("five minutes later: explained") {
    const auto d = denpex::correlate::correlate({xid, cuda}, sources, cat);
    CHECK(d.incidents.size() == 1);
  }
  SECTION("74 minutes later, after a quiet gap: its own failure") {
    cuda.ctx.time.wall.hour = 6;
    cuda.ctx.time.wall.minute = 14;
    const auto d = denpex::correlate::correlate({xid, cuda}, sources, cat);
    REQUIRE(d.incidents.size() == 2);
    REQUIRE(d.initiating() != nullptr);
    CHECK(id_of(cat, *d.initiating()) == "t.cuda");
    CHECK(incident_of(d, cat, "t.xid79")->earlier_episode);
  }
}

// --- choose ---

TEST_CASE("correlate pass choose: without stamps, line order in one file decides, across files, priority",
          "[correlate][passes][choose]") {
  const auto cat = make_catalog({entry("t.valueerror", "cause", 50), entry("t.oom", "cause", 80)});
  const auto first = unstamped(
      said(hit(cat, "t.valueerror", 0, 10, 0, 0, 0, 0, 0), "ValueError: too many values to unpack (expected 2)"));
  auto later = unstamped(said(hit(cat, "t.oom", 0, 20, 0, 0, 0, 0, 0),
                              "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has a "
                              "total capacity of 79.10 GiB"));
  SECTION("one file: earliest-in-file") {
    const auto d = denpex::correlate::correlate({later, first}, {SourceRef{"train.err", {}}}, cat);
    REQUIRE(d.initiating() != nullptr);
    CHECK(id_of(cat, *d.initiating()) == "t.valueerror");
    CHECK(d.initiating()->decision->rule == Rule::earliest_in_file);
    CHECK(d.initiating()->decision->candidates == 2);
    CHECK(d.initiating()->confidence == Confidence::medium);
  }
  SECTION("two files: priority-across-clocks") {
    later.source = 1;
    later.line_no = 3;
    const auto d = denpex::correlate::correlate({first, later}, {SourceRef{"a.err", {}}, SourceRef{"b.err", {}}}, cat);
    REQUIRE(d.initiating() != nullptr);
    CHECK(id_of(cat, *d.initiating()) == "t.oom");
    CHECK(d.initiating()->decision->rule == Rule::priority_across_clocks);
  }
}

TEST_CASE("correlate pass choose: wrappers alone initiate as only-generic, with low confidence",
          "[correlate][passes][choose]") {
  const auto cat = make_catalog({entry("t.nccl-unhandled", "cause", 25), entry("t.cuda-generic", "cause", 20)});
  const auto d = denpex::correlate::correlate(
      {said(at_second(hit(cat, "t.cuda-generic", 0, 9, 2024, 11, 29, 18, 0, 2), 5),
            "[rank2]: RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda "
            "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5"),
       said(at_second(hit(cat, "t.nccl-unhandled", 0, 4, 2024, 11, 29, 17, 59, 2), 58),
            "bm-h100-02: Test NCCL failure common.cu:1097 'unhandled cuda error (run with NCCL_DEBUG=INFO for "
            "details)'")},
      {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.initiating() != nullptr);
  CHECK(id_of(cat, *d.initiating()) == "t.nccl-unhandled"); // the earlier one
  CHECK(d.initiating()->decision->rule == Rule::only_generic);
  CHECK(d.initiating()->confidence == Confidence::low);
}

TEST_CASE("correlate pass choose: one cause with its corroboration is high confidence, without it medium",
          "[correlate][passes][choose]") {
  const auto cat = make_catalog({nvls_700("t.nvls", false)});
  auto d = denpex::correlate::correlate({cuda_700_line(cat, "t.nvls"), nvls_line(cat, "t.nvls")},
                                        {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.initiating() != nullptr);
  CHECK(d.initiating()->decision->rule == Rule::only_cause);
  CHECK(d.initiating()->confidence == Confidence::high);
  d = denpex::correlate::correlate({cuda_700_line(cat, "t.nvls")}, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.initiating() != nullptr);
  CHECK(d.initiating()->confidence == Confidence::medium);
}

// --- attach ---

TEST_CASE("correlate pass attach: context joins the cause it refines, a report nothing explains stays unexplained",
          "[correlate][passes][attach]") {
  const auto cat = make_catalog({entry("t.nvls-700", "cause", 80),
                                 with(entry("t.nvls-available", "context", 5), "refines", json::array({"t.nvls-700"})),
                                 entry("t.sigterm", "symptom", 15)});
  std::vector<Hit> hits;
  for (int r = 0; r < 2; ++r) {
    hits.push_back(said(
        at_second(hit(cat, "t.nvls-available", 0, 20 + static_cast<std::uint64_t>(r), 2025, 5, 10, 23, 9, r), 40),
        "[2025-05-10 23:09:40] bm-h100-02:630335:630407 [" + std::to_string(r) +
            "] NCCL INFO NVLS multicast support is available on dev " + std::to_string(r) + " (NVLS_NCHANNELS 16)"));
  }
  hits.push_back(said(at_second(hit(cat, "t.nvls-700", 0, 30, 2025, 5, 10, 23, 9, 2), 41),
                      "[2025-05-10 23:09:41] bm-h100-02:630335:630409 [2] transport/nvls.cc:254 NCCL WARN Cuda failure "
                      "1 'invalid argument'"));
  hits.push_back(
      said(at_second(hit(cat, "t.sigterm", 1, 80, 2025, 5, 10, 23, 9), 50),
           "W0510 23:09:50.422000 2301 torch/distributed/elastic/multiprocessing/api.py:897] Sending process "
           "630336 closing signal SIGTERM"));
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}, SourceRef{"torchrun.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  REQUIRE(d.incidents[0].context.size() == 1);
  CHECK(cat.at(d.incidents[0].context[0].signature).id == "t.nvls-available");
  CHECK(d.incidents[0].context[0].count == 2);
  CHECK(d.incidents[0].context[0].ranks == std::set<int>{0, 1});
  CHECK(d.incidents[0].collateral.empty());
  REQUIRE(d.unexplained.size() == 1);
  CHECK(cat.at(d.unexplained[0].signature).id == "t.sigterm");
}

TEST_CASE("correlate pass attach: a generic report joins the most recent incident before it",
          "[correlate][passes][attach]") {
  const auto cat = make_catalog({entry("t.oom", "cause", 60), entry("t.ib-retry", "cause", 65),
                                 entry("t.child-failed", "symptom", 10, {}, true)});
  const std::vector<Hit> hits{
      said(at_second(hit(cat, "t.oom", 0, 3, 2024, 11, 29, 17, 50, 1), 2),
           "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 1 has a total "
           "capacity "
           "of 79.10 GiB"),
      said(at_second(hit(cat, "t.ib-retry", 0, 8, 2024, 11, 29, 17, 55, 5), 52),
           "[2024-11-29 17:55:52] node-017:91234:91301 [5] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
           "from peer 10.2.4.23<40128> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) reqSize=0 "
           "vendor_err=129"),
      said(at_second(hit(cat, "t.child-failed", 1, 40, 2024, 11, 29, 18, 10), 3),
           "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "),
  };
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}, SourceRef{"torchrun.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 2);
  CHECK(id_of(cat, d.incidents[0]) == "t.oom"); // the earliest initiates...
  CHECK(d.incidents[0].collateral.empty());
  REQUIRE(d.incidents[1].collateral.size() == 1); // ...the report follows the latest before it
  CHECK(cat.at(d.incidents[1].collateral[0].signature).id == "t.child-failed");
  CHECK(d.unexplained.empty());
}

TEST_CASE("correlate pass attach: a report on another GPU is not collateral of a fault on this one",
          "[correlate][passes][attach]") {
  const auto cat = make_catalog({entry("t.xid79", "cause", 90, {"t.gpu-lost"}), entry("t.gpu-lost", "symptom", 20)});
  const auto xid =
      said(at_second(hit(cat, "t.xid79", 0, 5, 2024, 11, 29, 17, 59, std::nullopt, "0000:3b:00"), 58), k_xid79);
  auto lost = said(at_second(hit(cat, "t.gpu-lost", 0, 6, 2024, 11, 29, 17, 59, std::nullopt, "0000:3b:00"), 58),
                   "[Fri Nov 29 17:59:58 2024] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.");
  SECTION("same GPU") {
    const auto d = denpex::correlate::correlate({xid, lost}, {SourceRef{"dmesg", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].collateral.size() == 1);
    CHECK(d.unexplained.empty());
  }
  SECTION("another GPU") {
    lost.ctx.pci->value = "0000:86:00";
    lost.text = "[Fri Nov 29 17:59:58 2024] NVRM: GPU 0000:86:00.0: GPU has fallen off the bus.";
    const auto d = denpex::correlate::correlate({xid, lost}, {SourceRef{"dmesg", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].collateral.empty());
    CHECK(d.unexplained.size() == 1);
  }
}

TEST_CASE("correlate pass attach: a stampless report just above an incident's line joins it",
          "[correlate][passes][attach]") {
  const auto cat =
      make_catalog({entry("t.c10-error", "cause", 60, {"t.terminate"}), entry("t.terminate", "symptom", 20)});
  // "terminate called ..." carries no stamp: it borrowed one from minutes before.
  auto terminate = borrowed(said(at_second(hit(cat, "t.terminate", 0, 44, 2024, 11, 29, 17, 50, 3), 0),
                                 "[rank3]:terminate called after throwing an instance of 'c10::Error'"));
  const auto what = said(at_second(hit(cat, "t.c10-error", 0, 45, 2024, 11, 29, 17, 59, 3), 58),
                         "[rank3]:  what():  owning_ptr == NullType::singleton() || owning_ptr->refcount_.load() == 0 "
                         "INTERNAL ASSERT FAILED at /pytorch/c10/util/intrusive_ptr.h:350");
  SECTION("the line above") {
    const auto d = denpex::correlate::correlate({terminate, what}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].collateral.size() == 1);
  }
  SECTION("far above: printed before the failure") {
    terminate.line_no = terminate.last_line_no = 20;
    const auto d = denpex::correlate::correlate({terminate, what}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].collateral.empty());
    CHECK(d.unexplained.size() == 1);
  }
}

// --- missing facts ---

TEST_CASE("correlate pass missing: a signal with an if_missing text that did not hit is asked for",
          "[correlate][passes][missing]") {
  const auto cat = make_catalog({nvls_700("t.nvls", false)});
  auto d = denpex::correlate::correlate({cuda_700_line(cat, "t.nvls")}, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  REQUIRE(d.incidents[0].missing.size() == 1);
  CHECK(d.incidents[0].missing[0].kind == MissingFact::Kind::signal);
  CHECK(d.incidents[0].missing[0].signal == 1);
  d = denpex::correlate::correlate({cuda_700_line(cat, "t.nvls"), nvls_line(cat, "t.nvls")},
                                   {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(d.incidents[0].missing.empty());
}

TEST_CASE("correlate pass missing: an exception without its traceback asks for it", "[correlate][passes][missing]") {
  auto exc = entry("t.keyerror", "cause", 50);
  exc["signals"] = json::array({json{{"id", "s"}, {"pattern", "KeyError: "}, {"lookback", "python-traceback"}}});
  const auto cat = make_catalog({exc});
  auto h = said(at_second(hit(cat, "t.keyerror", 0, 18, 2024, 11, 29, 18, 0, 2), 0),
                "[rank2]: KeyError: 'model.layers.0.weight'");
  auto d = denpex::correlate::correlate({h}, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(has_missing(d.incidents[0], MissingFact::Kind::traceback));
  auto tb = std::make_shared<denpex::context::Traceback>();
  tb->frames = {{"/workspace/train.py", 231, "<module>"}};
  tb->frame_count = 1;
  h.traceback = tb;
  d = denpex::correlate::correlate({h}, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK_FALSE(has_missing(d.incidents[0], MissingFact::Kind::traceback));
}

TEST_CASE("correlate pass missing: an earlier Xid the catalog has no entry for is named",
          "[correlate][passes][missing]") {
  const auto cat = make_catalog({entry("xid.45", "cause", 40)});
  const auto x45 = with_capture(
      said(at_second(hit(cat, "xid.45", 0, 8, 2024, 11, 29, 18, 0, std::nullopt, "0000:ed:00"), 1),
           "kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by previous Xid 145"),
      "caused_by", "145");
  const auto d = denpex::correlate::correlate({x45}, {SourceRef{"dmesg", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  CHECK(d.incidents[0].caused_by == "145");
  const auto it = std::find_if(d.incidents[0].missing.begin(), d.incidents[0].missing.end(),
                               [](const MissingFact& m) { return m.kind == MissingFact::Kind::named_xid; });
  REQUIRE(it != d.incidents[0].missing.end());
  CHECK(it->xid == "145");
}

// --- symptoms only ---

TEST_CASE("correlate pass symptoms_only: ranks at one SeqNum with different OpTypes are a collective mismatch",
          "[correlate][passes][symptoms_only]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20)});
  std::vector<Hit> hits;
  for (int r = 0; r < 7; ++r) {
    hits.push_back(timeout_of(cat, "t.timeout", r, 12, "ALLREDUCE"));
  }
  hits.push_back(timeout_of(cat, "t.timeout", 7, 12, "BROADCAST"));
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.inference);
  CHECK(d.inference->kind == Inference::Kind::collective_mismatch);
  CHECK(d.inference->mismatches ==
        std::vector<std::string>{"SeqNum 12: ALLREDUCE on rank(s) 0-6, BROADCAST on rank(s) 7"});
  CHECK(d.inference->op.empty()); // two OpTypes: no one collective hung
  CHECK(d.inference->at_max_seq == 8);
}

TEST_CASE("correlate pass symptoms_only: a rank at a lower SeqNum lags, the hung collective is named",
          "[correlate][passes][symptoms_only]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20)});
  std::vector<Hit> hits;
  for (int r = 0; r < 8; ++r) {
    hits.push_back(timeout_of(cat, "t.timeout", r, r == 2 ? 4820 : 4821, "ALLREDUCE"));
  }
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.inference);
  CHECK(d.inference->kind == Inference::Kind::lagging_ranks);
  CHECK(d.inference->lagging_ranks == std::vector<int>{2});
  CHECK(d.inference->missing_ranks.empty());
  CHECK(d.inference->max_seq == 4821);
  CHECK(d.inference->op == "ALLREDUCE");
  CHECK(d.inference->timeout_ms == 600000);
  CHECK(d.inference->at_max_seq == 7);
  CHECK_FALSE(d.inference->first_collective);
}

TEST_CASE("correlate pass symptoms_only: every rank stuck in the first collective, the transport settings are said",
          "[correlate][passes][symptoms_only]") {
  const auto env = make_catalog({entry("t.timeout", "symptom", 20), entry("nccl.env-setting", "context", 1)});
  std::vector<Hit> hits;
  for (int r = 0; r < 4; ++r) {
    hits.push_back(timeout_of(env, "t.timeout", r, 1, "ALLGATHER", 4));
  }
  auto setting = [&](std::uint64_t line, const std::string& text,
                     std::vector<std::pair<std::string, std::string>> caps) {
    auto h = said(hit(env, "nccl.env-setting", 0, line, 2024, 11, 29, 17, 58), text);
    h.captures = std::move(caps);
    return h;
  };
  hits.push_back(setting(3, "node-017:2336:2336 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0",
                         {{"setting", "NCCL_SOCKET_IFNAME"}, {"value", "eth0"}}));
  hits.push_back(setting(4, "node-017:2337:2337 [1] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0",
                         {{"setting", "NCCL_SOCKET_IFNAME"}, {"value", "eth0"}})); // said once
  hits.push_back(setting(5, "node-017:2336:2336 [0] NCCL INFO NCCL_DEBUG set by environment to INFO",
                         {{"setting", "NCCL_DEBUG"}, {"value", "INFO"}})); // not a transport setting
  hits.push_back(setting(6, "node-017:2336:2336 [0] NCCL INFO Using network IB", {{"network", "IB"}}));
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, env);
  REQUIRE(d.inference);
  CHECK(d.inference->kind == Inference::Kind::all_same);
  CHECK(d.inference->first_collective);
  CHECK(d.inference->world_size == 4);
  CHECK(d.inference->world_size_from_init);
  CHECK(d.inference->transport == std::vector<std::string>{"NCCL_SOCKET_IFNAME=eth0", "network IB"});
  CHECK(d.inference->nccl_info);
}

TEST_CASE("correlate pass symptoms_only: without NCCL's world size, the highest rank seen guesses it",
          "[correlate][passes][symptoms_only]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20)});
  const auto d = denpex::correlate::correlate({timeout_of(cat, "t.timeout", 0, 88, "ALLREDUCE", std::nullopt),
                                               timeout_of(cat, "t.timeout", 1, 88, "ALLREDUCE", std::nullopt),
                                               timeout_of(cat, "t.timeout", 3, 88, "ALLREDUCE", std::nullopt)},
                                              {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.inference);
  CHECK(d.inference->kind == Inference::Kind::missing_partial);
  CHECK(d.inference->world_size == 4);
  CHECK_FALSE(d.inference->world_size_from_init);
  CHECK(d.inference->missing_ranks == std::vector<int>{2});
  CHECK_FALSE(d.inference->nccl_info);
}

TEST_CASE("correlate pass symptoms_only: ranks with no line at all are absent, not missing, --node only its own",
          "[correlate][passes][symptoms_only]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20), entry("t.init", "context", 1)});
  std::vector<Hit> hits;
  for (int r = 0; r < 4; ++r) {
    hits.push_back(timeout_of(cat, "t.timeout", r, 4821, "ALLREDUCE", 8));
  }
  SECTION("no line of ranks 4-7") {
    const auto d = denpex::correlate::correlate(hits, {SourceRef{"node-a/train.log", {}}}, cat);
    REQUIRE(d.inference);
    CHECK(d.inference->kind == Inference::Kind::absent_ranks);
    CHECK(d.inference->absent_ranks == std::vector<int>{4, 5, 6, 7});
  }
  SECTION("rank 5 printed its init line and never timed out") {
    hits.push_back(said(hit(cat, "t.init", 0, 12, 2024, 11, 29, 17, 58, 5),
                        "[rank5]:[2024-11-29 17:58:10] node-b:2341:2382 [5] NCCL INFO comm 0x5586f3c0 rank 5 nRanks 8 "
                        "nNodes 2 localRanks 4 localRank 1 MNNVL 0"));
    const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.inference);
    CHECK(d.inference->kind == Inference::Kind::missing_ranks);
    CHECK(d.inference->missing_ranks == std::vector<int>{5});
    CHECK(d.inference->absent_ranks == std::vector<int>{4, 6, 7});
  }
  SECTION("--node: the other nodes' ranks are not this node's to miss") {
    CorrelateOptions o;
    o.node = "node-a";
    const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat, o);
    REQUIRE(d.inference);
    CHECK(d.inference->missing_ranks.empty());
    CHECK(d.inference->absent_ranks.empty());
    CHECK(d.inference->kind == Inference::Kind::all_same);
  }
}

TEST_CASE("correlate pass symptoms_only: PyTorch's desync report names the lagging ranks",
          "[correlate][passes][symptoms_only]") {
  const auto cat =
      make_catalog({entry("t.timeout", "symptom", 20), entry("pytorch.nccl.desync-report", "symptom", 25)});
  std::vector<Hit> hits;
  for (int r : {0, 2, 3, 4, 6, 7}) {
    hits.push_back(timeout_of(cat, "t.timeout", r, 4821, "ALLREDUCE"));
  }
  hits.push_back(with_capture(said(hit(cat, "pytorch.nccl.desync-report", 0, 140, 2024, 11, 29, 18, 10, 0),
                                   "[rank0]:\t - To our best knowledge, ranks [1, 5] are the lagging ranks that caused "
                                   "this timeout. They never joined any collectives"),
                              "lagging", "1, 5"));
  const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.inference);
  CHECK(d.inference->kind == Inference::Kind::desync_report);
  CHECK(d.inference->lagging_ranks == std::vector<int>{1, 5});
  CHECK(d.inference->desync_said == "never joined any collective of the group");
  CHECK(d.inference->desync_line == 140);
  CHECK(d.inference->missing_ranks.empty()); // the report's analysis decides
}

TEST_CASE("correlate pass symptoms_only: the timeouts are read only when no cause was found",
          "[correlate][passes][symptoms_only]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20), entry("t.xid79", "cause", 90, {"t.timeout"})});
  std::vector<Hit> hits{timeout_of(cat, "t.timeout", 0, 4821, "ALLREDUCE")};
  const std::vector<SourceRef> sources{SourceRef{"train.log", {}}, SourceRef{"dmesg", {}}};
  auto d = denpex::correlate::correlate(hits, sources, cat);
  REQUIRE(d.inference);
  CHECK(d.inference->reporting_ranks == std::vector<int>{0});
  hits.push_back(said(at_second(hit(cat, "t.xid79", 1, 5, 2024, 11, 29, 17, 59), 58), k_xid79));
  d = denpex::correlate::correlate(hits, sources, cat);
  CHECK_FALSE(d.inference);
}

// --- fallback ---

TEST_CASE("correlate pass fallback: a catalogued report heads the run before an earlier generic one, warnings never do",
          "[correlate][passes][fallback]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20), entry("t.child-failed", "symptom", 10, {}, true),
                                 with(entry("t.port-error", "symptom", 15), "severity", "warning")});
  const auto warn = said(at_second(hit(cat, "t.port-error", 0, 10, 2024, 11, 29, 17, 0), 0),
                         "[2024-11-29 17:00:00] host-a:393849:395082 [0] transport/net_ib.cc:253 NCCL WARN NET/IB : "
                         "mlx5_3:1 Got non-fatal async event: port error(10)");
  const auto child = said(at_second(hit(cat, "t.child-failed", 1, 40, 2024, 11, 29, 17, 55), 3),
                          "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ");
  const auto timeout = timeout_of(cat, "t.timeout", 0, 4821, "ALLREDUCE");
  const std::vector<SourceRef> sources{SourceRef{"train.log", {}}, SourceRef{"torchrun.log", {}}};
  SECTION("all three") {
    const auto d = denpex::correlate::correlate({warn, child, timeout}, sources, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(id_of(cat, d.incidents[0]) == "t.timeout");
    CHECK(d.incidents[0].decision->rule == Rule::upstream_symptom);
    CHECK(d.incidents[0].confidence == Confidence::low);
    CHECK(d.unexplained.size() == 2); // the head left them
  }
  SECTION("the wrapper, when nothing else reported") {
    const auto d = denpex::correlate::correlate({warn, child}, sources, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(id_of(cat, d.incidents[0]) == "t.child-failed");
  }
  SECTION("a warning alone heads nothing") {
    const auto d = denpex::correlate::correlate({warn}, sources, cat);
    CHECK(d.incidents.empty());
    CHECK(d.unexplained.size() == 1);
  }
}

TEST_CASE("correlate pass fallback: the head's missing evidence names the causes that explain it, most specific first",
          "[correlate][passes][fallback]") {
  const auto cat = make_catalog({entry("t.timeout", "symptom", 20), entry("t.ib-link", "cause", 70, {"t.timeout"}),
                                 entry("t.xid79", "cause", 90, {"t.timeout"})});
  const auto d = denpex::correlate::correlate({timeout_of(cat, "t.timeout", 0, 4821, "ALLREDUCE")},
                                              {SourceRef{"train.log", {}}}, cat);
  REQUIRE(d.incidents.size() == 1);
  const auto it = std::find_if(d.incidents[0].missing.begin(), d.incidents[0].missing.end(),
                               [](const MissingFact& m) { return m.kind == MissingFact::Kind::cause_itself; });
  REQUIRE(it != d.incidents[0].missing.end());
  CHECK(it->causes == "t.xid79 (t.xid79); t.ib-link (t.ib-link)");
}

TEST_CASE("correlate pass fallback: a report training went on past is passed over, past every one, the head is "
          "marked recovered",
          "[correlate][passes][fallback]") {
  const auto cat = make_catalog({entry("t.bootstrap", "symptom", 20), entry("t.timeout", "symptom", 20)});
  const auto retry = said(at_second(hit(cat, "t.bootstrap", 0, 9, 2024, 11, 29, 17, 0, 0), 0),
                          "[rank0]:[2024-11-29 17:00:00] node-017:2336:2336 [0] misc/socket.cc:484 NCCL WARN "
                          "socketStartConnect: Connect to 10.1.7.18<43519> failed : Connection refused");
  const auto mark =
      progress(0, 300, 17, 30, 0, "[rank0]:2024-11-29 17:30:00,000 INFO train.py:212 step 900 loss 2.1000");
  SECTION("the later report heads") {
    const auto d = denpex::correlate::correlate({retry, timeout_of(cat, "t.timeout", 1, 4821, "ALLREDUCE")},
                                                {SourceRef{"train.log", {}}}, cat, {}, {mark});
    REQUIRE(d.incidents.size() == 1);
    CHECK(id_of(cat, d.incidents[0]) == "t.timeout");
    CHECK_FALSE(d.incidents[0].recovered);
  }
  SECTION("training went on past all of them") {
    const auto d = denpex::correlate::correlate({retry}, {SourceRef{"train.log", {}}}, cat, {}, {mark});
    REQUIRE(d.incidents.size() == 1);
    CHECK(id_of(cat, d.incidents[0]) == "t.bootstrap");
    REQUIRE(d.incidents[0].recovered);
    CHECK(d.incidents[0].recovered->line_no == 300);
  }
}

// --- who ---

TEST_CASE("correlate pass who: a head whose first line names no rank takes the one rank its other lines name",
          "[correlate][passes][who]") {
  const auto cat = make_catalog({entry("t.cuda", "cause", 60)});
  // eval33/01's shape: the exception printed without a prefix, then the
  // watchdog's own report of it with its rank.
  const auto bare = said(at_second(hit(cat, "t.cuda", 0, 30, 2024, 11, 29, 17, 59), 57),
                         "RuntimeError: CUDA error: an illegal memory access was encountered");
  const auto ranked = said(at_second(hit(cat, "t.cuda", 0, 36, 2024, 11, 29, 17, 59, 1), 58),
                           "[Rank 1] NCCL watchdog thread terminated with exception: CUDA error: an illegal memory "
                           "access was encountered");
  SECTION("one rank") {
    const auto d = denpex::correlate::correlate({bare, ranked}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.initiating() != nullptr);
    const auto& inc = *d.initiating();
    CHECK(inc.first.line_no == 30);
    REQUIRE(inc.first.ctx.rank);
    CHECK(inc.first.ctx.rank->value == 1);
    CHECK(inc.first.ctx.rank->origin == Origin::incident);
    REQUIRE(inc.rank_from);
    CHECK(inc.rank_from->line_no == 36);
  }
  SECTION("two ranks: nothing is guessed") {
    auto other = ranked;
    other.line_no = other.last_line_no = 37;
    other.ctx.rank->value = 2;
    const auto d = denpex::correlate::correlate({bare, ranked, other}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.initiating() != nullptr);
    CHECK_FALSE(d.initiating()->first.ctx.rank);
    CHECK_FALSE(d.initiating()->rank_from);
  }
}

TEST_CASE("correlate pass who: else the launcher's report of the first failed worker, unless it contradicts the line",
          "[correlate][passes][who]") {
  const auto cat =
      make_catalog({entry("t.cuda", "cause", 60), with(entry("t.worker-sigabrt", "symptom", 30), "tags",
                                                       json::array({"torchrun", "torchelastic", "launcher-report"}))});
  // glog's line names the worker's pid, not its rank.
  const auto line = with_pid(said(at_second(hit(cat, "t.cuda", 0, 42, 2024, 11, 29, 17, 59), 58),
                                  "[E1129 17:59:58.871342 2339 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1595] "
                                  "Process group watchdog thread terminated with exception: CUDA error: an illegal "
                                  "memory access was encountered"),
                             2339);
  auto record = [&](std::uint64_t at, int second, int rank, const std::string& pid) {
    auto h = said(at_second(hit(cat, "t.worker-sigabrt", 1, at, 2024, 11, 29, 18, 10, std::nullopt), second),
                  "  exitcode  : -6 (pid: " + pid + ")");
    h.ctx.rank = Field<int>{rank, Origin::body}; // "rank : 3 (local_rank: 3)" above it
    h.captures = {{"pid", pid}};
    return h;
  };
  const std::vector<SourceRef> sources{SourceRef{"rank3.log", {}}, SourceRef{"torchrun.log", {}}};
  SECTION("the earliest report") {
    const auto d =
        denpex::correlate::correlate({line, record(70, 4, 5, "2341"), record(60, 3, 3, "2339")}, sources, cat);
    REQUIRE(d.initiating() != nullptr);
    const auto& inc = *d.initiating();
    REQUIRE(inc.first.ctx.rank);
    CHECK(inc.first.ctx.rank->value == 3);
    CHECK(inc.first.ctx.rank->origin == Origin::launcher);
    REQUIRE(inc.rank_from);
    CHECK(inc.rank_from->source == 1);
    CHECK(inc.rank_from->line_no == 60);
    CHECK(inc.ranks == std::set<int>{3});
  }
  SECTION("a report about another pid says nothing about this line") {
    const auto d = denpex::correlate::correlate({line, record(60, 3, 3, "2340")}, sources, cat);
    REQUIRE(d.initiating() != nullptr);
    CHECK_FALSE(d.initiating()->first.ctx.rank);
    CHECK_FALSE(d.initiating()->rank_from);
  }
}

// --- stack ---

TEST_CASE("correlate pass stack: entries' tags name the stacks the logs show, in the catalog's order",
          "[correlate][passes][stack]") {
  const auto cat = make_catalog({with(entry("t.srun-exit", "cause", 31), "tags", json::array({"slurm", "exit-code"})),
                                 with(entry("t.elastic", "symptom", 30), "tags", json::array({"torchelastic"})),
                                 with(entry("t.pod", "context", 1), "tags", json::array({"k8s"})),
                                 with(entry("t.nccl", "cause", 60), "tags", json::array({"nccl", "cuda"}))});
  const std::vector<Hit> hits{
      said(hit(cat, "t.srun-exit", 0, 1, 2024, 11, 29, 18, 10),
           "srun: error: node-017: task 3: Exited with exit code 1"),
      said(hit(cat, "t.pod", 0, 2, 2024, 11, 29, 17, 0), "Successfully assigned default/trainer-0 to node-017"),
      said(hit(cat, "t.elastic", 0, 3, 2024, 11, 29, 18, 10),
           "E1129 18:10:03.512000 2301 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) "
           "local_rank: 3 (pid: 2339) of binary: /usr/bin/python3"),
  };
  auto d = denpex::correlate::correlate(hits, {SourceRef{"job.log", {}}}, cat);
  CHECK(d.stacks == std::vector<std::string>{"torchrun", "slurm", "kubernetes"});
  d = denpex::correlate::correlate(
      {said(at_second(hit(cat, "t.nccl", 0, 41, 2024, 11, 29, 17, 59, 3), 58), k_nccl_700)},
      {SourceRef{"train.log", {}}}, cat);
  CHECK(d.stacks.empty());
}

// --- gate ---

TEST_CASE("correlate pass gate: a warning-level cause counts with the severity of the report it explains",
          "[correlate][passes][gate]") {
  const auto cat = make_catalog({with(entry("t.port-error", "cause", 40, {"t.timeout"}), "severity", "warning"),
                                 entry("t.timeout", "symptom", 20)});
  const auto port =
      said(at_second(hit(cat, "t.port-error", 0, 1000, 2026, 2, 2, 12, 15), 56),
           "1000: [2026-02-02 12:15:56] host-a:393849:395082 [0] transport/net_ib.cc:253 NCCL WARN NET/IB "
           ": mlx5_3:1 Got non-fatal async event: port error(10)");
  const auto timeout = said(at_second(hit(cat, "t.timeout", 0, 5995, 2026, 2, 2, 12, 25, 5995), 57),
                            "5995: [rank5995]:[E202 12:25:57.436 ProcessGroupNCCL.cpp:697] Watchdog caught collective "
                            "operation timeout: WorkNCCL(SeqNum=126639, OpType=COALESCED, NumelIn=10, NumelOut=20, "
                            "Timeout(ms)=600000) ran for 600000 milliseconds before timing out.");
  SECTION("alone: a warning") {
    const auto d = denpex::correlate::correlate({port}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].gate_severity == Severity::warning);
    CHECK(d.gate == Severity::warning);
    CHECK_FALSE(denpex::correlate::fails_gate(d, Severity::error));
    CHECK(denpex::correlate::fails_gate(d, Severity::warning));
  }
  SECTION("a watchdog timeout followed: an error") {
    const auto d = denpex::correlate::correlate({port, timeout}, {SourceRef{"train.log", {}}}, cat);
    REQUIRE(d.incidents.size() == 1);
    REQUIRE(d.incidents[0].collateral.size() == 1);
    CHECK(d.incidents[0].counts_against_gate);
    CHECK(d.incidents[0].gate_severity == Severity::error);
    CHECK(denpex::correlate::fails_gate(d, Severity::error));
  }
}

TEST_CASE("correlate pass gate: what the run went on past does not count, a catalogued cause it recovered from does",
          "[correlate][passes][gate]") {
  auto exc = entry("t.exception", "cause", 34);
  exc["headline"] = "{type}: {message}";
  exc["signals"] = json::array({json{{"id", "s"}, {"pattern", "(?P<type>\\w+Error): (?P<message>.*)"}}});
  const auto cat = make_catalog({exc, with(entry("t.ecc", "cause", 70), "severity", "critical")});
  const auto mark =
      progress(0, 400, 19, 30, 0, "[rank0]:2024-11-29 19:30:00,000 INFO train.py:212 step 4000 loss 1.9000");
  SECTION("generic evidence training went on past") {
    auto h = said(at_second(hit(cat, "t.exception", 0, 10, 2024, 11, 29, 18, 0, 0), 0),
                  "[rank0]: ValueError: could not convert string to float: 'nan '");
    h.captures = {{"type", "ValueError"}, {"message", "could not convert string to float: 'nan '"}};
    const auto d = denpex::correlate::correlate({h}, {SourceRef{"train.log", {}}}, cat, {}, {mark});
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].recovered);
    CHECK_FALSE(d.incidents[0].counts_against_gate);
    CHECK_FALSE(d.gate);
  }
  SECTION("a catalogued cause training went on past") {
    const auto h =
        said(at_second(hit(cat, "t.ecc", 1, 3, 2024, 11, 29, 18, 0, std::nullopt, "0000:3b:00"), 0),
             "[Fri Nov 29 18:00:00 2024] NVRM: Xid (PCI:0000:3b:00): 48, pid='<unknown>', name=<unknown>, An "
             "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr "
             "0x7fffa8860 partition 7, subpartition 1.");
    const auto d =
        denpex::correlate::correlate({h}, {SourceRef{"train.log", {}}, SourceRef{"dmesg", {}}}, cat, {}, {mark});
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].recovered);
    CHECK(d.incidents[0].counts_against_gate);
    CHECK(d.gate == Severity::critical);
  }
}

TEST_CASE("correlate pass gate: reports nothing explains count with their own severity, unless the run went on past "
          "them all",
          "[correlate][passes][gate]") {
  const auto cat =
      make_catalog({entry("t.xid79", "cause", 90), with(entry("t.oom-kill", "symptom", 20), "severity", "critical"),
                    entry("t.bootstrap", "symptom", 20)});
  SECTION("an unexplained critical report") {
    const auto d = denpex::correlate::correlate(
        {said(at_second(hit(cat, "t.xid79", 0, 5, 2024, 11, 29, 17, 59), 58), k_xid79),
         said(at_second(hit(cat, "t.oom-kill", 0, 9, 2024, 11, 29, 18, 2), 11),
              "Nov 29 18:02:11 node-017 kernel: Out of memory: Killed process 88121 (python3) total-vm:1123456780kB, "
              "anon-rss:980123456kB, file-rss:0kB, shmem-rss:2048kB, UID:1000 pgtables:2200120kB oom_score_adj:0")},
        {SourceRef{"dmesg", {}}}, cat);
    REQUIRE(d.unexplained.size() == 1);
    CHECK(d.incidents[0].gate_severity == Severity::error);
    CHECK(d.gate == Severity::critical);
  }
  SECTION("symptoms only, and training went on past them") {
    const auto d = denpex::correlate::correlate(
        {said(at_second(hit(cat, "t.bootstrap", 0, 9, 2024, 11, 29, 17, 0, 0), 0),
              "[rank0]:[2024-11-29 17:00:00] node-017:2336:2336 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: "
              "Connect to 10.1.7.18<43519> failed : Connection refused")},
        {SourceRef{"train.log", {}}}, cat, {},
        {progress(0, 300, 17, 30, 0, "[rank0]:2024-11-29 17:30:00,000 INFO train.py:212 step 900 loss 2.1000")});
    REQUIRE(d.incidents.size() == 1);
    CHECK(d.incidents[0].recovered);
    CHECK_FALSE(d.incidents[0].counts_against_gate);
    CHECK_FALSE(d.gate);
  }
}

// --- starting points ---

namespace {

denpex::scan::ErrorLine error_line(std::uint32_t source, std::uint64_t line, int minute, int second, std::string text,
                                   std::optional<int> rank = {}) {
  denpex::scan::ErrorLine l;
  l.source = source;
  l.line_no = line;
  l.text = std::move(text);
  l.ctx.time.kind = ClockKind::wall;
  l.ctx.time.wall = WallTime{2024, 11, 29, 18, minute, second, 0, std::nullopt};
  if (rank) {
    l.ctx.rank = Field<int>{*rank, Origin::prefix};
  }
  return l;
}

} // namespace

TEST_CASE("correlate pass starting_points: with nothing found, the lines no entry named, by template, earliest first",
          "[correlate][passes][starting_points]") {
  const auto cat = make_catalog({entry("t.xid79", "cause", 90), entry("t.init", "context", 1)});
  const std::vector<denpex::scan::ErrorLine> lines{
      error_line(0, 30, 5, 0, "[rank3]: KeyError: 'shard_17'", 3),
      error_line(0, 31, 5, 1, "[rank2]: KeyError: 'shard_18'", 2),
      error_line(0, 12, 1, 0, "[rank0]: ERROR: dataset index is stale, rebuild it", 0),
      error_line(0, 7, 0, 0, "[rank0]: ERROR: matched by an entry"),
  };
  // Line 7 is a hit (a context entry's): not a starting point.
  const std::vector<Hit> hits{
      said(hit(cat, "t.init", 0, 7, 2024, 11, 29, 18, 0), "[rank0]: ERROR: matched by an entry")};
  SECTION("grouped") {
    const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat, {}, {}, lines);
    CHECK(d.incidents.empty());
    REQUIRE(d.starting_points.size() == 2);
    CHECK(d.starting_points[0].first.line_no == 12); // 18:01, before 18:05
    CHECK(d.starting_points[1].template_text == "[rank#]: KeyError: 'shard_#'");
    CHECK(d.starting_points[1].count == 2);
    CHECK(d.starting_points[1].ranks == std::set<int>{2, 3});
    CHECK(d.starting_points[1].first.line_no == 30);
  }
  SECTION("the earliest groups kept") {
    CorrelateOptions o;
    o.max_starting_points = 1;
    const auto d = denpex::correlate::correlate(hits, {SourceRef{"train.log", {}}}, cat, o, {}, lines);
    REQUIRE(d.starting_points.size() == 1);
    CHECK(d.starting_points[0].first.line_no == 12);
  }
  SECTION("a cause was found: none") {
    auto with_cause = hits;
    with_cause.push_back(said(at_second(hit(cat, "t.xid79", 1, 5, 2024, 11, 29, 17, 59), 58), k_xid79));
    const auto d = denpex::correlate::correlate(with_cause, {SourceRef{"train.log", {}}, SourceRef{"dmesg", {}}}, cat,
                                                {}, {}, lines);
    CHECK(d.starting_points.empty());
  }
}

TEST_CASE("correlate pass starting_points: a first report gets the error line just above it, a generic one takes it "
          "as its headline",
          "[correlate][passes][starting_points]") {
  const auto cat = make_catalog({entry("t.mpirun-abort", "symptom", 10, {}, true), entry("t.timeout", "symptom", 20)});
  const auto said_first = "ERROR: this application must be run on at least 2 nodes";
  const std::vector<denpex::scan::ErrorLine> lines{error_line(0, 3, 0, 0, "ERROR: far above"),
                                                   error_line(0, 45, 0, 1, said_first)};
  auto abort =
      said(at_second(hit(cat, "t.mpirun-abort", 0, 50, 2024, 11, 29, 18, 0), 2),
           "mpirun detected that one or more processes exited with non-zero status, thus causing the job to be "
           "terminated. The first process to do so was:");
  SECTION("a generic launcher summary") {
    const auto d = denpex::correlate::correlate({abort}, {SourceRef{"gpcnet.log", {}}}, cat, {}, {}, lines);
    REQUIRE(d.incidents.size() == 1);
    REQUIRE(d.incidents[0].said_above);
    CHECK(d.incidents[0].said_above->line_no == 45);
    CHECK(d.incidents[0].headline == said_first);
  }
  SECTION("a catalogued report keeps its own title") {
    const auto timeout =
        said(at_second(hit(cat, "t.timeout", 0, 50, 2024, 11, 29, 18, 0), 2), watchdog_timeout(0, 9, "ALLREDUCE"));
    const auto d = denpex::correlate::correlate({timeout}, {SourceRef{"train.log", {}}}, cat, {}, {}, lines);
    REQUIRE(d.incidents.size() == 1);
    REQUIRE(d.incidents[0].said_above);
    CHECK(d.incidents[0].said_above->line_no == 45);
    CHECK(d.incidents[0].headline.empty());
  }
  SECTION("more than 40 lines above: not its line") {
    abort.line_no = abort.last_line_no = 90;
    const auto d = denpex::correlate::correlate({abort}, {SourceRef{"gpcnet.log", {}}}, cat, {}, {}, lines);
    REQUIRE(d.incidents.size() == 1);
    CHECK_FALSE(d.incidents[0].said_above);
  }
}
