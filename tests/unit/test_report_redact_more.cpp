// More of --redact (include/denpex/report/redact.hpp), beside
// test_report_redact.cpp: what a Redaction learns from a whole Diagnosis,
// what apply() rewrites in it, the host names a line spells out, the secret
// forms test_report_redact.cpp does not try, and idempotence.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <denpex/correlate/correlate.hpp>
#include <denpex/report/redact.hpp>

using namespace denpex;
using report::Redaction;

namespace {

correlate::Evidence said_by(const std::string& host, const std::string& text) {
  correlate::Evidence e;
  e.text = text;
  if (!host.empty()) {
    e.ctx.host = context::Field<std::string>{host, context::Origin::prefix};
  }
  return e;
}

correlate::Group group_of(const std::string& host, const std::string& text) {
  correlate::Group g;
  g.first = said_by(host, text);
  g.hosts = {host};
  g.count = 1;
  return g;
}

// What must not survive --redact in the diagnosis below.
const std::vector<std::string> k_private = {"node-a", "node-b", "node-c",    "10.1.7.18",
                                            "jdoe",   "hf_Qz",  "jane@corp", "gpu-a02.cluster.internal"};

std::string leaked(const std::string& s) {
  for (const auto& p : k_private) {
    if (s.find(p) != std::string::npos) {
      return p;
    }
  }
  return {};
}

// A diagnosis whose every log-derived field names a host, an address, a user
// or a secret.
correlate::Diagnosis private_diagnosis() {
  correlate::Diagnosis d;
  d.sources.push_back(scan::SourceRef{"/home/jdoe/runs/node-a/train.log", {}, "node-a.findings.jsonl"});
  // The exception that heads the run, with its traceback.
  scan::Hit exc;
  exc.text = "[rank3]: RuntimeError: failed to connect to [gpu-a02.cluster.internal]:29500";
  exc.ctx.host = context::Field<std::string>{"node-a", context::Origin::file_name};
  auto tb = std::make_shared<context::Traceback>();
  tb->frames = {{"/home/jdoe/proj/train.py", 231, "<module>"}};
  tb->frames[0].code = "store = connect(node_b, token='hf_QzT7bLr2mXw9VdKp4sYh8NcFj3UaEo6GiB1')";
  tb->frame_count = 1;
  tb->chain = {{"ConnectionRefusedError: [Errno 111] node-b refused", 9, context::ChainLink::during_handling}};
  exc.traceback = tb;
  d.evidence.push_back(exc);
  // NCCL's line, with captures.
  scan::Hit h;
  h.text = "[rank3]:[2024-11-29 17:59:58] node-a:2339:2380 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: "
           "Connect to 10.1.7.18<43519> failed : Connection refused";
  h.ctx.host = context::Field<std::string>{"node-a", context::Origin::body};
  h.captures = {{"host", "node-a"}, {"peer", "10.1.7.18"}, {"env", "HF_TOKEN=hf_QzT7bLr2mXw9VdKp4sYh8NcFj3UaEo6GiB1"}};
  d.evidence.push_back(h);
  scan::ProgressMark m;
  m.text = "[rank0]:2024-11-29 17:58:21,037 INFO train.py:212 step 100 loss 2.79 on node-c";
  d.progress.push_back(m);
  correlate::IdentityLink link;
  link.host = "node-b";
  link.rank = 4;
  d.identities.push_back(link);

  correlate::Incident inc;
  inc.first = said_by("node-a", exc.text);
  inc.headline = "RuntimeError: failed to connect to [gpu-a02.cluster.internal]:29500";
  inc.hosts = {"node-a", "node-b"};
  inc.traceback = tb;
  inc.later = {{"RuntimeError: mail jane@corp.example.org, node-c is down", 12, context::ChainLink::direct_cause}};
  inc.said_above = said_by("", "ERROR: node-c:4001:4001 [0] NCCL WARN peer 10.1.7.18 hung up");
  inc.rank_from = said_by("node-b", "  host      : node-b");
  inc.signals.push_back(correlate::SignalStatus{0, 1, said_by("node-a", h.text)});
  inc.collateral.push_back(group_of("node-c", "[rank5]: node-c watchdog timeout"));
  inc.context.push_back(group_of("node-b", "node-b:2340:2340 [4] NCCL INFO Using network IB"));
  d.incidents.push_back(inc);
  d.unexplained.push_back(group_of("node-b", "srun: error: node-b: task 4: Exited with exit code 1"));
  correlate::StartingPoint sp;
  sp.template_text = "connect to node-a:# failed";
  sp.first = said_by("node-a", "connect to node-a:29500 failed");
  d.starting_points.push_back(sp);
  return d;
}

} // namespace

