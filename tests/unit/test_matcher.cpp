// Unit tests for matcher::Matcher over a small catalog built in the test.
#include <catch2/catch.hpp>

#include <denpex/source/line_reader.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/matcher/prefilter.hpp>
#include <denpex/util/diagnostics.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <tuple>
#include <optional>
#include <set>
#include <string>
#include <vector>

using denpex::Diagnostics;
using denpex::catalog::Catalog;
using denpex::catalog::CatalogFile;
using denpex::matcher::MatchEvent;
using denpex::matcher::Matcher;
using denpex::matcher::MatchSink;
using denpex::source::Chunk;
using nlohmann::json;

namespace {

struct SignalSpec {
  std::string id;
  std::string pattern;
};

// One catalog entry with the given signals; examples are placeholders (the
// matcher never looks at them).
json entry(const std::string& id, const std::vector<SignalSpec>& signals) {
  json sigs = json::array();
  for (const auto& s : signals) {
    sigs.push_back(json{{"id", s.id}, {"pattern", s.pattern}});
  }
  return json{
      {"id", id},
      {"title", id},
      {"area", "nccl"},
      {"role", "cause"},
      {"severity", "error"},
      {"signals", sigs},
      {"root_cause", "test"},
      {"fix", json{{"summary", "test"}}},
      {"verify", json{{"summary", "test"}}},
      {"references", json::array({json{{"title", "t"}, {"url", "https://example.invalid/"}}})},
      {"examples", json{{"match", json::array({"x"})}, {"no_match", json::array({"y"})}}},
  };
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
  for (const auto& i : diags.items()) {
    UNSCOPED_INFO(denpex::format_diagnostic(i));
  }
  REQUIRE(diags.size() == 0);
  return cat;
}

Matcher compile(const Catalog& cat, bool prefilter = true) {
  denpex::matcher::MatcherOptions mo;
  mo.prefilter = prefilter;
  auto m = Matcher::compile(cat, mo);
  if (!m) {
    FAIL(m.error().where << ": " << m.error().what);
  }
  return std::move(*m);
}

// A copy of one MatchEvent (its views die with the callback).
struct Hit {
  std::uint32_t signature;
  std::uint32_t signal;
  std::string line;
  std::uint64_t line_no;
  std::uint64_t offset;
  std::map<std::string, std::string> captures;
  bool line_at_pos; // chunk.substr(line_pos) starts with line
};

class Collect final : public MatchSink {
public:
  explicit Collect(std::size_t stop_after = 0) : m_stop_after(stop_after) {}
  bool matched(const MatchEvent& ev) override {
    Hit h{ev.signature, ev.signal, std::string(ev.line), ev.line_no, ev.offset, {},
          ev.chunk.substr(ev.line_pos, ev.line.size()) == ev.line};
    for (const auto& c : ev.captures()) {
      h.captures[std::string(c.name)] = std::string(c.value);
    }
    hits.push_back(std::move(h));
    return m_stop_after == 0 || hits.size() < m_stop_after;
  }
  std::vector<Hit> hits;

private:
  std::size_t m_stop_after;
};

std::vector<Hit> scan(const Matcher& m, std::string_view text, std::uint64_t first_line = 1,
                      std::uint64_t offset = 0, denpex::matcher::ScanStats* stats = nullptr) {
  Collect sink;
  Diagnostics diags;
  CHECK(m.scan(Chunk{text, first_line, offset}, sink, diags, stats));
  CHECK(diags.size() == 0);
  return sink.hits;
}

// Real lines used below:
//   NVRM Xid 79        signatures/driver/driver.nvrm.gpu-lost.json (NVIDIA/open-gpu-kernel-modules#1151)
//   NVRM Xid 48 / 64   signatures/xid/xid.48.json, xid.64.json
//   NCCL WARN          signatures/cuda/cuda.oom.nccl-alloc.json, signatures/nccl/nccl.socket.peer-closed.json
//   NCCL INFO          facebookresearch/deit#28
const std::string k_xid79 = "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.";
const std::string k_xid48 = "Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, "
                            "pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected "
                            "on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.";
const std::string k_xid64 = "Dec  2 11:38:47 worker4 kernel: [  219.471050] NVRM: Xid (PCI:0000:07:00): 64, "
                            "pid='<unknown>', name=<unknown>, Dynamic Page Retirement: Blacklisting failed.  Page "
                            "should have been blacklisted on boot(0x00000000007fffa8).";
const std::string k_nccl_oom = "VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'";
const std::string k_nccl_info = "gpu-dev006:25486:25486 [0] NCCL INFO Using network IB";
const std::string k_peer_closed = "ng30903:3063025:3066048 [0] misc/socket.cc:49 NCCL WARN socketProgress: "
                                  "Connection closed by remote peer ng30903-ib.narval.calcul.quebec<51159>";

const std::string k_xid_pattern = R"(NVRM: Xid \(PCI:(?P<pci>[0-9a-fA-F:]+)\): (?P<xid>\d+),)";
const std::string k_cuda_pattern = R"(NCCL WARN Cuda failure '(?P<msg>[^']+)')";

} // namespace

