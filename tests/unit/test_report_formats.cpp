// Tests for the SARIF, GitHub, Markdown and JSON Lines printers
// (src/report/{sarif,github,markdown,jsonl}.cpp), through the real pipeline
// on an in-memory log, plus hand-built diagnoses for the edge cases.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/findings/record.hpp>
#include <denpex/report/formats.hpp>
#include <denpex/report/timeline.hpp>
#include <denpex/scan/scan.hpp>
#include <denpex/source/input.hpp>

using namespace denpex;
// ordered_json: GCC 12 reports a false -Warray-bounds inside std::map for nlohmann::json here.
using json = nlohmann::ordered_json;

namespace {

// Real lines (testdata/README.md cites each format):
//  - NCCL's CUDACHECK warning from enqueue.cc:1556: vllm-project/vllm#19890
//  - ProcessGroupNCCL's watchdog timeout: pytorch/pytorch
//    torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (as in testdata/sample/train.log)
const std::string k_cuda_700 = "[rank3]:[2024-11-29 17:59:58] node-017:2339:2380 [3] enqueue.cc:1556 NCCL WARN Cuda "
                               "failure 700 'an illegal memory access was encountered'";
const std::string k_nvls_comm = "[rank3]:[2024-11-29 17:58:11] node-017:2339:2380 [3] NCCL INFO NVLS comm 0x5586a3c0 "
                                "headRank 3 nHeads 8 buffSize 4194304 memSize 2097152 nvlsPerRankSize 301989888 "
                                "nvlsTotalSize 2415919104";
const std::string k_watchdog_0 =
    "[rank0]:[E1129 18:09:58.100000 2336 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog "
    "caught collective operation timeout: WorkNCCL(SeqNum=4821, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, "
    "Timeout(ms)=600000) ran for 600043 milliseconds before timing out.";
const std::string k_watchdog_1 =
    "[rank1]:[E1129 18:09:58.101731 2337 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog "
    "caught collective operation timeout: WorkNCCL(SeqNum=4821, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, "
    "Timeout(ms)=600000) ran for 600045 milliseconds before timing out.";

const catalog::Catalog& builtin_catalog() {
  static const catalog::Catalog cat = [] {
    Diagnostics diags;
    return catalog::load_catalog({}, diags);
  }();
  return cat;
}

struct Pipeline {
  correlate::Diagnosis diagnosis;
  report::RunInfo run;
};

Pipeline diagnose(const std::string& name, const std::string& text) {
  const auto& cat = builtin_catalog();
  auto m = matcher::Matcher::compile(cat);
  REQUIRE(m);
  auto opener = source::make_memory_opener({{name, text}});
  Diagnostics diags;
  auto result = scan::run(*opener, {name}, *m, scan::ScanOptions{}, diags);
  correlate::CorrelateOptions co;
  co.assume_year = 2024;
  Pipeline p;
  p.run = report::RunInfo{"0.0.0-test", result.totals.bytes, result.totals.lines, result.totals.sources,
                          result.totals.long_lines_cut, diags.items()};
  p.diagnosis = correlate::correlate(std::move(result.hits), std::move(result.sources), cat, co);
  return p;
}

// The sample's story in four lines: line 2 is the initiating failure.
Pipeline nvls_case(const std::string& name = "logs/train.log", const std::string& suffix = "") {
  // nccl.nvls.cuda-700 needs evidence that NVLS was in use (NVIDIA/nccl#1410's NVLS comm line).
  return diagnose(name, "[rank0]:2024-11-29 17:58:21,037 INFO train.py:212 step 100 loss 2.7900\n" + k_cuda_700 +
                            suffix + "\n" + k_watchdog_0 + "\n" + k_watchdog_1 + "\n" + k_nvls_comm + "\n");
}

template <typename F> std::string capture(F&& print) {
  std::ostringstream out;
  print(out);
  return out.str();
}

// Well-formed UTF-8 lead/continuation structure (enough to catch a raw 0xff).
bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    if (c < 0x80) {
      n = 0;
    } else if ((c >> 5) == 0x6) {
      n = 1;
    } else if ((c >> 4) == 0xe) {
      n = 2;
    } else if ((c >> 3) == 0x1e) {
      n = 3;
    } else {
      return false;
    }
    if (i + n >= s.size() && n > 0) {
      return false;
    }
    for (std::size_t k = 1; k <= n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) {
        return false;
      }
    }
    i += n + 1;
  }
  return true;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) {
    out.push_back(l);
  }
  return out;
}

} // namespace

