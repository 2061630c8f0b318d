// Whole-cluster diagnosis (issue 18, docs/cluster.md): --format jsonl writes
// the evidence a diagnosis was made from, and a merge of per-node findings
// reads it back and decides as one run over all the logs. The 4-node end to
// end check is tests/cluster/merge_test.py; these are the pieces.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/report/formats.hpp>
#include <denpex/report/redact.hpp>
#include <denpex/scan/scan.hpp>
#include <denpex/source/input.hpp>

using namespace denpex;
using json = nlohmann::ordered_json;

namespace {

const catalog::Catalog& builtin() {
  static const catalog::Catalog cat = [] {
    Diagnostics diags;
    return catalog::load_catalog({}, diags);
  }();
  return cat;
}

struct Run {
  correlate::Diagnosis diagnosis;
  report::RunInfo info;
  scan::ScanTotals totals;
  std::vector<Diagnostic> diags;
};

// One run as the CLI makes it: files (logs or findings) -> diagnosis.
Run diagnose(const std::vector<std::pair<std::string, std::string>>& files, const std::string& node = "") {
  const auto& cat = builtin();
  static const auto m = matcher::Matcher::compile(cat);
  REQUIRE(m);
  auto opener = source::make_memory_opener(files);
  std::vector<std::string> paths;
  for (const auto& [name, text] : files) {
    paths.push_back(name);
  }
  scan::ScanOptions so;
  so.catalog = &cat;
  so.findings_catalog = &cat;
  Diagnostics diags;
  auto result = scan::run(*opener, paths, *m, so, diags);
  correlate::CorrelateOptions co;
  co.node = node;
  co.now_year = 2024;
  Run r;
  r.totals = result.totals;
  r.info = report::RunInfo{"0.0.0-test", result.totals.bytes, result.totals.lines, result.totals.sources,
                           result.totals.long_lines_cut, diags.items()};
  r.diagnosis = correlate::correlate(std::move(result.hits), std::move(result.sources), cat, co, result.progress);
  r.diags = diags.items();
  return r;
}

std::string jsonl(const Run& r) {
  std::ostringstream out;
  report::print_jsonl(out, r.diagnosis, builtin(), r.info);
  return out.str();
}

std::vector<json> records(const std::string& text, const std::string& type) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto j = json::parse(line);
    if (j["type"] == type) {
      out.push_back(std::move(j));
    }
  }
  return out;
}

// What must not depend on reading raw logs or their findings.
std::string answer(const correlate::Diagnosis& d) {
  const auto& cat = builtin();
  std::ostringstream out;
  auto ranks = [](const std::set<int>& rs) {
    std::string s;
    for (int r : rs) {
      s += std::to_string(r) + ",";
    }
    return s;
  };
  auto where = [&](const correlate::Evidence& e) {
    return std::to_string(e.line_no) + " rank " + (e.ctx.rank ? std::to_string(e.ctx.rank->value) : "-") + " host " +
           (e.ctx.host ? e.ctx.host->value : "-") + " t " + (e.time_us ? std::to_string(*e.time_us) : "-") + " [" +
           e.text + "]";
  };
  for (const auto& inc : d.incidents) {
    out << cat.at(inc.signature).id << (inc.initiating ? " initiating " : " ") << inc.count << " ranks "
        << ranks(inc.ranks) << " pci " << inc.pci << " at " << where(inc.first) << "\n";
    for (const auto& g : inc.collateral) {
      out << "  collateral " << cat.at(g.signature).id << " " << g.count << " ranks " << ranks(g.ranks) << " at "
          << where(g.first) << "\n";
    }
    for (const auto& g : inc.context) {
      out << "  context " << cat.at(g.signature).id << " " << g.count << " ranks " << ranks(g.ranks) << "\n";
    }
  }
  for (const auto& g : d.unexplained) {
    out << "unexplained " << cat.at(g.signature).id << " " << g.count << " ranks " << ranks(g.ranks) << "\n";
  }
  if (d.inference) {
    out << "inference " << correlate::to_string(d.inference->kind) << " missing " << d.inference->missing_ranks.size()
        << "\n";
  }
  return out.str();
}

std::string watchdog(int rank, int usec, int seq = 4821) {
  return "[rank" + std::to_string(rank) + "]:[E1129 18:09:58." + std::to_string(100000 + usec) + " " +
         std::to_string(2336 + rank) +
         " torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:616] [Rank " + std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + std::to_string(seq) +
         ", OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for 600043 milliseconds "
         "before timing out.\n";
}

