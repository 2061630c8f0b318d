#include <denpex/report/redact.hpp>

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include <re2/re2.h>

namespace denpex::report {

namespace {

struct Rule {
  std::unique_ptr<RE2> re;
  std::string replacement;
  bool (*accept)(std::string_view match) = nullptr; // nullptr: every match
};

// A long base64 run is a secret only if it mixes digits and both cases:
// "torch/distributed/elastic/multiprocessing/api" is a path, not a key.
bool looks_random(std::string_view m) {
  const auto has = [&](auto pred) { return std::any_of(m.begin(), m.end(), [&](char c) { return pred(c); }); };
  return has([](char c) { return c >= '0' && c <= '9'; }) && has([](char c) { return c >= 'A' && c <= 'Z'; }) &&
         has([](char c) { return c >= 'a' && c <= 'z'; });
}

// Replaces the matches of `rule` that it accepts.
void replace_all(std::string& s, const Rule& rule) {
  if (rule.accept == nullptr) {
    RE2::GlobalReplace(&s, *rule.re, rule.replacement);
    return;
  }
  std::string out;
  re2::StringPiece rest(s);
  re2::StringPiece piece;
  while (RE2::PartialMatch(rest, *rule.re, &piece)) {
    const std::string_view m(piece.data(), piece.size());
    const auto at = static_cast<std::size_t>(m.data() - rest.data());
    out.append(rest.data(), at);
    out.append(rule.accept(m) ? std::string_view(rule.replacement) : m);
    if (m.empty()) {
      break; // the patterns never match empty text; never loop on one that does
    }
    rest.remove_prefix(at + m.size());
  }
  out.append(rest.data(), rest.size());
  s = std::move(out);
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> k_rules = [] {
    RE2::Options o;
    o.set_log_errors(false);
    struct Def {
      const char* pattern;
      const char* replacement;
      bool (*accept)(std::string_view) = nullptr;
    };
    const Def defs[] = {
        // Secrets first: they may contain things that look like addresses.
        {R"((?i)\b(?:bearer|token|api[_-]?key|secret|password|passwd)\s*[=:]\s*["']?[^\s"',;]{6,})", "<secret>"},
        {R"(\b(?:hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}))", "<secret>"},
        {R"(\b([A-Za-z0-9+/]{40,}={0,2}))", "<secret>", looks_random},
        {R"(\b[0-9a-fA-F]{32,}\b)", "<secret>"},
        {R"(\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b)", "<email>"},
        {R"(\b(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b)", "<ip>"},
        {R"((?i)\b(?:[0-9a-f]{1,4}:){3,7}[0-9a-f]{1,4}\b|::ffff:<ip>)", "<ip>"},
    };
    std::vector<Rule> out;
    for (const auto& d : defs) {
      out.push_back(Rule{std::make_unique<RE2>(d.pattern, o), d.replacement, d.accept});
    }
    return out;
  }();
  return k_rules;
}

class Redactor {
public:
  void learn_host(const std::string& h) {
    if (!h.empty() && h.rfind("<", 0) != 0 && m_hosts.count(h) == 0) {
      m_hosts.emplace(h, "<host-" + std::to_string(m_hosts.size() + 1) + ">");
    }
  }

  std::string apply(std::string s) const {
    for (const auto& r : rules()) {
      replace_all(s, r);
    }
    // Longest host names first, so node-0171 is not half-replaced by node-017.
    std::vector<const std::pair<const std::string, std::string>*> hosts;
    for (const auto& h : m_hosts) {
      hosts.push_back(&h);
    }
    std::sort(hosts.begin(), hosts.end(), [](auto* a, auto* b) { return a->first.size() > b->first.size(); });
    for (const auto* h : hosts) {
      std::size_t pos = 0;
      while ((pos = s.find(h->first, pos)) != std::string::npos) {
        s.replace(pos, h->first.size(), h->second);
        pos += h->second.size();
      }
    }
    return s;
  }