TEST_CASE("report::print_sarif: one run, rules for the entries in results, incident as an error result", "[report]") {
  const auto& cat = builtin_catalog();
  auto p = nvls_case();
  REQUIRE(!p.diagnosis.incidents.empty());
  const auto doc = json::parse(capture([&](std::ostream& o) { report::print_sarif(o, p.diagnosis, cat, p.run); }));

  CHECK(doc["version"] == "2.1.0");
  CHECK(doc["$schema"] == std::string(report::k_sarif_schema_uri));
  REQUIRE(doc["runs"].size() == 1);
  const auto& run = doc["runs"][0];
  CHECK(run["tool"]["driver"]["name"] == "denpex");
  CHECK(run["tool"]["driver"]["version"] == "0.0.0-test");
  CHECK(run["invocations"][0]["executionSuccessful"] == true);

  const auto& rules = run["tool"]["driver"]["rules"];
  const auto& results = run["results"];
  REQUIRE(results.size() >= 1);
  // Every result points at its own rule, and every rule is used.
  std::vector<bool> used(rules.size(), false);
  for (const auto& r : results) {
    const auto idx = r["ruleIndex"].get<std::size_t>();
    REQUIRE(idx < rules.size());
    CHECK(rules[idx]["id"] == r["ruleId"]);
    used[idx] = true;
  }
  CHECK(std::all_of(used.begin(), used.end(), [](bool b) { return b; }));

  const auto& first = results[0];
  CHECK(first["ruleId"] == "nccl.nvls.cuda-700");
  CHECK(first["level"] == "error"); // severity critical -> error
  const auto& sig = cat.at(*cat.find("nccl.nvls.cuda-700"));
  CHECK(first["message"]["text"] == sig.title + " — " + sig.fix.summary);
  const auto& pl = first["locations"][0]["physicalLocation"];
  CHECK(pl["artifactLocation"]["uri"] == "logs/train.log");
  CHECK(pl["region"]["startLine"] == 2);
  CHECK(pl["region"]["snippet"]["text"] == k_cuda_700);
  CHECK(first["properties"]["initiating"] == true);
  CHECK(first["properties"]["rank"] == 3);
  CHECK(first["properties"]["host"] == "node-017");
  CHECK(first["properties"]["confidence"].is_string());
  // The two watchdog timeouts are collateral: one related location at line 3.
  REQUIRE(first.contains("relatedLocations"));
  bool watchdog = false;
  for (const auto& rl : first["relatedLocations"]) {
    if (rl["physicalLocation"]["region"]["startLine"] == 3) {
      watchdog = rl["message"]["text"].get<std::string>().find("watchdog") != std::string::npos;
    }
  }
  CHECK(watchdog);

  const auto& rule = rules[first["ruleIndex"].get<std::size_t>()];
  CHECK(rule["shortDescription"]["text"] == sig.title);
  CHECK(rule["fullDescription"]["text"] == sig.root_cause);
  CHECK(rule["defaultConfiguration"]["level"] == "error");
  CHECK(rule["help"]["text"].get<std::string>().find("NCCL_NVLS_ENABLE=0") != std::string::npos);
  CHECK(rule["properties"]["area"] == "nccl");
  CHECK(rule["properties"]["role"] == "cause");
  const auto tags = rule["properties"]["tags"].get<std::vector<std::string>>();
  CHECK(std::set<std::string>(tags.begin(), tags.end()).size() == tags.size()); // SARIF: unique
}

TEST_CASE("report::print_sarif: partialFingerprints are stable across runs and differ by line", "[report]") {
  const auto& cat = builtin_catalog();
  auto a = nvls_case();
  auto b = nvls_case();
  const auto da = json::parse(capture([&](std::ostream& o) { report::print_sarif(o, a.diagnosis, cat, a.run); }));
  const auto db = json::parse(capture([&](std::ostream& o) { report::print_sarif(o, b.diagnosis, cat, b.run); }));
  CHECK(da["runs"][0]["results"][0]["partialFingerprints"] == db["runs"][0]["results"][0]["partialFingerprints"]);
  CHECK(report::finding_fingerprint("nccl.nvls.cuda-700", "train.log", 41) ==
        report::finding_fingerprint("nccl.nvls.cuda-700", "train.log", 41));
  CHECK(report::finding_fingerprint("nccl.nvls.cuda-700", "train.log", 41) !=
        report::finding_fingerprint("nccl.nvls.cuda-700", "train.log", 42));
  // Field boundaries matter: ("a", "b1") vs ("a", "b", 1).
  CHECK(report::finding_fingerprint("x", "a1", 2) != report::finding_fingerprint("x", "a", 12));
  CHECK(report::finding_fingerprint("x", "a", 1).size() == 16);
}

