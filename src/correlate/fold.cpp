// Pass: fold. The same failure across ranks, lines and layers becomes one
// incident: entries are raised by their anchor signals, the most specific
// cause wins its line, cause hits fold into one incident per (entry, GPU)
// with counts, ranks and hosts, and supporting signals add their evidence.
#include "passes.hpp"

#include <denpex/correlate/rules.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include <denpex/util/strings.hpp>

namespace denpex::correlate::detail {

namespace {

using catalog::Role;

// An entry is raised when an anchor signal hit and, if it requires other
// evidence (nccl.nvls.cuda-700 needs NVLS in use), some of it was seen
// (RaisedEntries, rules.hpp).
void mark_raised(State& s) {
  RaisedEntries raised(s.cat);
  for (const auto& r : s.records) {
    raised.add(*r.hit);
  }
  for (auto& r : s.records) {
    r.raised = raised.raised(r.hit->signature);
  }
}

// On one line, the highest-priority raised cause wins; other causes and
// symptoms on it fold into it (a line that is both a Python exception and a
// CUDA OOM is an OOM).
void fold_same_line(State& s) {
  std::vector<std::size_t> order(s.records.size());
  std::iota(order.begin(), order.end(), 0);
  auto pos = [&](std::size_t i) { return std::make_pair(s.records[i].hit->source, s.records[i].hit->line_no); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return pos(a) < pos(b); });
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && pos(order[j]) == pos(order[i])) {
      ++j;
    }
    int best = -1;
    std::size_t best_idx = 0;
    LineCauses line; // its raised causes and symptoms (rules.hpp)
    std::shared_ptr<const context::Traceback> traceback;
    for (std::size_t k = i; k < j; ++k) {
      if (s.records[order[k]].hit->traceback) {
        traceback = s.records[order[k]].hit->traceback;
      }
    }
    for (std::size_t k = i; k < j; ++k) {
      auto& r = s.records[order[k]];
      r.traceback = traceback;
      const auto& sig = s.cat.at(r.hit->signature);
      // Generic evidence (an entry with a headline) ranks below every
      // catalogued cause on its line, wrappers included: the NCCL entry names
      // "RuntimeError: NCCL error: unhandled system error", not the generic one.
      const int rank_on_line = sig.headline.empty() ? sig.priority + 1000 : sig.priority;
      if (sig.role == Role::cause && r.raised) {
        line.add_cause(sig);
        if (rank_on_line > best) {
          best = rank_on_line;
          best_idx = order[k];
        }
      } else if (sig.role == Role::symptom && r.raised) {
        line.add_raised_symptom();
      }
    }
    // Generic evidence (an exception's own words) is not a cause when any
    // entry that knows the line better names it (ChildFailedError is a
    // wrapper, BrokenPipeError during teardown is collateral). It wins its
    // line only when every raised cause there is generic.
    if (line.overruled()) {
      DENPEX_ASSERT(best >= 0 && !s.cat.at(s.records[best_idx].hit->signature).headline.empty());
      s.records[best_idx].folded = true;
      best = -1;
    }
    if (best >= 0) {
      const auto winner = s.records[best_idx].hit->signature;
      for (std::size_t k = i; k < j; ++k) {
        auto& r = s.records[order[k]];
        if (order[k] != best_idx && s.cat.at(r.hit->signature).role != Role::context && r.hit->signature != winner) {
          r.folded = true;
        }
      }
    }
    i = j;
  }
}

bool is_generic_evidence(const State& s, const Record& r) {
  return !s.cat.at(r.hit->signature).headline.empty();
}