  void evidence(correlate::Evidence& e) const {
    e.text = apply(e.text);
    if (e.ctx.host) {
      e.ctx.host->value = apply(e.ctx.host->value);
    }
  }

  // A traceback's file names, code lines and chained exception lines.
  void traceback(std::shared_ptr<const context::Traceback>& tb) const {
    if (!tb) {
      return;
    }
    auto copy = *tb;
    for (auto& f : copy.frames) {
      f.file = apply(f.file);
      f.code = apply(f.code);
    }
    for (auto& c : copy.chain) {
      c.text = apply(c.text);
    }
    tb = std::make_shared<const context::Traceback>(std::move(copy));
  }

  void group(correlate::Group& g) const {
    evidence(g.first);
    std::set<std::string> hosts;
    for (const auto& h : g.hosts) {
      hosts.insert(apply(h));
    }
    g.hosts = std::move(hosts);
  }

private:
  std::map<std::string, std::string> m_hosts;
};

void collect_hosts(const correlate::Evidence& e, Redactor& r) {
  if (e.ctx.host) {
    r.learn_host(e.ctx.host->value);
  }
}

} // namespace

void redact(correlate::Diagnosis& d) {
  Redactor r;
  for (const auto& inc : d.incidents) {
    collect_hosts(inc.first, r);
    for (const auto& h : inc.hosts) {
      r.learn_host(h);
    }
    for (const auto& g : inc.collateral) {
      collect_hosts(g.first, r);
      for (const auto& h : g.hosts) {
        r.learn_host(h);
      }
    }
    for (const auto& g : inc.context) {
      collect_hosts(g.first, r);
    }
  }
  for (const auto& g : d.unexplained) {
    collect_hosts(g.first, r);
    for (const auto& h : g.hosts) {
      r.learn_host(h);
    }
  }
  for (const auto& sp : d.starting_points) {
    collect_hosts(sp.first, r);
  }
  for (const auto& inc : d.incidents) {
    if (inc.said_above) {
      collect_hosts(*inc.said_above, r);
    }
    if (inc.rank_from) {
      collect_hosts(*inc.rank_from, r);
    }
  }
  for (const auto& h : d.evidence) {
    if (h.ctx.host) {
      r.learn_host(h.ctx.host->value);
    }
  }
  for (auto& s : d.sources) {
    s.name = r.apply(s.name);
    s.findings = r.apply(s.findings);
  }
  // The hits and progress marks --format jsonl writes for a later merge.
  for (auto& h : d.evidence) {
    h.text = r.apply(h.text);
    if (h.ctx.host) {
      h.ctx.host->value = r.apply(h.ctx.host->value);
    }
    for (auto& c : h.captures) {
      c.second = r.apply(c.second);
    }
    r.traceback(h.traceback);
  }
  for (auto& m : d.progress) {
    m.text = r.apply(m.text);
  }
  for (auto& inc : d.incidents) {
    r.evidence(inc.first);
    if (inc.said_above) {
      r.evidence(*inc.said_above);
    }
    if (inc.rank_from) {
      r.evidence(*inc.rank_from);
    }
    inc.headline = r.apply(inc.headline);
    r.traceback(inc.traceback);
    for (auto& c : inc.later) {
      c.text = r.apply(c.text);
    }
    std::set<std::string> hosts;
    for (const auto& h : inc.hosts) {
      hosts.insert(r.apply(h));
    }
    inc.hosts = std::move(hosts);
    for (auto& st : inc.signals) {
      if (st.first) {
        r.evidence(*st.first);
      }
    }
    for (auto& g : inc.collateral) {
      r.group(g);
    }
    for (auto& g : inc.context) {
      r.group(g);
    }
  }
  for (auto& g : d.unexplained) {
    r.group(g);
  }
  for (auto& sp : d.starting_points) {
    r.evidence(sp.first);
    sp.template_text = r.apply(sp.template_text);
  }
}

std::string redact_text(const std::string& s) {
  Redactor r;
  return r.apply(s);
}

} // namespace denpex::report