TEST_CASE("report::sarif_uri: relative paths percent-encoded", "[report]") {
  CHECK(report::sarif_uri("testdata/sample/train.log") == "testdata/sample/train.log");
  CHECK(report::sarif_uri("node 017/dmesg.log") == "node%20017/dmesg.log");
  // An archive member "a.tar.gz:dmesg" would otherwise parse as scheme "a.tar.gz".
  CHECK(report::sarif_uri("node-017.tar.gz:var/log/dmesg") == "node-017.tar.gz%3Avar/log/dmesg");
  CHECK(report::sarif_uri("100%#?.log") == "100%25%23%3F.log");
  CHECK(report::sarif_uri("<stdin>") == "%3Cstdin%3E");
  CHECK(report::sarif_uri("caf\xc3\xa9.log") == "caf%C3%A9.log");
  CHECK(report::sarif_uri("") == "unknown");
}

TEST_CASE("report::github_escape: workflow-command escaping", "[report]") {
  CHECK(report::github_escape_data("50% done\r\nnext: a,b") == "50%25 done%0D%0Anext: a,b");
  CHECK(report::github_escape_property("50% done\r\nnext: a,b") == "50%25 done%0D%0Anext%3A a%2Cb");
  // % first, so an already-escaped sequence is not unescaped by the runner.
  CHECK(report::github_escape_data("%0A") == "%250A");
}

TEST_CASE("report::print_github: one annotation per incident, single-line, escaped", "[report]") {
  const auto& cat = builtin_catalog();
  // A file name with the property delimiters in it, and a corrupted copy of a
  // real line (ESC sequence and a stray 0xff byte appended, as in a
  // crash-truncated log).
  auto p = nvls_case("logs/node,1:a.log", "\x1b[31m\xff");
  const auto out = capture([&](std::ostream& o) { report::print_github(o, p.diagnosis, cat, p.run); });
  const auto lines = lines_of(out);
  REQUIRE(lines.size() >= p.diagnosis.incidents.size());
  for (const auto& l : lines) {
    CHECK(l.rfind("::", 0) == 0);
    CHECK(l.find('\x1b') == std::string::npos);
    CHECK(l.find('\r') == std::string::npos);
  }
  CHECK(valid_utf8(out));
  const auto& l0 = lines[0];
  CHECK(l0.rfind("::error file=logs/node%2C1%3Aa.log,line=2,title=denpex%3A ", 0) == 0);
  CHECK(l0.find("nccl.nvls.cuda-700") != std::string::npos);
  CHECK(l0.find("export NCCL_NVLS_ENABLE=0") != std::string::npos);
  CHECK(l0.find("%0A") != std::string::npos);       // multi-line message, escaped
  CHECK(l0.find("\\e[31m\\xff") != std::string::npos); // terminal-escaped log bytes
}

TEST_CASE("report::print_github: nothing found is one notice", "[report]") {
  const auto& cat = builtin_catalog();
  // A real training-progress line that no signature matches.
  auto p = diagnose("train.log", "[rank0]:2024-11-29 17:58:21,037 INFO train.py:212 step 100 loss 2.7900\n");
  const auto out = capture([&](std::ostream& o) { report::print_github(o, p.diagnosis, cat, p.run); });
  CHECK(lines_of(out).size() == 1);
  CHECK(out.rfind("::notice title=denpex::no known failure signature found", 0) == 0);
}

TEST_CASE("report::markdown_code_span: backticks, pipes and spaces", "[report]") {
  struct Case {
    const char* in;
    bool table;
    const char* out;
  };
  const Case cases[] = {
      {"plain", false, "`plain`"},
      {"a`b", false, "``a`b``"},
      {"`x", false, "`` `x ``"},
      {"a``b`", false, "``` a``b` ```"},
      {"a|b", true, "`a\\|b`"},
      {"a|b", false, "`a|b`"},
      {"two\nlines", false, "`two lines`"},
      {" x ", false, "`  x  `"},
      {"", false, "` `"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.in) { CHECK(report::markdown_code_span(c.in, c.table) == c.out); }
  }
  CHECK(report::markdown_fence_for("no ticks") == "```");
  CHECK(report::markdown_fence_for("a ```` b") == "`````");
}