TEST_CASE("matcher::scan: hits come in line order with line numbers, offsets and captures", "[matcher]") {
  const auto cat = make_catalog({entry("t.xid", {{"xid", k_xid_pattern}}), entry("t.cuda", {{"cuda", k_cuda_pattern}})});
  const auto m = compile(cat);
  CHECK(m.pattern_count() == 2);
  const std::string chunk = k_nccl_info + "\n" + k_nccl_oom + "\n" + k_nccl_info + "\n" + k_xid48 + "\n" + k_xid64 +
                            "\n" + k_xid79; // last line unterminated
  denpex::matcher::ScanStats stats;
  const auto hits = scan(m, chunk, 100, 5000, &stats);
  REQUIRE(hits.size() == 4);
  const auto t_xid = static_cast<std::uint32_t>(*cat.find("t.xid"));
  const auto t_cuda = static_cast<std::uint32_t>(*cat.find("t.cuda"));

  CHECK(hits[0].signature == t_cuda);
  CHECK(hits[0].line == k_nccl_oom);
  CHECK(hits[0].line_no == 101);
  CHECK(hits[0].offset == 5000 + k_nccl_info.size() + 1);
  CHECK(hits[0].captures == std::map<std::string, std::string>{{"msg", "out of memory"}});

  CHECK(hits[1].signature == t_xid);
  CHECK(hits[1].line == k_xid48);
  CHECK(hits[1].line_no == 103);
  CHECK(hits[1].captures == std::map<std::string, std::string>{{"pci", "0000:07:00"}, {"xid", "48"}});

  CHECK(hits[2].line_no == 104);
  CHECK(hits[2].captures.at("xid") == "64");
  CHECK(hits[3].line_no == 105);
  CHECK(hits[3].line == k_xid79);
  CHECK(hits[3].captures.at("pci") == "0000:06:00");
  CHECK(hits[3].offset == 5000 + chunk.size() - k_xid79.size());
  for (const auto& h : hits) {
    CHECK(h.line_at_pos);
    CHECK(h.signal == 0);
  }
  CHECK(stats.chunks == 1);
  CHECK(stats.chunks_with_hits == 1);
  CHECK(stats.dfa_fallbacks == 0);
}

TEST_CASE("matcher::scan: two signals on one line come in pattern order", "[matcher]") {
  // One entry whose two signals both hit the Xid 79 line, plus a second entry
  // that also hits it.
  const auto cat = make_catalog({
      entry("t.lost", {{"xid", k_xid_pattern}, {"bus", "GPU has fallen off the bus"}}),
      entry("t.any-xid", {{"nvrm", R"(NVRM: Xid)"}}),
  });
  const auto m = compile(cat);
  const auto hits = scan(m, k_nccl_info + "\n" + k_xid79 + "\n");
  REQUIRE(hits.size() == 3);
  for (const auto& h : hits) {
    CHECK(h.line == k_xid79);
    CHECK(h.line_no == 2);
  }
  // Within a line: by match position, then pattern order. "NVRM: Xid" starts
  // the line for both t.lost/xid and t.any-xid/nvrm; the bus signal starts later.
  CHECK(hits[0].signature == 0);
  CHECK(hits[0].signal == 0);
  CHECK(hits[1].signature == 1);
  CHECK(hits[2].signature == 0);
  CHECK(hits[2].signal == 1);
}

