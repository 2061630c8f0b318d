#include <denpex/report/redact.hpp>

#include <algorithm>
#include <memory>
#include <string_view>
#include <vector>

#include <re2/re2.h>

namespace denpex::report {

namespace {

struct Rule {
  std::unique_ptr<RE2> re;
  std::string replacement; // RE2 rewrite: \1 is the first group
  std::string html;        // the same, spelled for HTML text
  bool (*accept)(std::string_view match) = nullptr; // nullptr: every match
  // A bare hex or base64 run inside a URL is a commit or a path ("/blob/
  // 825fe76.../logs" in a catalog reference), not a key: such rules skip
  // URLs. Key=value secrets, addresses and hosts are masked in URLs too.
  bool skips_urls = false;
};

const RE2& url_re() {
  static const RE2 k_re(R"((https?://[^\s"'<>)\]]+))");
  return k_re;
}

// Whether [at, at + n) of `s` lies inside a URL.
bool inside_url(std::string_view s, std::size_t at, std::size_t n) {
  re2::StringPiece rest(s.data(), s.size());
  re2::StringPiece url;
  while (RE2::FindAndConsume(&rest, url_re(), &url)) {
    const auto begin = static_cast<std::size_t>(url.data() - s.data());
    if (at >= begin && at + n <= begin + url.size()) {
      return true;
    }
    if (begin > at) {
      break;
    }
  }
  return false;
}

// A long base64 run is a secret only if it mixes digits and both cases:
// "torch/distributed/elastic/multiprocessing/api" is a path, not a key.
bool looks_random(std::string_view m) {
  const auto has = [&](auto pred) { return std::any_of(m.begin(), m.end(), [&](char c) { return pred(c); }); };
  return has([](char c) { return c >= '0' && c <= '9'; }) && has([](char c) { return c >= 'A' && c <= 'Z'; }) &&
         has([](char c) { return c >= 'a' && c <= 'z'; });
}

// Replaces the matches of `rule` that it accepts. A rule with an `accept`
// or that skips URLs has exactly one group, the text it replaces.
void replace_all(std::string& s, const Rule& rule, bool html) {
  const std::string& replacement = html ? rule.html : rule.replacement;
  if (rule.accept == nullptr && !rule.skips_urls) {
    RE2::GlobalReplace(&s, *rule.re, replacement);
    return;
  }
  std::string out;
  re2::StringPiece rest(s);
  re2::StringPiece piece;
  while (RE2::PartialMatch(rest, *rule.re, &piece)) {
    const std::string_view m(piece.data(), piece.size());
    const auto at = static_cast<std::size_t>(m.data() - rest.data());
    out.append(rest.data(), at);
    const bool masked = (rule.accept == nullptr || rule.accept(m)) &&
                        !(rule.skips_urls && inside_url(s, static_cast<std::size_t>(m.data() - s.data()), m.size()));
    out.append(masked ? std::string_view(replacement) : m);
    if (m.empty()) {
      break; // the patterns never match empty text; never loop on one that does
    }
    rest.remove_prefix(at + m.size());
  }
  out.append(rest.data(), rest.size());
  s = std::move(out);
}

std::string html_spelling(std::string_view token) {
  std::string out;
  for (char c : token) {
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  }
  return out;
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> k_rules = [] {
    RE2::Options o;
    o.set_log_errors(false);
    struct Def {
      const char* pattern;
      const char* replacement;
      bool (*accept)(std::string_view) = nullptr;
      bool skips_urls = false;
    };
    const Def defs[] = {
        // Secrets first: they may contain things that look like addresses.
        {R"((?i)\b(?:bearer|token|api[_-]?key|secret|password|passwd)\s*[=:]\s*["']?[^\s"',;&<]{6,})", "<secret>"},
        // RFC 6750's header form: "Authorization: Bearer <token>".
        {R"((?i)\b(bearer) +[A-Za-z0-9._~+/-]{8,}=*)", R"(\1 <secret>)"},
        {R"(\b(?:hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}))", "<secret>"},
        {R"(\b([A-Za-z0-9+/]{40,}={0,2}))", "<secret>", looks_random, true},
        {R"(\b([0-9a-fA-F]{32,})\b)", "<secret>", nullptr, true},
        {R"(\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b)", "<email>"},
        {R"(\b(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b)", "<ip>"},
        // IPv6: the full form, and the compressed forms with "::" and at
        // least three groups (so C++'s "c10::add" is not an address).
        {R"((?i)\b(?:[0-9a-f]{1,4}:){3,7}[0-9a-f]{1,4}\b|\b(?:[0-9a-f]{1,4}:){2,6}:[0-9a-f]{1,4}\b|\b[0-9a-f]{1,4}::(?:[0-9a-f]{1,4}:){1,5}[0-9a-f]{1,4}\b|::ffff:<ip>)", "<ip>"},
        // A user's home directory names the user.
        {R"((/home/|/Users/)[A-Za-z0-9._-]+)", R"(\1<user>)"},
    };
    std::vector<Rule> out;
    for (const auto& d : defs) {
      std::string replacement = d.replacement;
      out.push_back(
          Rule{std::make_unique<RE2>(d.pattern, o), replacement, html_spelling(replacement), d.accept, d.skips_urls});
    }
    return out;
  }();
  return k_rules;
}

// Host names a line spells out without any field naming them: c10d's
// "[node-a01.cluster.internal]:29500", cloud-internal names
// ("ip-10-0-0-1.ec2.internal"), Kubernetes pod and node FQDNs, NCCL's
// "host:pid:tid [dev]" behind another prefix. Learned, so
// they become <host-N> like the hosts fields name.
const RE2& host_in_text() {
  static const RE2 k_re(
      R"((?i)(?:\[([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*)\]:\d{2,5}\b|\b([a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.(?:internal|local|localdomain|lan|cluster|corp|intra|svc))\b|\b(ip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3})\b|\b([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*):\d+:\d+ \[\d+\]))",
      [] {
        RE2::Options o;
        o.set_log_errors(false);
        return o;
      }());
  return k_re;
}

void learn_evidence(Redaction& r, const correlate::Evidence& e) {
  if (e.ctx.host) {
    r.learn_host(e.ctx.host->value);
  }
  r.learn_from_text(e.text);
}

// A traceback's code lines and chained exceptions name hosts too
// (init_method='tcp://gpu-b07.cluster.internal:29500', a gaierror).
void learn_traceback(Redaction& r, const std::shared_ptr<const context::Traceback>& tb) {
  if (!tb) {
    return;
  }
  r.learn_from_text(tb->header_line);
  for (const auto& f : tb->frames) {
    r.learn_from_text(f.code);
  }
  for (const auto& c : tb->chain) {
    r.learn_from_text(c.text);
  }
}

void learn_group(Redaction& r, const correlate::Group& g) {
  learn_evidence(r, g.first);
  for (const auto& h : g.hosts) {
    r.learn_host(h);
  }
}

} // namespace

void Redaction::learn_host(std::string_view h) {
  if (h.empty() || h.front() == '<' || m_hosts.find(h) != m_hosts.end()) {
    return;
  }
  m_hosts.emplace(std::string(h), "<host-" + std::to_string(m_hosts.size() + 1) + ">");
}

void Redaction::learn_from_text(std::string_view line) {
  re2::StringPiece rest(line.data(), line.size());
  std::string a;
  std::string b;
  std::string c;
  std::string n;
  while (RE2::FindAndConsume(&rest, host_in_text(), &a, &b, &c, &n)) {
    for (const auto* h : {&a, &b, &c, &n}) {
      if (!h->empty() && *h != "localhost") {
        learn_host(*h);
      }
    }
  }
}

Redaction::Redaction(const correlate::Diagnosis& d) {
  for (const auto& inc : d.incidents) {
    learn_evidence(*this, inc.first);
    for (const auto& h : inc.hosts) {
      learn_host(h);
    }
    for (const auto& g : inc.collateral) {
      learn_group(*this, g);
    }
    for (const auto& g : inc.context) {
      learn_group(*this, g);
    }
    if (inc.said_above) {
      learn_evidence(*this, *inc.said_above);
    }
    if (inc.rank_from) {
      learn_evidence(*this, *inc.rank_from);
    }
    learn_traceback(*this, inc.traceback);
    for (const auto& c : inc.later) {
      learn_from_text(c.text);
    }
    if (inc.decision && inc.decision->clock_risk) {
      learn_host(inc.decision->clock_risk->host);
      learn_evidence(*this, inc.decision->clock_risk->first);
    }
  }
  for (const auto& g : d.unexplained) {
    learn_group(*this, g);
  }
  for (const auto& sp : d.starting_points) {
    learn_evidence(*this, sp.first);
  }
  for (const auto& l : d.identities) {
    learn_host(l.host);
  }
  for (const auto& h : d.evidence) {
    if (h.ctx.host) {
      learn_host(h.ctx.host->value);
    }
    for (const auto& [name, value] : h.captures) {
      if (name == "host") {
        learn_host(value);
      }
    }
    learn_from_text(h.text);
    learn_traceback(*this, h.traceback);
  }
}

std::string Redaction::text(std::string s) const {
  for (const auto& r : rules()) {
    replace_all(s, r, false);
  }
  // Longest host names first, so node-0171 is not half-replaced by node-017.
  std::vector<const std::pair<const std::string, std::string>*> hosts;
  for (const auto& h : m_hosts) {
    hosts.push_back(&h);
  }
  std::stable_sort(hosts.begin(), hosts.end(), [](auto* a, auto* b) { return a->first.size() > b->first.size(); });
  for (const auto* h : hosts) {
    std::size_t pos = 0;
    while ((pos = s.find(h->first, pos)) != std::string::npos) {
      s.replace(pos, h->first.size(), h->second);
      pos += h->second.size();
    }
  }
  return s;
}

std::string Redaction::output(std::string_view format, std::string s) const {
  if (format != "html") {
    return text(std::move(s));
  }
  for (const auto& r : rules()) {
    replace_all(s, r, true);
  }
  std::vector<std::pair<std::string, std::string>> hosts;
  for (const auto& [host, token] : m_hosts) {
    hosts.emplace_back(host, html_spelling(token));
  }
  std::stable_sort(hosts.begin(), hosts.end(), [](auto& a, auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [host, token] : hosts) {
    std::size_t pos = 0;
    while ((pos = s.find(host, pos)) != std::string::npos) {
      s.replace(pos, host.size(), token);
      pos += token.size();
    }
  }
  return s;
}

namespace {

void mask_evidence(const Redaction& r, correlate::Evidence& e) {
  e.text = r.text(e.text);
  if (e.ctx.host) {
    e.ctx.host->value = r.text(e.ctx.host->value);
  }
}

// A traceback's file names, code lines and chained exception lines.
void mask_traceback(const Redaction& r, std::shared_ptr<const context::Traceback>& tb) {
  if (!tb) {
    return;
  }
  auto copy = *tb;
  for (auto& f : copy.frames) {
    f.file = r.text(f.file);
    f.code = r.text(f.code);
  }
  for (auto& c : copy.chain) {
    c.text = r.text(c.text);
  }
  tb = std::make_shared<const context::Traceback>(std::move(copy));
}

void mask_hosts(const Redaction& r, std::set<std::string>& hosts) {
  std::set<std::string> masked;
  for (const auto& h : hosts) {
    masked.insert(r.text(h));
  }
  hosts = std::move(masked);
}

void mask_group(const Redaction& r, correlate::Group& g) {
  mask_evidence(r, g.first);
  mask_hosts(r, g.hosts);
}

void mask_incident(const Redaction& r, correlate::Incident& inc) {
  mask_evidence(r, inc.first);
  if (inc.said_above) {
    mask_evidence(r, *inc.said_above);
  }
  if (inc.rank_from) {
    mask_evidence(r, *inc.rank_from);
  }
  inc.headline = r.text(inc.headline);
  mask_traceback(r, inc.traceback);
  for (auto& c : inc.later) {
    c.text = r.text(c.text);
  }
  mask_hosts(r, inc.hosts);
  if (inc.decision && inc.decision->clock_risk) {
    auto& risk = *inc.decision->clock_risk;
    risk.host = r.text(risk.host);
    mask_evidence(r, risk.first);
  }
  for (auto& m : inc.missing) { // the words are made from these at print time
    m.host = r.text(m.host);
    m.other_host = r.text(m.other_host);
    m.gpu = r.text(m.gpu);
  }
  for (auto& st : inc.signals) {
    if (st.first) {
      mask_evidence(r, *st.first);
    }
  }
  for (auto& g : inc.collateral) {
    mask_group(r, g);
  }
  for (auto& g : inc.context) {
    mask_group(r, g);
  }
}

} // namespace

void Redaction::apply(correlate::Diagnosis& d) const {
  for (auto& s : d.sources) {
    s.name = text(s.name);
    s.findings = text(s.findings);
  }
  // The hits and progress marks --format jsonl writes for a later merge.
  for (auto& h : d.evidence) {
    h.text = text(h.text);
    if (h.ctx.host) {
      h.ctx.host->value = text(h.ctx.host->value);
    }
    for (auto& c : h.captures) {
      c.second = text(c.second);
    }
    mask_traceback(*this, h.traceback);
  }
  for (auto& m : d.progress) {
    m.text = text(m.text);
  }
  for (auto& l : d.identities) {
    l.host = text(l.host);
  }
  for (auto& inc : d.incidents) {
    mask_incident(*this, inc);
  }
  for (auto& g : d.unexplained) {
    mask_group(*this, g);
  }
  for (auto& sp : d.starting_points) {
    mask_evidence(*this, sp.first);
    sp.template_text = text(sp.template_text);
  }
}

Redaction redact(correlate::Diagnosis& d) {
  Redaction r(d);
  r.apply(d);
  return r;
}

std::string redact_text(const std::string& s) { return Redaction().text(s); }

} // namespace denpex::report