TEST_CASE("report::print_markdown: heading, incident table, fenced log line and fix", "[report]") {
  const auto& cat = builtin_catalog();
  auto p = nvls_case("logs/a|b`.log", "\x1b[31m\xff");
  const auto out = capture([&](std::ostream& o) { report::print_markdown(o, p.diagnosis, cat, p.run); });
  const auto& sig = cat.at(*cat.find("nccl.nvls.cuda-700"));
  CHECK(out.rfind("## denpex: ", 0) == 0);
  CHECK(out.find("**Initiating failure:** `nccl.nvls.cuda-700`") != std::string::npos);
  CHECK(out.find("| 1 | `nccl.nvls.cuda-700` | critical | yes |") != std::string::npos);
  // The log line in a text fence, with the control bytes made visible.
  CHECK(out.find("```text\n[rank3]:[2024-11-29 17:59:58] node-017") != std::string::npos);
  CHECK(out.find("\\e[31m\\xff") != std::string::npos);
  CHECK(out.find('\x1b') == std::string::npos);
  CHECK(valid_utf8(out));
  // The file name's backtick and pipe stay inside a code span, the pipe escaped in the table.
  CHECK(out.find("``logs/a\\|b`.log:2``") != std::string::npos);
  CHECK(out.find("```sh\nexport NCCL_NVLS_ENABLE=0\n") != std::string::npos);
  CHECK(out.find("**Collateral**") != std::string::npos);
  CHECK(out.find(sig.fix.summary.substr(0, 20)) != std::string::npos);
}

TEST_CASE("report::print_jsonl: self-contained lines, summary last", "[report]") {
  const auto& cat = builtin_catalog();
  auto p = nvls_case("node-017/train.log");
  const auto out = capture([&](std::ostream& o) { report::print_jsonl(o, p.diagnosis, cat, p.run); });
  const auto lines = lines_of(out);
  REQUIRE(lines.size() >= 2);
  std::vector<json> recs;
  for (const auto& l : lines) {
    REQUIRE_NOTHROW(recs.push_back(json::parse(l)));
    CHECK(recs.back()["schema_version"] == denpex::findings::k_schema_version);
  }
  // The first record says what the file is; the initiating incident follows.
  CHECK(recs.front()["type"] == "findings");
  CHECK(recs.front()["format"] == "denpex-findings");
  CHECK(recs.front()["tool"]["version"] == p.run.version);
  const auto& inc = recs.at(1);
  CHECK(inc["type"] == "incident");
  CHECK(inc["signature"] == "nccl.nvls.cuda-700");
  CHECK(inc["file"] == "node-017/train.log");
  CHECK(inc["host"] == "node-017");
  CHECK(inc["where"]["line"] == 2);
  CHECK(inc["where"]["time_us"].is_number_integer());
  CHECK(inc["fingerprint"] == report::finding_fingerprint("nccl.nvls.cuda-700", "node-017/train.log", 2));
  CHECK(recs.back()["type"] == "summary");
  CHECK(recs.back()["initiating"] == "nccl.nvls.cuda-700");
  CHECK(recs.back()["files"][0]["file"] == "node-017/train.log");
}