TEST_CASE("matcher::scan: the same pattern twice on one line gives two hits", "[matcher]") {
  // Two ranks' output pasted onto one line (spellml/examples#17, Horovod via mpirun).
  const std::string line = "May 18, 2020, 11:47:18: running: [1,1]<stdout>:Train Epoch: 10 [10240/30000 (34%)]\tLoss: "
                           "0.121522[1,0]<stdout>:Train Epoch: 10 [10240/30000 (34%)]\tLoss: 0.241982";
  const auto cat = make_catalog({entry("t.loss", {{"loss", R"(\[1,(?P<rank>\d+)\]<stdout>:Train Epoch: \d+)"}})});
  const auto m = compile(cat);
  const auto hits = scan(m, line + "\n", 7);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].line_no == 7);
  CHECK(hits[1].line_no == 7);
  CHECK(hits[0].line == line);
  CHECK(hits[0].captures.at("rank") == "1");
  CHECK(hits[1].captures.at("rank") == "0");
}

TEST_CASE("matcher::scan: a match that would cross a newline is confirmed per line", "[matcher]") {
  // Real traceback lines (CPython); `\s+` would join the header and the frame.
  const std::string chunk = "[rank1]: [rank1]: Traceback (most recent call last):\n"
                            "  File \"/home/azureuser/sky_workdir/./train_mnist_streaming.py\", line 79, in <module>\n";
  const auto cat = make_catalog({entry("t.cross", {{"cross", R"(Traceback \(most recent call last\):\s+File)"}}),
                                 entry("t.neg", {{"neg", R"(last\):[^x]*line 79)"}})});
  const auto m = compile(cat);
  denpex::matcher::ScanStats stats;
  const auto hits = scan(m, chunk, 1, 0, &stats);
  CHECK(hits.empty());
  CHECK(stats.chunks == 1);
}

TEST_CASE("matcher::scan: a cross-line false match does not hide a real one later in the chunk", "[matcher]") {
  const std::string chunk = "NCCL WARN Cuda failure\n"
                            "'out of memory'\n" +
                            k_nccl_oom + "\n";
  const auto cat = make_catalog({entry("t.cuda", {{"cuda", R"(NCCL WARN Cuda failure\s+'(?P<msg>[^']+)')"}})});
  const auto m = compile(cat);
  const auto hits = scan(m, chunk);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].line == k_nccl_oom);
  CHECK(hits[0].line_no == 3);
  CHECK(hits[0].captures.at("msg") == "out of memory");
}

TEST_CASE("matcher::scan: ^-anchored patterns match inside a chunk", "[matcher]") {
  const std::string chunk = k_nccl_info + "\n" + k_xid79 + "\n" + "Traceback (most recent call last):\n";
  const auto cat = make_catalog({entry("t.tb", {{"tb", R"(^Traceback \(most recent call last\):$)"}}),
                                 entry("t.xid", {{"xid", R"(^NVRM: Xid)"}}),
                                 entry("t.not-at-start", {{"info", R"(^NCCL INFO)"}})});
  const auto m = compile(cat);
  const auto hits = scan(m, chunk);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].signature == *cat.find("t.xid"));
  CHECK(hits[0].line_no == 2);
  CHECK(hits[1].signature == *cat.find("t.tb"));
  CHECK(hits[1].line_no == 3);
}

TEST_CASE("matcher::scan: a chunk with no hits calls nothing", "[matcher]") {
  const auto cat = make_catalog({entry("t.xid", {{"xid", k_xid_pattern}})});
  const auto m = compile(cat);
  denpex::matcher::ScanStats stats;
  const auto hits = scan(m, k_nccl_info + "\n" + k_nccl_oom + "\n", 1, 0, &stats);
  CHECK(hits.empty());
  CHECK(stats.chunks == 1);
  CHECK(stats.chunks_with_hits == 0);
  // An empty chunk is fine too.
  CHECK(scan(m, "").empty());
}