// An exception chain is one failure. Its exceptions fold into one of them:
// the root of the run of direct causes that ends the chain ("raise X from
// Y": Y is the cause, X a wrapper such as "worker exited unexpectedly"),
// else the last exception (raised while handling the earlier ones; it is what
// the program died of). The kept one lists the exceptions raised after it
// (Record::later). When a catalogued cause raised any line of the chain (a
// CUDA OOM handled and re-raised as a RuntimeError), that cause stands and
// the generic exceptions of the chain fold.
void fold_chains(State& s) {
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<std::size_t>> at;
  for (std::size_t i = 0; i < s.records.size(); ++i) {
    if (s.cat.at(s.records[i].hit->signature).role == Role::cause && s.records[i].raised) {
      at[{s.records[i].hit->source, s.records[i].hit->line_no}].push_back(i);
    }
  }
  auto generic_at = [&](std::uint32_t source, std::uint64_t line) -> Record* {
    if (auto it = at.find({source, line}); it != at.end()) {
      for (const auto q : it->second) {
        if (is_generic_evidence(s, s.records[q]) && !s.records[q].folded) {
          return &s.records[q];
        }
      }
    }
    return nullptr;
  };
  for (auto& r : s.records) {
    if (!r.traceback || r.traceback->chain.empty() || r.folded || !is_generic_evidence(s, r)) {
      continue;
    }
    const auto& chain = r.traceback->chain;
    std::optional<std::size_t> root; // index of the first direct cause of the run ending at r
    for (std::size_t k = chain.size(); k-- > 0 && chain[k].link == context::ChainLink::direct_cause;) {
      root = k;
    }
    Record* keep = &r;
    if (root) {
      if (Record* q = generic_at(r.hit->source, chain[*root].line_no)) {
        keep = q;
      }
    }
    bool catalogued = false;
    for (const auto& link : chain) {
      if (auto it = at.find({r.hit->source, link.line_no}); it != at.end()) {
        for (const auto q : it->second) {
          auto& earlier = s.records[q];
          if (!is_generic_evidence(s, earlier)) {
            catalogued = catalogued || !earlier.folded;
          } else if (&earlier != keep) {
            earlier.folded = true;
          }
        }
      }
    }
    if (catalogued) {
      r.folded = true;
      keep->folded = true;
      continue;
    }
    if (keep != &r) {
      r.folded = true;
      keep->later.assign(chain.begin() + static_cast<std::ptrdiff_t>(*root) + 1, chain.end());
      const auto own = context::launcher_prefix(r.hit->text);
      keep->later.push_back(context::ChainedException{
          std::string(util::trim(std::string_view(r.hit->text).substr(std::min(own.body, r.hit->text.size())))),
          r.hit->line_no, context::ChainLink::direct_cause});
    }
  }
}

bool is_cause(const State& s, const Record& r) {
  return s.cat.at(r.hit->signature).role == Role::cause && r.raised && !r.folded;
}

void record_signal(Work& w, const Record& r) {
  auto& st = w.inc.signals[r.hit->signal];
  st.count += r.hit->count;
  if (!st.first) {
    st.first = evidence_of(r);
  }
  if (auto cb = capture(*r.hit, "caused_by"); !cb.empty() && w.inc.caused_by.empty()) {
    w.inc.caused_by = cb;
  }
}

// The entry's headline filled from the line's captures ("" without one).
std::string headline_of(const State& s, const Record& r) {
  const auto& tpl = s.cat.at(r.hit->signature).headline;
  std::string out;
  for (std::size_t i = 0; i < tpl.size(); ++i) {
    const auto end = tpl[i] == '{' ? tpl.find('}', i) : std::string::npos;
    if (end == std::string::npos) {
      out += tpl[i];
      continue;
    }
    out += util::trim(capture(*r.hit, std::string_view(tpl).substr(i + 1, end - i - 1)));
    i = end;
  }
  // "std::bad_alloc: std::bad_alloc": a message that only repeats the type.
  if (const auto sep = out.find(": "); sep != std::string::npos && out.compare(sep + 2, std::string::npos, out, 0, sep) == 0) {
    out.resize(sep);
  }
  // "AssertionError: " with an empty message: no dangling separator.
  while (!out.empty() && (out.back() == ' ' || out.back() == ':')) {
    out.pop_back();
  }
  return out;
}

// An incident of entry `signature` first seen on record `r`.
Work new_incident(const State& s, const Record& r, std::uint32_t signature, std::string headline) {
  Work w;
  w.inc.signature = signature;
  w.inc.headline = std::move(headline);
  w.inc.first = evidence_of(r);
  w.inc.pci = r.pci;
  w.inc.traceback = r.traceback;
  w.inc.later = r.later;
  w.first_time = r.stamp;
  const auto n = s.cat.at(signature).signals.size();
  for (std::uint32_t k = 0; k < n; ++k) {
    w.inc.signals.push_back(SignalStatus{k, 0, std::nullopt});
  }
  return w;
}

// Anchor signals say where and when a failure happened: one incident per
// (entry, GPU bus id when the line names one).
// Generic evidence folds by its headline with numbers masked: the same
// exception on eight ranks is one incident, a different one another.
void seed_incidents(State& s) {
  std::map<std::tuple<std::uint32_t, std::string, std::string>, std::size_t> by_key;
  for (const auto& r : s.records) {
    if (!is_cause(s, r) || !s.cat.at(r.hit->signature).signals[r.hit->signal].anchor) {
      continue;
    }
    auto headline = headline_of(s, r);
    const auto key = std::make_tuple(r.hit->signature, r.pci, util::message_template(headline));
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      it = by_key.emplace(key, s.work.size()).first;
      s.work.push_back(new_incident(s, r, r.hit->signature, std::move(headline)));
    }
    Work& w = s.work[it->second];
    if (earlier_than(r, w.inc.first)) {
      w.inc.first = evidence_of(r);
      w.inc.traceback = r.traceback;
      w.inc.later = r.later;
      w.first_time = r.stamp;
    }
    if (r.stamp && !borrowed_stamp(*r.hit)) {
      if (!w.own_earliest || (comparable(r.stamp, w.own_earliest) && r.stamp->t < w.own_earliest->t)) {
        w.own_earliest = r.stamp;
      }
      if (!w.own_latest || (comparable(r.stamp, w.own_latest) && r.stamp->t > w.own_latest->t)) {
        w.own_latest = r.stamp;
      }
    }
    w.inc.count += r.hit->count;
    auto& last = w.last_lines[r.hit->source];
    last = std::max({last, r.hit->line_no, r.hit->last_line_no});
    insert_ranks(w.inc.ranks, r);
    if (!r.host.empty()) {
      w.inc.hosts.insert(r.host);
    }
    record_signal(w, r);
  }
}