TEST_CASE("report::printers: invalid UTF-8 in file, host and line never throws", "[report]") {
  const auto& cat = builtin_catalog();
  const auto idx = cat.find("nccl.nvls.cuda-700");
  REQUIRE(idx);
  correlate::Diagnosis d;
  d.sources.push_back({"bad\xff\xfe name.log", std::nullopt});
  correlate::Incident inc;
  inc.signature = static_cast<std::uint32_t>(*idx);
  inc.first.source = 0;
  inc.first.line_no = 7;
  inc.first.text = k_cuda_700 + "\xc3\x28\xed\xa0\x80";
  inc.first.ctx.host = context::Field<std::string>{"node\xff", context::Origin::body};
  inc.count = 1;
  inc.hosts.insert("node\xff");
  inc.initiating = true;
  inc.decision = correlate::Decision{};
  correlate::MissingFact named; // words with a bus id from the log
  named.kind = correlate::MissingFact::Kind::xid_line;
  named.xid = "79";
  named.gpu = "0000:3b:00 \xff";
  inc.missing.push_back(named);
  d.incidents.push_back(inc);
  report::RunInfo run{"0.0.0-test", 1, 1, 1, 0, {}};
  run.diagnostics.push_back({Level::warning, Error{ErrorKind::io, "bad\xff.gz", "truncated \xfe stream"}});

  std::string sarif;
  std::string jsonl;
  std::string md;
  std::string gh;
  REQUIRE_NOTHROW(sarif = capture([&](std::ostream& o) { report::print_sarif(o, d, cat, run); }));
  REQUIRE_NOTHROW(jsonl = capture([&](std::ostream& o) { report::print_jsonl(o, d, cat, run); }));
  REQUIRE_NOTHROW(md = capture([&](std::ostream& o) { report::print_markdown(o, d, cat, run); }));
  REQUIRE_NOTHROW(gh = capture([&](std::ostream& o) { report::print_github(o, d, cat, run); }));
  for (const auto* s : {&sarif, &jsonl, &md, &gh}) {
    CHECK(valid_utf8(*s));
  }
  const auto doc = json::parse(sarif);
  CHECK(doc["runs"][0]["invocations"][0]["toolExecutionNotifications"].size() == 1);
  CHECK(doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] ==
        "bad%EF%BF%BD%EF%BF%BD%20name.log");
  for (const auto& l : lines_of(jsonl)) {
    CHECK_NOTHROW(json::parse(l));
  }
}

TEST_CASE("report::printers: an empty diagnosis", "[report]") {
  const auto& cat = builtin_catalog();
  correlate::Diagnosis d;
  report::RunInfo run{"0.0.0-test", 0, 0, 0, 0, {}};
  const auto doc = json::parse(capture([&](std::ostream& o) { report::print_sarif(o, d, cat, run); }));
  CHECK(doc["runs"][0]["results"].empty());
  CHECK(doc["runs"][0]["tool"]["driver"]["rules"].empty());
  const auto md = capture([&](std::ostream& o) { report::print_markdown(o, d, cat, run); });
  CHECK(md.rfind("## denpex: no known failure signature found", 0) == 0);
  const auto jl = lines_of(capture([&](std::ostream& o) { report::print_jsonl(o, d, cat, run); }));
  REQUIRE(jl.size() == 2); // the header and the summary
  CHECK(json::parse(jl[0])["type"] == "findings");
  CHECK(json::parse(jl[1])["type"] == "summary");
}

TEST_CASE("report::print_text_timeline: fits 60, 80 and 120 columns, ids are cut, counts stay whole", "[report]") {
  const auto& cat = builtin_catalog();
  correlate::Diagnosis d;
  correlate::Evidence first;
  report::Timeline tl;
  auto row = [&](report::TimelineRow::Kind kind, const char* id, std::uint64_t count, std::string who,
                 std::string short_who, std::int64_t t) {
    report::TimelineRow r{kind, std::move(who), static_cast<std::uint32_t>(*cat.find(id)), count, t, 0, &first};
    r.short_who = std::move(short_who);
    return r;
  };
  const std::int64_t t0 = 1'732'903'198'000'000; // 2024-11-29 17:59:58
  tl.rows.push_back(row(report::TimelineRow::Kind::initiating, "xid.79", 2, "rank 4003", "", t0));
  tl.rows.push_back(row(report::TimelineRow::Kind::report, "pytorch.nccl.ops-failed-or-timed-out", 15998,
                        "ranks 0-4002,4004-7999", "7999 ranks", t0 + 600'000'000));
  tl.start = t0;
  tl.end = t0 + 600'000'000;
  for (const std::size_t width : {60, 80, 120}) {
    const auto text = capture([&](std::ostream& o) { report::print_text_timeline(o, tl, d, cat, width); });
    for (const auto& l : lines_of(text)) {
      CHECK(l.size() <= width);
    }
    CHECK(text.find("(15998)") != std::string::npos);
    CHECK(text.find("xid.79 (2)") != std::string::npos);
    if (width == 120) {
      CHECK(text.find("pytorch.nccl.ops-failed-or-timed-out (15998)") != std::string::npos);
    } else {
      CHECK(text.find("7999 ranks") != std::string::npos);
    }
    if (width == 60) {
      CHECK(text.find("~ (15998)") != std::string::npos);
    }
  }
}