TEST_CASE("matcher::scan: CRLF lines are reported without the CR", "[matcher]") {
  const auto cat = make_catalog({entry("t.xid", {{"xid", k_xid_pattern}}), entry("t.peer", {{"peer", "Connection closed by remote peer (?P<peer>\\S+)"}})});
  const auto m = compile(cat);
  const std::string chunk = k_nccl_info + "\r\n" + k_xid79 + "\r\n" + k_peer_closed + "\r\n";
  const auto hits = scan(m, chunk);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].line == k_xid79);
  CHECK(hits[0].line_no == 2);
  CHECK(hits[1].line == k_peer_closed);
  CHECK(hits[1].line_no == 3);
  // \S+ stops before the '\r'.
  CHECK(hits[1].captures.at("peer") == "ng30903-ib.narval.calcul.quebec<51159>");
}

// CRLF logs: the LineReader turns CRLF into LF before the matcher sees a
// chunk, so `$` means the end of the line's text.
TEST_CASE("matcher::scan: $-anchored patterns match CRLF lines read through the LineReader", "[matcher]") {
  const auto cat = make_catalog({entry("t.bus", {{"bus", R"(GPU has fallen off the bus\.$)"}})});
  const auto m = compile(cat);
  const std::string raw = k_nccl_info + "\r\n" + k_xid79 + "\r\n";
  denpex::source::MemoryStream in(raw);
  denpex::source::LineReader reader(in, "mem");
  auto chunk = reader.next();
  REQUIRE(chunk);
  REQUIRE(*chunk);
  const auto hits = scan(m, std::string((*chunk)->text));
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].line == k_xid79);
}

TEST_CASE("matcher::scan: the sink can stop the scan", "[matcher]") {
  const auto cat = make_catalog({entry("t.xid", {{"xid", k_xid_pattern}})});
  const auto m = compile(cat);
  const std::string chunk = k_xid48 + "\n" + k_xid64 + "\n" + k_xid79 + "\n";
  Collect sink(2);
  Diagnostics diags;
  CHECK_FALSE(m.scan(Chunk{chunk, 1, 0}, sink, diags));
  CHECK(sink.hits.size() == 2);
}

TEST_CASE("matcher::compile: include filter leaves entries out", "[matcher]") {
  const auto cat = make_catalog({entry("t.xid", {{"xid", k_xid_pattern}}), entry("t.cuda", {{"cuda", k_cuda_pattern}})});
  denpex::matcher::MatcherOptions opts;
  opts.include = [](const denpex::catalog::Signature& s) { return s.id == "t.cuda"; };
  auto m = Matcher::compile(cat, opts);
  REQUIRE(m);
  CHECK(m->pattern_count() == 1);
  const auto hits = scan(*m, k_xid79 + "\n" + k_nccl_oom + "\n");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].signature == *cat.find("t.cuda"));
  CHECK(hits[0].line_no == 2);
}

TEST_CASE("matcher::match_entry_line: one entry's signals on one line", "[matcher]") {
  const auto cat = make_catalog({entry("t.lost", {{"xid", k_xid_pattern}, {"bus", "GPU has fallen off the bus"}}),
                                 entry("t.cuda", {{"cuda", k_cuda_pattern}})});
  const auto m = compile(cat);
  std::vector<std::pair<std::uint32_t, std::map<std::string, std::string>>> got;
  m.match_entry_line(0, k_xid79, [&](std::uint32_t signal, const std::vector<denpex::matcher::Capture>& caps) {
    std::map<std::string, std::string> c;
    for (const auto& cap : caps) {
      c[std::string(cap.name)] = std::string(cap.value);
    }
    got.emplace_back(signal, c);
  });
  REQUIRE(got.size() == 2);
  CHECK(got[0].first == 0);
  CHECK(got[0].second == std::map<std::string, std::string>{{"pci", "0000:06:00"}, {"xid", "79"}});
  CHECK(got[1].first == 1);
  CHECK(got[1].second.empty());
  int other = 0;
  m.match_entry_line(1, k_xid79, [&](std::uint32_t, const std::vector<denpex::matcher::Capture>&) { ++other; });
  CHECK(other == 0);
}