TEST_CASE("report::Redaction(Diagnosis): learns the hosts every field names", "[report][redact]") {
  const auto d = private_diagnosis();
  const Redaction r(d);
  // In the order the constructor reads them: the incident's first line
  // (its field, then its text), ...
  CHECK(r.text("node-a") == "<host-1>");
  CHECK(r.text("gpu-a02.cluster.internal") == "<host-2>");
  // ... and every other field: incident hosts, collateral and context,
  // said_above (from its text), rank_from, identities, evidence.
  for (const char* host : {"node-b", "node-c"}) {
    INFO(host);
    CHECK(r.text(host).rfind("<host-", 0) == 0);
  }
  // A host learned only from the evidence's captures.
  correlate::Diagnosis only_capture;
  scan::Hit h;
  h.captures = {{"host", "node-q"}};
  only_capture.evidence.push_back(h);
  CHECK(Redaction(only_capture).text("node-q") == "<host-1>");
  // Nothing to learn: nothing but the rules.
  CHECK(Redaction(correlate::Diagnosis{}).text("node-a at 10.0.0.1") == "node-a at <ip>");
}

TEST_CASE("report::Redaction::apply: every log-derived string of the diagnosis is masked", "[report][redact]") {
  auto d = private_diagnosis();
  const auto signature = d.incidents[0].signature;
  const auto r = report::redact(d);
  std::vector<std::pair<std::string, std::string>> fields{
      {"source", d.sources[0].name},
      {"findings", d.sources[0].findings},
      {"progress", d.progress[0].text},
      {"identity", d.identities[0].host},
      {"first", d.incidents[0].first.text},
      {"first host", d.incidents[0].first.ctx.host->value},
      {"headline", d.incidents[0].headline},
      {"later", d.incidents[0].later[0].text},
      {"said_above", d.incidents[0].said_above->text},
      {"rank_from", d.incidents[0].rank_from->text},
      {"rank_from host", d.incidents[0].rank_from->ctx.host->value},
      {"signal", d.incidents[0].signals[0].first->text},
      {"collateral", d.incidents[0].collateral[0].first.text},
      {"context", d.incidents[0].context[0].first.text},
      {"unexplained", d.unexplained[0].first.text},
      {"starting point", d.starting_points[0].first.text},
      {"template", d.starting_points[0].template_text},
  };
  for (const auto& hit : d.evidence) {
    fields.emplace_back("hit text", hit.text);
    fields.emplace_back("hit host", hit.ctx.host->value);
    for (const auto& [k, v] : hit.captures) {
      fields.emplace_back("capture " + k, v);
    }
  }
  for (const auto* tb : {d.evidence[0].traceback.get(), d.incidents[0].traceback.get()}) {
    REQUIRE(tb != nullptr);
    fields.emplace_back("frame file", tb->frames[0].file);
    fields.emplace_back("frame code", tb->frames[0].code);
    fields.emplace_back("chain", tb->chain[0].text);
  }
  for (const auto& hosts : {d.incidents[0].hosts, d.incidents[0].collateral[0].hosts, d.incidents[0].context[0].hosts,
                            d.unexplained[0].hosts}) {
    for (const auto& h : hosts) {
      fields.emplace_back("hosts", h);
    }
  }
  for (const auto& [name, value] : fields) {
    INFO(name << ": " << value);
    CHECK(leaked(value).empty());
  }
  // What is not the log's is kept: the entry, the frame's line number.
  CHECK(d.incidents[0].signature == signature);
  CHECK(d.evidence[0].traceback->frames[0].line == 231);
  CHECK(d.incidents[0].first.text.find("RuntimeError: failed to connect to") != std::string::npos);
  // The table it returns masks the printed report the same way.
  CHECK(r.text("node-a") == d.evidence[0].ctx.host->value);
}

TEST_CASE("report::Redaction::learn_from_text: cloud-internal names and FQDNs, never localhost or a bare word",
          "[report][redact]") {
  Redaction r;
  r.learn_from_text("socket.gaierror: [Errno -2] Name or service not known: ip-10-0-0-1");
  r.learn_from_text("rendezvous at trainer-0.trainer.default.svc.cluster.local:29400 timed out");
  r.learn_from_text("RuntimeError: failed to connect to [localhost]:29500");
  r.learn_from_text("node-017 is fine");
  CHECK(r.text("ip-10-0-0-1") == "<host-1>");
  CHECK(r.text("trainer-0.trainer.default.svc.cluster.local") == "<host-2>");
  CHECK(r.text("localhost") == "localhost");
  CHECK(r.text("node-017") == "node-017");
}

TEST_CASE("report::redact_text: more secrets and addresses, look-alikes kept", "[report][redact]") {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"token=Zk39sLq0vPn2", "<secret>"},
      {"password: hunter2hunter2", "<secret>"},
      {"API_KEY=abcdef123456", "<secret>"},
      {"remote: ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "remote: <secret>"},
      {"github_pat_11ABCDEFG0123456789_abcdefghij", "<secret>"},
      {"SLACK=xoxb-1234567890-abcdefghij", "SLACK=<secret>"},
      {"OPENAI: sk-proj-AbCdEfGhIjKlMnOpQrStUv", "OPENAI: <secret>"},
      {"aws_secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY done", "aws_secret <secret> done"},
      {"mail jane.doe+ml@sub.example.co.uk", "mail <email>"},
      {"localGid ::ffff:10.2.4.23 remoteGid", "localGid <ip> remoteGid"},
      {"cd /home/jdoe", "cd /home/<user>"},
      // Look-alikes: not four octets, a version, a long lower-case path.
      {"999.1.1.1", "999.1.1.1"},
      {"NCCL version 2.21.5+cuda12.4", "NCCL version 2.21.5+cuda12.4"},
      {"torch/distributed/elastic/multiprocessing/errors/init",
       "torch/distributed/elastic/multiprocessing/errors/init"},
      {"", ""},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.in) { CHECK(report::redact_text(c.in) == c.out); }
  }
}