// Two nodes: node-002's GPU 0000:9a:00 (rank 4) falls off the bus, rank 4 raises
// a Python exception, the other ranks' watchdogs fire ten minutes later.
std::vector<std::pair<std::string, std::string>> node_a() {
  std::string ranks;
  for (int r = 0; r < 4; ++r) {
    ranks += watchdog(r, r * 1000);
  }
  return {{"dmesg.log", "[Fri Nov 29 16:02:18 2024] NVRM: GPU at PCI:0000:18:00: GPU-6a1c8f1e-2b7d-4e1f-9d0c-000000000001\n"},
          {"ranks.log", ranks}};
}

std::vector<std::pair<std::string, std::string>> node_b() {
  std::string ranks = "node-002:40004:40004 [0] NCCL INFO ncclCommInitRank comm 0x55d0c6a400 rank 4 nranks 8 cudaDev 0 "
                      "nvmlDev 0 busId 9a000 commId 0x1 - Init COMPLETE\n"
                      "[rank4]:2024-11-29T17:59:58.604+01:00 ERROR step 4821 failed\n"
                      "[rank4]:Traceback (most recent call last):\n"
                      "[rank4]:  File \"/workspace/train.py\", line 231, in <module>\n"
                      "[rank4]:    main()\n"
                      "[rank4]:RuntimeError: CUDA error: unspecified launch failure\n";
  for (int r = 5; r < 8; ++r) {
    ranks += watchdog(r, r * 1000);
  }
  return {{"dmesg.log", "[Fri Nov 29 17:59:58 2024] NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, "
                        "GPU has fallen off the bus.\n"
                        "[ 5123.456789] NVRM: GPU 0000:9a:00.0: GPU has fallen off the bus.\n"},
          {"ranks.log", ranks}};
}

} // namespace

TEST_CASE("cluster: merged findings decide like one run over the logs", "[cluster]") {
  // One run over both nodes' logs, each under its node's directory.
  std::vector<std::pair<std::string, std::string>> all;
  for (const auto& [name, text] : node_a()) {
    all.emplace_back("node-001/" + name, text);
  }
  for (const auto& [name, text] : node_b()) {
    all.emplace_back("node-002/" + name, text);
  }
  const auto one = diagnose(all);
  REQUIRE(!one.diagnosis.incidents.empty());
  CHECK(builtin().at(one.diagnosis.incidents[0].signature).id == "xid.79");

  // Per node, as a job step runs it, then the merge.
  const auto a = jsonl(diagnose(node_a(), "node-001"));
  const auto b = jsonl(diagnose(node_b(), "node-002"));
  const auto merged = diagnose({{"findings/node-001.jsonl", a}, {"findings/node-002.jsonl", b}});
  CHECK(merged.diags.empty());
  CHECK(answer(merged.diagnosis) == answer(one.diagnosis));
  // What the nodes read, not the findings' own lines.
  CHECK(merged.totals.sources == one.totals.sources);
  CHECK(merged.totals.lines == one.totals.lines);
  CHECK(merged.totals.bytes == one.totals.bytes);
  CHECK(merged.totals.findings_files == 2);
  CHECK(merged.diagnosis.hits == one.diagnosis.hits);
  for (const auto& s : merged.diagnosis.sources) {
    CHECK(s.findings.rfind("findings/node-", 0) == 0);
  }
  const auto summary = records(jsonl(merged), "summary").at(0);
  CHECK(summary["findings_files"] == 2);
  CHECK(summary["lines"] == one.totals.lines);

  // A merge of merges, and the findings concatenated into one file.
  const auto ab = jsonl(merged);
  CHECK(answer(diagnose({{"job.jsonl", ab}}).diagnosis) == answer(one.diagnosis));
  CHECK(answer(diagnose({{"all.jsonl", a + b}}).diagnosis) == answer(one.diagnosis));
}