TEST_CASE("matcher::compile: a budget too small for the program is an error", "[matcher]") {
  const auto cat = make_catalog({entry("t.xid", {{"xid", k_xid_pattern}}), entry("t.cuda", {{"cuda", k_cuda_pattern}})});
  denpex::matcher::MatcherOptions opts;
  opts.prefilter = false; // the RE2::Set scans everything
  opts.set_max_mem = 1;
  auto m = Matcher::compile(cat, opts);
  REQUIRE_FALSE(m);
  CHECK_THAT(m.error().what, Catch::Contains("memory budget"));
  CHECK_FALSE(m.error().help.empty());
}

TEST_CASE("matcher::scan: a DFA out of memory falls back pattern by pattern with the same hits", "[matcher]") {
  // RE2 gives the compiled program about two thirds of max_mem and the DFA the
  // rest; find the smallest budget that still compiles, so the DFA starves.
  std::vector<json> entries;
  for (int i = 0; i < 40; ++i) {
    entries.push_back(entry("t.e" + std::to_string(i),
                            {{"s", "NCCL WARN [a-z]+ failure " + std::to_string(i) + R"( '(?P<msg>[^']+)' \w+\s+\d+)"}}));
  }
  entries.push_back(entry("t.cuda", {{"cuda", k_cuda_pattern}}));
  // A pattern whose DFA has exponentially many states over hex ids (commId).
  entries.push_back(entry("t.hex", {{"hex", R"(commId 0x[0-9a-f]*[0-9][0-9a-f]{12}Z)"}}));
  const auto cat = make_catalog(entries);
  // huggingface/accelerate#2246: NCCL comm lines carry 16-hex-digit commIds.
  const std::string comm = "qgpu2008:35182:35220 [0] NCCL INFO comm 0x562e3380 rank 0 nranks 8 cudaDev 0 nvmlDev 0 "
                           "busId 31000 commId 0x26b3ece72ee71028 - Init START";
  std::string chunk;
  for (int i = 0; i < 200; ++i) {
    chunk += comm + "\n" + k_peer_closed + "\n";
  }
  chunk += k_nccl_oom + "\n";
  std::optional<Matcher> m;
  std::int64_t budget = 1024;
  for (; budget <= (8 << 20) && !m; budget += budget / 8) {
    denpex::matcher::MatcherOptions opts;
    opts.prefilter = false; // the RE2::Set scans everything
    opts.set_max_mem = budget;
    if (auto r = Matcher::compile(cat, opts)) {
      m.emplace(std::move(*r));
    }
  }
  REQUIRE(m);
  Collect sink;
  Diagnostics diags;
  denpex::matcher::ScanStats stats;
  CHECK(m->scan(Chunk{chunk, 1, 0}, sink, diags, &stats));
  REQUIRE(sink.hits.size() == 1);
  CHECK(sink.hits[0].line_no == 401);
  CHECK(sink.hits[0].captures.at("msg") == "out of memory");
  INFO("budget " << budget << " fallbacks " << stats.dfa_fallbacks);
  if (stats.dfa_fallbacks > 0) {
    // The warning is given once.
    REQUIRE(diags.size() == 1);
    CHECK(diags.items()[0].level == denpex::Level::warning);
    CHECK_THAT(diags.items()[0].error.what, Catch::Contains("ran out of memory"));
  } else {
    // RE2 does not bail out of a many-match (Set) DFA when it is merely slow,
    // so even the smallest budget that compiles (about 180 KB here) resets
    // its cache instead of failing: results must simply be the same.
    CHECK(diags.size() == 0);
  }
}