TEST_CASE("report::Redaction::output: a masked report passes through unchanged, in HTML too", "[report][redact]") {
  Redaction r;
  r.learn_host("node-017");
  const std::string printed = "<td>node-017 10.0.0.1 /home/jdoe/x token=Zk39sLq0vPn2</td>";
  const auto html = r.output("html", printed);
  CHECK(html.find("node-017") == std::string::npos);
  CHECK(r.output("html", html) == html);
  const auto text = r.output("text", printed);
  CHECK(r.output("text", text) == text);
  CHECK(r.output("markdown", printed) == r.text(printed)); // every format but HTML spells tokens as <...>
}

// HTTP's own form, "Authorization: Bearer <token>", puts a space, not '=' or
// ':', between the word and the value: a short opaque token is not masked.
TEST_CASE("report::redact_text: a bearer token in an Authorization header", "[report][redact]") {
  CHECK(report::redact_text("Authorization: Bearer Zk39sLq0vPn2xY") == "Authorization: Bearer <secret>");
}

// Hosts are replaced as plain substrings, and a token's own text can hold a
// host's name ("host-1" in "<host-1>"): masking a masked report again
// rewrites the token.
TEST_CASE("report::Redaction: idempotent when a host's name is inside a token", "[report][redact][!mayfail]") {
  Redaction r;
  r.learn_host("host-1");
  const auto once = r.text("host-1: task 3: Exited with exit code 1");
  CHECK(once == "<host-1>: task 3: Exited with exit code 1");
  CHECK(r.text(once) == once);
  CHECK(r.output("json", once) == once);
}

// apply() promises every log-derived string; the decision's clock risk and
// the clock-offset fact carry a node's name and a line (printed reports are
// still masked by output(), which knows the host from the incidents).
TEST_CASE("report::Redaction::apply: the decision's clock risk and clock-offset facts", "[report][redact]") {
  correlate::Diagnosis d;
  correlate::Incident a;
  a.hosts = {"node-a"};
  a.first = said_by("node-a", "node-a NVRM: Xid (PCI:0000:3b:00): 79");
  correlate::Decision dec;
  dec.clock_risk = correlate::ClockRisk{1, "node-b", 2'500'000, said_by("node-b", "node-b mlx5_core: health fatal")};
  a.decision = dec;
  correlate::MissingFact m;
  m.kind = correlate::MissingFact::Kind::clock_offset;
  m.host = "node-a";
  m.other_host = "node-b";
  a.missing.push_back(m);
  correlate::Incident b;
  b.hosts = {"node-b"};
  b.first = said_by("node-b", "node-b mlx5_core: health fatal");
  d.incidents = {a, b};
  report::redact(d);
  const auto& risk = *d.incidents[0].decision->clock_risk;
  CHECK(risk.host.find("node-b") == std::string::npos);
  CHECK(risk.first.text.find("node-b") == std::string::npos);
  CHECK(d.incidents[0].missing[0].host.find("node-a") == std::string::npos);
  CHECK(d.incidents[0].missing[0].other_host.find("node-b") == std::string::npos);
}

// A host named only in a traceback (an earlier exception of the chain that no
// entry matched, a source line under a frame) is never learned: the
// constructor reads tracebacks for nothing, and no rule knows a cluster FQDN.
TEST_CASE("report::Redaction: a host named only in a traceback is masked", "[report][redact]") {
  correlate::Diagnosis d;
  auto tb = std::make_shared<context::Traceback>();
  tb->frames = {{"/workspace/train.py", 12, "<module>"}};
  tb->frames[0].code = "dist.init_process_group(init_method='tcp://gpu-b07.cluster.internal:29500')";
  tb->frame_count = 1;
  tb->chain = {{"socket.gaierror: [Errno -2] Name or service not known: gpu-b07.cluster.internal", 7,
                context::ChainLink::during_handling}};
  scan::Hit h;
  h.text = "RuntimeError: rendezvous failed";
  h.traceback = tb;
  d.evidence.push_back(h);
  correlate::Incident inc;
  inc.first = said_by("", h.text);
  inc.traceback = tb;
  d.incidents.push_back(inc);
  const auto r = report::redact(d);
  CHECK(d.incidents[0].traceback->chain[0].text.find("gpu-b07") == std::string::npos);
  CHECK(d.incidents[0].traceback->frames[0].code.find("gpu-b07") == std::string::npos);
  CHECK(r.output("text", "chain: socket.gaierror: gpu-b07.cluster.internal").find("gpu-b07") == std::string::npos);
}