TEST_CASE("cluster: evidence records carry what the correlator reads", "[cluster]") {
  const auto text = jsonl(diagnose(node_b(), "node-002"));
  const auto evidence = records(text, "evidence");
  REQUIRE(!evidence.empty());
  bool zoned = false;
  bool monotonic = false;
  bool traceback = false;
  bool identity = false;
  for (const auto& e : evidence) {
    CHECK(e["host"] == "node-002"); // --node's, for the lines that name none
    zoned = zoned || (e["stamp"].is_string() && e["stamp"].get<std::string>() == "2024-11-29T17:59:58.604000+01:00");
    monotonic = monotonic || (e["clock"] == "monotonic" && e["mono_us"] == 5123456789LL);
    traceback = traceback || (e["traceback"].is_object() && e["traceback"]["frames"][0]["line"] == 231);
    identity = identity || (e["signature"] == "nccl.comm-init" && e["captures"]["bus_id"] == "9a000" &&
                            e["pid"] == 40004 && e["from"]["pid"] == "body");
  }
  CHECK(zoned);
  CHECK(monotonic);
  CHECK(traceback);
  CHECK(identity);
  // Read back: the same hits.
  const auto direct = diagnose(node_b(), "node-002");
  const auto back = diagnose({{"node-002.jsonl", text}});
  REQUIRE(back.diagnosis.evidence.size() == direct.diagnosis.evidence.size());
  for (std::size_t i = 0; i < back.diagnosis.evidence.size(); ++i) {
    const auto& x = direct.diagnosis.evidence[i];
    const auto& y = back.diagnosis.evidence[i];
    CHECK(x.signature == y.signature);
    CHECK(x.line_no == y.line_no);
    CHECK(x.captures == y.captures);
    CHECK(x.ctx.time.kind == y.ctx.time.kind);
    CHECK(x.ctx.time.wall.tz_minutes == y.ctx.time.wall.tz_minutes);
    CHECK(x.ctx.time.wall.year == y.ctx.time.wall.year);
    CHECK(x.ctx.time.mono_micros == y.ctx.time.mono_micros);
    CHECK(x.ctx.time.origin == y.ctx.time.origin);
    CHECK(x.ctx.time.format == y.ctx.time.format);
    CHECK((x.traceback != nullptr) == (y.traceback != nullptr));
  }
}

TEST_CASE("cluster: one report on several ranks within a second is one evidence record", "[cluster]") {
  std::string ranks;
  for (int r = 0; r < 8; ++r) {
    ranks += watchdog(r, r * 7919);
  }
  ranks += watchdog(3, 850000, 4822); // a later collective on rank 3: its own record
  const auto run = diagnose({{"ranks.log", ranks}}, "node-001");
  const auto evidence = records(jsonl(run), "evidence");
  std::vector<json> timeouts;
  for (const auto& e : evidence) {
    if (e["signature"] == "pytorch.nccl.watchdog-timeout") {
      timeouts.push_back(e);
    }
  }
  REQUIRE(timeouts.size() == 2);
  CHECK(timeouts[0]["rank"] == 0);
  CHECK(timeouts[0]["also_ranks"] == json({1, 2, 3, 4, 5, 6, 7}));
  CHECK(timeouts[0]["count"] == 8);
  CHECK(timeouts[0]["text"].is_string());
  CHECK(timeouts[1]["captures"]["seq"] == "4822");
  // Read back, the group still has every rank and every line.
  const auto merged = diagnose({{"node-001.jsonl", jsonl(run)}});
  CHECK(answer(merged.diagnosis) == answer(run.diagnosis));
}

TEST_CASE("cluster: --node does not call the other nodes' ranks missing", "[cluster]") {
  std::string ranks = "node-001:2336:2336 [0] NCCL INFO comm 0x5586a3c0 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0\n"
                      "node-001:2337:2337 [1] NCCL INFO comm 0x5586a3c0 rank 1 nRanks 16 nNodes 2 localRanks 8 localRank 1\n";
  ranks += watchdog(0, 0);
  const auto whole = diagnose({{"ranks.log", ranks}});
  REQUIRE(whole.diagnosis.inference);
  // Rank 1 printed its init line and never reported: the suspect. Ranks
  // 2-15 have no line here at all: their logs are elsewhere. See: #32.
  CHECK(whole.diagnosis.inference->missing_ranks == std::vector<int>{1});
  CHECK(whole.diagnosis.inference->absent_ranks.size() == 14);
  const auto node = diagnose({{"ranks.log", ranks}}, "node-001");
  REQUIRE(node.diagnosis.inference);
  CHECK(node.diagnosis.inference->missing_ranks == std::vector<int>{1}); // named by its init line, never reported
}

TEST_CASE("cluster: redaction reaches the evidence records", "[cluster]") {
  auto run = diagnose(node_b(), "node-002");
  report::redact(run.diagnosis);
  const auto text = jsonl(run);
  CHECK(text.find("node-002") == std::string::npos);
  CHECK(text.find("<host-") != std::string::npos);
}

TEST_CASE("cluster: findings cut short are read, and said so", "[cluster]") {
  const auto text = jsonl(diagnose(node_b(), "node-002"));
  const auto cut = text.substr(0, text.rfind("{\"type\":\"summary\""));
  const auto merged = diagnose({{"node-002.jsonl", cut}});
  REQUIRE(merged.diags.size() == 1);
  CHECK(merged.diags[0].level == Level::warning);
  CHECK(merged.diags[0].error.what.find("summary") != std::string::npos);
  REQUIRE(!merged.diagnosis.incidents.empty());
  CHECK(builtin().at(merged.diagnosis.incidents[0].signature).id == "xid.79");
}