TEST_CASE("matcher::scan: a chunk with many candidate patterns is matched line by line, with the same hits",
          "[matcher]") {
  // More than 8 patterns occur in this chunk. Without the prefilter,
  // scan_candidates asks RE2's set line by line; with it, the prefilter names
  // the lines. Each pattern alone (the whole-chunk path) must find the same.
  const bool prefilter = GENERATE(false, true);
  const std::vector<std::pair<std::string, std::string>> specs = {
      {"t.xid", k_xid_pattern},
      {"t.cuda", k_cuda_pattern},
      {"t.cross", R"(NCCL WARN Cuda failure\s+'(?P<msg>[^']+)')"},
      {"t.tb", R"(^Traceback \(most recent call last\):$)"},
      {"t.loss", R"(\[1,(?P<rank>\d+)\]<stdout>:Train Epoch: \d+)"},
      {"t.peer", R"(NCCL WARN socketProgress: Connection closed by remote peer (?P<peer>\S+))"},
      {"t.dbe", R"(double bit error \(DBE\))"},
      {"t.retire", R"(Dynamic Page Retirement: (?P<what>\w+))"},
      {"t.bus", R"(fallen off the bus\.$)"},
      {"t.info", R"(NCCL INFO Using network (?P<net>\w+))"},
      {"t.kernel", R"((?P<host>\w+) kernel: \[ *(?P<ts>[0-9.]+)\])"},
  };
  const std::string chunk = k_nccl_info + "\n" + k_xid79 + "\n" + "NCCL WARN Cuda failure\n'out of memory'\n" +
                            k_nccl_oom + "\n" + "Traceback (most recent call last):\n" + k_xid48 + "\n" + k_xid64 +
                            "\n" + k_peer_closed + "\n" +
                            "[1,1]<stdout>:Train Epoch: 10 [10240/30000]\tLoss: 0.12[1,0]<stdout>:Train Epoch: 10 x\n" +
                            "no newline at the end: " + k_xid79;
  std::vector<json> entries;
  for (const auto& [id, pattern] : specs) {
    entries.push_back(entry(id, {{"s", pattern}}));
  }
  const auto all = make_catalog(entries);
  denpex::matcher::ScanStats stats;
  const auto together = scan(compile(all, prefilter), chunk, 1, 0, &stats);

  using Key = std::tuple<std::string, std::uint64_t, std::string, std::map<std::string, std::string>>;
  std::vector<Key> want;
  for (const auto& e : entries) {
    for (const auto& h : scan(compile(make_catalog({e}), false), chunk)) {
      want.emplace_back(e["id"].get<std::string>(), h.line_no, h.line, h.captures);
    }
  }
  std::vector<Key> got;
  for (const auto& h : together) {
    got.emplace_back(all.at(h.signature).id, h.line_no, h.line, h.captures);
    CHECK(h.line_at_pos);
  }
  CHECK(std::is_sorted(together.begin(), together.end(),
                       [](const Hit& a, const Hit& b) { return a.line_no < b.line_no; }));
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  CHECK(got == want);
  CHECK(got.size() >= 14);
  CHECK(stats.chunks_with_hits == 1);
  if (prefilter && denpex::matcher::prefilter_available()) {
    CHECK(stats.line_by_line == 0);
    // One RE2 search per (line, pattern) the prefilter named; a line may hold two matches.
    std::set<std::pair<std::string, std::uint64_t>> named;
    for (const auto& k : got) {
      named.emplace(std::get<0>(k), std::get<1>(k));
    }
    CHECK(stats.lines_confirmed >= named.size());
  } else {
    CHECK(stats.line_by_line == 1);
  }
}

TEST_CASE("matcher::scan: a pattern with a literal prefix finds the same hits wherever the prefix repeats", "[matcher]") {
  // One line where the prefix occurs once (the match starts there), one
  // where it occurs twice and only the second starts a match, one with two
  // matches, one where the only prefix starts no match.
  const auto cat = make_catalog({entry("t.prefix", {{"p", R"(NCCL WARN code (?P<code>\d+))"}})});
  const auto m = compile(cat);
  const std::string text = "node-1:1:1 [0] NCCL WARN code 7\n"
                           "NCCL WARN codes NCCL WARN code 12\n"
                           "NCCL WARN code 3 and NCCL WARN code 4\n"
                           "NCCL WARN codex\n";
  const auto hits = scan(m, text, 1);
  REQUIRE(hits.size() == 4);
  CHECK(hits[0].line_no == 1);
  CHECK(hits[0].captures.at("code") == "7");
  CHECK(hits[1].line_no == 2);
  CHECK(hits[1].captures.at("code") == "12");
  CHECK(hits[2].captures.at("code") == "3");
  CHECK(hits[3].captures.at("code") == "4");
  CHECK(hits[3].line_no == 3);
}
