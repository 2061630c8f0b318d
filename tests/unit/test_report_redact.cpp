// Tests for --redact's masking (src/report/redact.cpp): what one string
// loses, that the host table is shared by a diagnosis and its output pass,
// and that HTML gets its tokens as text. See: #32.
#include <catch2/catch.hpp>

#include <string>

#include <denpex/correlate/correlate.hpp>
#include <denpex/report/redact.hpp>

using namespace denpex;
using report::Redaction;

TEST_CASE("report::redact_text: addresses, e-mail, tokens and home directories", "[report][redact]") {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"connect to 10.42.7.19:29500 failed", "connect to <ip>:29500 failed"},
      {"peer fd00:1234:5678::42<51160>", "peer <ip><51160>"},
      {"peer fe80::a00:27ff:fe4e:66a1%eth0", "peer <ip>%eth0"},
      {"peer 2001:db8:0:0:0:0:2:1 closed", "peer <ip> closed"},
      {"mail jane.doe@example.org now", "mail <email> now"},
      {"HF_TOKEN=hf_QzT7bLr2mXw9VdKp4sYh8NcFj3UaEo6GiB1", "HF_TOKEN=<secret>"},
      {"key AKIAIOSFODNN7EXAMPLQ used", "key <secret> used"},
      {"File \"/home/jdoe/proj/train.py\", line 3", "File \"/home/<user>/proj/train.py\", line 3"},
      {"/Users/jane/ml/run.log", "/Users/<user>/ml/run.log"},
      // Not addresses, not secrets: a PCI bus id, a time, C++ scopes, a path.
      {"NVRM: Xid (PCI:0000:3b:00): 79", "NVRM: Xid (PCI:0000:3b:00): 79"},
      {"E1129 17:59:58.000000 2336", "E1129 17:59:58.000000 2336"},
      {"c10::add and at::cuda::abc", "c10::add and at::cuda::abc"},
      {"torch/distributed/elastic/multiprocessing/api.py:869", "torch/distributed/elastic/multiprocessing/api.py:869"},
      // A commit in a URL is not a key; a token in a URL's query is.
      {"https://github.com/o/r/blob/825fe7683625d127f6c8ed3402ac442a244023cd/logs/a.log",
       "https://github.com/o/r/blob/825fe7683625d127f6c8ed3402ac442a244023cd/logs/a.log"},
      {"https://hub.example.net/x?token=Zk39sLq0vPn2 and 825fe7683625d127f6c8ed3402ac442a244023cd",
       "https://hub.example.net/x?<secret> and <secret>"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.in) { CHECK(report::redact_text(c.in) == c.out); }
  }
}

TEST_CASE("report::Redaction: hosts named in fields and in text, longest first, numbered once", "[report][redact]") {
  Redaction r;
  r.learn_host("node-017");
  r.learn_from_text("RuntimeError: failed to connect to [gpu-a02.cluster.internal]:29500");
  r.learn_from_text("[rank3]: node-0171:2339:2380 [3] NCCL WARN Cuda failure 700");
  CHECK(r.text("node-0171 and node-017 and gpu-a02.cluster.internal") == "<host-3> and <host-1> and <host-2>");
  r.learn_host("node-017"); // known: keeps its number
  r.learn_host("<host-9>"); // a token is never a host
  CHECK(r.text("node-017") == "<host-1>");
  CHECK(r.text(r.text("node-017 at 10.0.0.1")) == "<host-1> at <ip>"); // idempotent
}

TEST_CASE("report::Redaction::output: HTML spells the tokens as text", "[report][redact]") {
  Redaction r;
  r.learn_host("node-017");
  CHECK(r.output("html", "<td>node-017 10.0.0.1 /home/jdoe/x</td>") ==
        "<td>&lt;host-1&gt; &lt;ip&gt; /home/&lt;user&gt;/x</td>");
  CHECK(r.output("json", R"({"host": "node-017"})") == R"({"host": "<host-1>"})");
}

TEST_CASE("report::redact: identity links and sources lose their hosts", "[report][redact]") {
  correlate::Diagnosis d;
  correlate::IdentityLink link;
  link.host = "node-017";
  link.rank = 3;
  d.identities.push_back(link);
  scan::SourceRef src;
  src.name = "/home/jdoe/logs/node-017/train.log";
  d.sources.push_back(src);
  const auto r = report::redact(d);
  CHECK(d.identities.front().host == "<host-1>");
  CHECK(d.sources.front().name == "/home/<user>/logs/<host-1>/train.log");
  CHECK(r.text("node-017") == "<host-1>");
}