// The same exception on several ranks at once (a configuration or code
// error every rank hits): no rank started it. Without comparable stamps
// there is no telling which rank was first either.
void mark_simultaneous(State& s) {
  for (auto& w : s.work) {
    if (w.inc.ranks.size() < 2 || s.cat.at(w.inc.signature).headline.empty()) {
      continue;
    }
    w.inc.simultaneous = !comparable(w.own_earliest, w.own_latest) ||
                         w.own_latest->t - w.own_earliest->t <= s.options.skew_us;
  }
}

// A line without a bus id (the multi-line "fallen off the bus" text) joins
// its entry's incident when exactly one GPU has one.
void join_busless(State& s) {
  for (auto& w : s.work) {
    if (!w.inc.pci.empty() || w.absorbed) {
      continue;
    }
    std::vector<std::size_t> peers;
    for (std::size_t k = 0; k < s.work.size(); ++k) {
      if (s.work[k].inc.signature == w.inc.signature && !s.work[k].inc.pci.empty()) {
        peers.push_back(k);
      }
    }
    if (peers.size() != 1) {
      continue;
    }
    auto& target = s.work[peers[0]].inc;
    target.count += w.inc.count;
    target.ranks.insert(w.inc.ranks.begin(), w.inc.ranks.end());
    target.hosts.insert(w.inc.hosts.begin(), w.inc.hosts.end());
    for (std::size_t k = 0; k < target.signals.size(); ++k) {
      target.signals[k].count += w.inc.signals[k].count;
      if (!target.signals[k].first) {
        target.signals[k].first = w.inc.signals[k].first;
      }
    }
    w.absorbed = true;
  }
}

// Supporting signals add evidence to their entry's incident (the one on the
// same GPU if there is one); they never say where or when.
void add_supporting(State& s) {
  for (const auto& r : s.records) {
    if (!is_cause(s, r) || s.cat.at(r.hit->signature).signals[r.hit->signal].anchor) {
      continue;
    }
    Work* target = nullptr;
    for (auto& w : s.work) {
      if (w.absorbed || w.inc.signature != r.hit->signature) {
        continue;
      }
      if (target == nullptr || (!r.pci.empty() && w.inc.pci == r.pci)) {
        target = &w;
      }
    }
    if (target != nullptr) {
      record_signal(*target, r);
    }
  }
}

// A report that names its cause ("Xid 45 ... caused by previous Xid 149")
// when that cause's own line is not in the logs: the named cause is still
// the failure, inferred from the report.
// A monitoring tool's report of an Xid (gpud, DCGM, NVSentinel, the device
// plugin: `reports_xid`) stands for the kernel's line the same way.
void seed_named_causes(State& s) {
  for (const auto& r : s.records) {
    auto named = capture(*r.hit, "caused_by");
    const bool from_tool = named.empty();
    if (from_tool) {
      named = capture(*r.hit, "reports_xid");
    }
    if (named.empty() || s.cat.at(r.hit->signature).role == Role::cause) {
      continue;
    }
    const auto id = xid_entry(s.cat, named);
    if (!id || s.cat.at(*id).role != Role::cause) {
      continue;
    }
    const bool present = std::any_of(s.work.begin(), s.work.end(), [&](const Work& w) {
      return w.inc.signature == *id && (w.inc.pci.empty() || r.pci.empty() || w.inc.pci == r.pci);
    });
    if (present) {
      continue;
    }
    Work w = new_incident(s, r, static_cast<std::uint32_t>(*id), {});
    w.inc.inferred_xid = named;
    w.inc.inferred_from_tool = from_tool;
    insert_ranks(w.inc.ranks, r);
    if (!r.host.empty()) {
      w.inc.hosts.insert(r.host);
    }
    MissingFact m;
    m.kind = MissingFact::Kind::xid_line;
    m.xid = named;
    m.gpu = r.pci.empty() ? std::string("?") : r.pci;
    w.inc.missing.push_back(std::move(m));
    s.work.push_back(std::move(w));
  }
}

} // namespace

void pass_fold(State& s) {
  mark_raised(s);
  fold_same_line(s);
  fold_chains(s);
  seed_incidents(s);
  mark_simultaneous(s);
  join_busless(s);
  add_supporting(s);
  seed_named_causes(s);
}

} // namespace denpex::correlate::detail
