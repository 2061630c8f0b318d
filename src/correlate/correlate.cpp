#include <denpex/correlate/correlate.hpp>

#include <algorithm>
#include <ctime>
#include <limits>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include <denpex/util/strings.hpp>

namespace denpex::correlate {

namespace {

using catalog::Role;

constexpr int k_generic_priority = 30;
constexpr std::int64_t k_day_us = 86'400'000'000;

// A time on one clock: domain 0 is the normalised wall clock shared by all
// sources; domain N+1 is source N's own seconds-since-boot (raw dmesg), which
// compares only with itself.
struct Stamp {
  std::int64_t t;
  std::uint32_t domain;
};
using Time = std::optional<Stamp>;

bool comparable(const Time& a, const Time& b) { return a && b && a->domain == b->domain; }

struct Prepared {
  const Hit* hit;
  std::optional<std::int64_t> time_us; // wall clock only (for the report)
  Time stamp;
  std::optional<int> rank;
  std::string host;
  std::string pci;
  bool folded = false; // a more specific cause on the same line took it
};

std::string capture(const Hit& h, std::string_view name) {
  for (const auto& [k, v] : h.captures) {
    if (k == name) {
      return v;
    }
  }
  return {};
}

int year_of(std::int64_t epoch_seconds) {
  std::time_t t = epoch_seconds;
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm.tm_year + 1900;
}


Time stamp_of(const Evidence& e) {
  if (e.time_us) {
    return Stamp{*e.time_us, 0};
  }
  if (e.ctx.time.kind == context::ClockKind::monotonic) {
    return Stamp{e.ctx.time.mono_micros, e.source + 1};
  }
  return std::nullopt;
}

// Whether hit `p` comes before the line kept as `e`: by time where both
// stamps are on one clock, else by input position.
bool earlier_than(const Prepared& p, const Evidence& e) {
  const Time te = stamp_of(e);
  if (comparable(p.stamp, te) && p.stamp->t != te->t) {
    return p.stamp->t < te->t;
  }
  return std::tie(p.hit->source, p.hit->line_no) < std::tie(e.source, e.line_no);
}

Evidence evidence_of(const Prepared& p) {
  Evidence e;
  e.source = p.hit->source;
  e.line_no = p.hit->line_no;
  e.text = p.hit->text;
  e.ctx = p.hit->ctx;
  e.time_us = p.time_us;
  e.signal = p.hit->signal;
  if (p.rank && !e.ctx.rank) {
    e.ctx.rank = context::Field<int>{*p.rank, context::Origin::capture};
  }
  if (!p.host.empty() && !e.ctx.host) {
    e.ctx.host = context::Field<std::string>{p.host, context::Origin::capture};
  }
  if (!p.pci.empty() && !e.ctx.pci) {
    e.ctx.pci = context::Field<std::string>{p.pci, context::Origin::capture};
  }
  return e;
}

void add_to_group(std::vector<Group>& groups, const Prepared& p) {
  auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.signature == p.hit->signature; });
  if (it == groups.end()) {
    Group g;
    g.signature = p.hit->signature;
    g.first = evidence_of(p);
    groups.push_back(std::move(g));
    it = groups.end() - 1;
  } else {
    if (earlier_than(p, it->first)) {
      it->first = evidence_of(p);
    }
  }
  it->count += p.hit->count;
  if (p.rank) {
    it->ranks.insert(*p.rank);
  }
  if (!p.host.empty()) {
    it->hosts.insert(p.host);
  }
}

std::string format_ranks(const std::vector<int>& ranks) {
  std::string out;
  std::size_t i = 0;
  while (i < ranks.size()) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) {
      ++j;
    }
    if (!out.empty()) {
      out += ",";
    }
    out += j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

struct Work {
  Incident inc;
  Time first_time;
  bool absorbed = false;
};

} // namespace

std::string_view to_string(Confidence c) {
  switch (c) {
  case Confidence::low:
    return "low";
  case Confidence::medium:
    return "medium";
  case Confidence::high:
    return "high";
  }
  return "?";
}

Diagnosis correlate(std::vector<Hit> hits, std::vector<SourceRef> sources, const catalog::Catalog& cat,
                    const CorrelateOptions& options, const std::vector<ProgressMark>& progress) {
  Diagnosis d;
  d.sources = std::move(sources);
  for (const auto& h : hits) {
    d.hits += h.count;
  }

  // --- Clocks: pick the year for year-less stamps (syslog, glog). ---
  int ref_year = 0;
  std::optional<std::int64_t> latest_us;
  for (const auto& h : hits) {
    if (h.ctx.time.kind == context::ClockKind::wall && h.ctx.time.wall.year != 0) {
      ref_year = std::max(ref_year, h.ctx.time.wall.year);
      const auto t = context::to_epoch_micros(h.ctx.time.wall, 0);
      latest_us = latest_us ? std::max(*latest_us, t) : t;
    }
  }
  std::string year_from = "stamps with a year";
  if (options.assume_year != 0) {
    ref_year = options.assume_year;
    year_from = "--year";
  }
  if (ref_year == 0) {
    for (const auto& s : d.sources) {
      if (s.mtime) {
        ref_year = std::max(ref_year, year_of(*s.mtime));
        const auto t = *s.mtime * 1'000'000;
        latest_us = latest_us ? std::max(*latest_us, t) : t;
        year_from = "file modification time";
      }
    }
  }
  if (ref_year == 0) {
    ref_year = options.now_year;
    year_from = "the current year";
  }
  d.assumed_year = ref_year;

  std::vector<Prepared> prep;
  prep.reserve(hits.size());
  bool any_yearless = false;
  bool any_zoneless = false;
  bool any_mono = false;
  for (const auto& h : hits) {
    Prepared p{&h, std::nullopt, std::nullopt, std::nullopt, {}, {}};
    if (h.ctx.time.kind == context::ClockKind::wall) {
      const auto& w = h.ctx.time.wall;
      auto t = context::to_epoch_micros(w, ref_year);
      if (w.year == 0) {
        any_yearless = true;
        if (latest_us && t > *latest_us + k_day_us) {
          t = context::to_epoch_micros(w, ref_year - 1); // across New Year
        }
      }
      any_zoneless = any_zoneless || !w.tz_minutes;
      p.time_us = t;
      p.stamp = Stamp{t, 0};
    } else if (h.ctx.time.kind == context::ClockKind::monotonic) {
      any_mono = true;
      p.stamp = Stamp{h.ctx.time.mono_micros, h.source + 1};
    }
    if (h.ctx.rank) {
      p.rank = h.ctx.rank->value;
    } else if (auto r = capture(h, "rank"); !r.empty()) {
      p.rank = std::atoi(r.c_str());
    }
    p.host = h.ctx.host ? h.ctx.host->value : capture(h, "host");
    p.pci = h.ctx.pci ? h.ctx.pci->value : context::normalize_pci(capture(h, "pci"));
    prep.push_back(std::move(p));
  }
  {
    std::vector<std::string> notes;
    if (any_yearless) {
      notes.push_back(fmt::format("stamps without a year were placed in {} (from {})", ref_year, year_from));
    }
    if (any_zoneless) {
      notes.push_back("stamps without a zone are read as one local clock");
    }
    if (any_mono) {
      notes.push_back("dmesg seconds-since-boot compare only within their own file");
    }
    for (const auto& n : notes) {
      d.clock_note += d.clock_note.empty() ? n : "; " + n;
    }
  }

  // --- Which entries are raised (an anchor signal was seen). ---
  std::vector<bool> raised(cat.size(), false);
  std::vector<bool> required_seen(cat.size(), false);
  for (const auto& p : prep) {
    const auto& sig = cat.at(p.hit->signature);
    const auto& signal_id = sig.signals[p.hit->signal].id;
    if (std::find(sig.requires_any.begin(), sig.requires_any.end(), signal_id) != sig.requires_any.end()) {
      required_seen[p.hit->signature] = true;
    }
  }
  for (const auto& p : prep) {
    const auto& sig = cat.at(p.hit->signature);
    if (sig.signals[p.hit->signal].anchor && (sig.requires_any.empty() || required_seen[p.hit->signature])) {
      raised[p.hit->signature] = true;
    }
  }

  // --- Same line: the most specific cause wins. ---
  std::vector<std::size_t> order(prep.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& ha = *prep[a].hit;
    const auto& hb = *prep[b].hit;
    return std::tie(ha.source, ha.line_no) < std::tie(hb.source, hb.line_no);
  });
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && prep[order[j]].hit->source == prep[order[i]].hit->source &&
           prep[order[j]].hit->line_no == prep[order[i]].hit->line_no) {
      ++j;
    }
    int best = -1;
    std::size_t best_idx = 0;
    for (std::size_t k = i; k < j; ++k) {
      const auto& p = prep[order[k]];
      const auto& sig = cat.at(p.hit->signature);
      if (sig.role == Role::cause && raised[p.hit->signature] && sig.priority > best) {
        best = sig.priority;
        best_idx = order[k];
      }
    }
    if (best >= 0) {
      for (std::size_t k = i; k < j; ++k) {
        auto& p = prep[order[k]];
        const auto& sig = cat.at(p.hit->signature);
        if (order[k] != best_idx && sig.role != Role::context && p.hit->signature != prep[best_idx].hit->signature) {
          p.folded = true;
        }
      }
    }
    i = j;
  }

  // --- Causes seed incidents: one per (entry, GPU). ---
  std::vector<Work> work;
  std::map<std::pair<std::uint32_t, std::string>, std::size_t> by_key;
  auto record_signal = [&](Work& w, const Prepared& p) {
    auto& st = w.inc.signals[p.hit->signal];
    st.count += p.hit->count;
    if (!st.first) {
      st.first = evidence_of(p);
    }
    if (auto cb = capture(*p.hit, "caused_by"); !cb.empty() && w.inc.caused_by.empty()) {
      w.inc.caused_by = cb;
    }
  };
  // Pass 1: anchor signals say where and when a failure happened.
  for (const auto& p : prep) {
    const auto& sig = cat.at(p.hit->signature);
    if (sig.role != Role::cause || !raised[p.hit->signature] || p.folded || !sig.signals[p.hit->signal].anchor) {
      continue;
    }
    const auto key = std::make_pair(p.hit->signature, p.pci);
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      it = by_key.emplace(key, work.size()).first;
      Work w;
      w.inc.signature = p.hit->signature;
      w.inc.first = evidence_of(p);
      w.inc.pci = p.pci;
      w.first_time = p.stamp;
      for (std::uint32_t s = 0; s < sig.signals.size(); ++s) {
        w.inc.signals.push_back(SignalStatus{s, 0, std::nullopt});
      }
      work.push_back(std::move(w));
    }
    Work& w = work[it->second];
    if (earlier_than(p, w.inc.first)) {
      w.inc.first = evidence_of(p);
      w.first_time = p.stamp;
    }
    w.inc.count += p.hit->count;
    if (p.rank) {
      w.inc.ranks.insert(*p.rank);
    }
    if (!p.host.empty()) {
      w.inc.hosts.insert(p.host);
    }
    record_signal(w, p);
  }
  // A line without a bus id (the multi-line "fallen off the bus" text) joins
  // its entry's incident when exactly one GPU has one.
  for (auto& w : work) {
    if (!w.inc.pci.empty() || w.absorbed) {
      continue;
    }
    std::vector<std::size_t> peers;
    for (std::size_t k = 0; k < work.size(); ++k) {
      if (work[k].inc.signature == w.inc.signature && !work[k].inc.pci.empty()) {
        peers.push_back(k);
      }
    }
    if (peers.size() == 1) {
      auto& target = work[peers[0]].inc;
      target.count += w.inc.count;
      target.ranks.insert(w.inc.ranks.begin(), w.inc.ranks.end());
      target.hosts.insert(w.inc.hosts.begin(), w.inc.hosts.end());
      for (std::size_t s = 0; s < target.signals.size(); ++s) {
        target.signals[s].count += w.inc.signals[s].count;
        if (!target.signals[s].first) {
          target.signals[s].first = w.inc.signals[s].first;
        }
      }
      w.absorbed = true;
    }
  }
  // Pass 2: supporting signals add evidence to their entry's incident (the
  // one on the same GPU if there is one).
  for (const auto& p : prep) {
    const auto& sig = cat.at(p.hit->signature);
    if (sig.role != Role::cause || !raised[p.hit->signature] || p.folded || sig.signals[p.hit->signal].anchor) {
      continue;
    }
    Work* target = nullptr;
    for (auto& w : work) {
      if (w.absorbed || w.inc.signature != p.hit->signature) {
        continue;
      }
      if (target == nullptr || (!p.pci.empty() && w.inc.pci == p.pci)) {
        target = &w;
      }
    }
    if (target != nullptr) {
      record_signal(*target, p);
    }
  }

  // A report that names its cause ("Xid 45 ... caused by previous Xid 149")
  // when that cause's own line is not in the logs: the named cause is still
  // the failure, inferred from the report.
  for (const auto& p : prep) {
    const auto named = capture(*p.hit, "caused_by");
    if (named.empty() || cat.at(p.hit->signature).role == Role::cause) {
      continue;
    }
    const auto id = cat.find("xid." + named);
    if (!id || cat.at(*id).role != Role::cause) {
      continue;
    }
    const bool present = std::any_of(work.begin(), work.end(), [&](const Work& w) {
      return w.inc.signature == *id && (w.inc.pci.empty() || p.pci.empty() || w.inc.pci == p.pci);
    });
    if (present) {
      continue;
    }
    Work w;
    w.inc.signature = *id;
    w.inc.first = evidence_of(p);
    w.inc.pci = p.pci;
    w.inc.count = 0;
    w.inc.inferred = fmt::format("inferred: the Xid {} line itself is not in these logs; a later report names it as its cause", named);
    w.first_time = p.stamp;
    if (!p.host.empty()) {
      w.inc.hosts.insert(p.host);
    }
    for (std::uint32_t k = 0; k < cat.at(*id).signals.size(); ++k) {
      w.inc.signals.push_back(SignalStatus{k, 0, std::nullopt});
    }
    w.inc.missing.push_back(fmt::format("the Xid {} line on GPU {}: read the node's kernel log for the minutes before "
                                        "(`dmesg -T | grep 'Xid'`, `journalctl -k`)",
                                        named, p.pci.empty() ? std::string("?") : p.pci));
    work.push_back(std::move(w));
  }

  // --- A cause that explains another turns it into collateral. ---
  // b becomes a's collateral.
  auto absorb = [](Work& a, Work& b) {
    Group g;
    g.signature = b.inc.signature;
    g.count = b.inc.count;
    g.ranks = b.inc.ranks;
    g.hosts = b.inc.hosts;
    g.first = b.inc.first;
    a.inc.collateral.push_back(std::move(g));
    b.absorbed = true;
  };
  auto time_ok = [&](const Work& a, const Work& b) {
    // b may follow a (or be concurrent within the skew window).
    if (comparable(a.first_time, b.first_time)) {
      return b.first_time->t + options.skew_us >= a.first_time->t;
    }
    if (a.inc.first.source == b.inc.first.source) {
      // One file: line order is a clock, except that a detail line printed
      // right after its wrapper (NCCL's "Last error:") still explains it.
      return b.inc.first.line_no >= a.inc.first.line_no || a.inc.first.line_no - b.inc.first.line_no <= 10;
    }
    return true;
  };
  auto same_gpu = [](const Work& a, const Work& b) {
    return a.inc.pci.empty() || b.inc.pci.empty() || a.inc.pci == b.inc.pci;
  };
  // A GPU or driver fault explains what happens on its own node only; a
  // network fault (a link down) also explains what its peers report.
  auto same_node = [&](const Work& a, const Work& b) {
    const auto& area = cat.at(a.inc.signature).area;
    if (area != "hardware" && area != "driver") {
      return true;
    }
    if (a.inc.hosts.empty() || b.inc.hosts.empty()) {
      return true;
    }
    for (const auto& h : b.inc.hosts) {
      if (a.inc.hosts.count(h) != 0) {
        return true;
      }
    }
    return false;
  };
  // One failure reported by two layers (NCCL's WARN and PyTorch's exception
  // for the same CUDA error): same ranks, within the skew window, and `a` is
  // the more specific entry.
  auto same_event = [&](const Work& a, const Work& b) {
    if (!comparable(a.first_time, b.first_time) || a.inc.ranks.empty() || b.inc.ranks.empty()) {
      return false;
    }
    const auto dt = b.first_time->t - a.first_time->t;
    if (dt < -options.skew_us || dt > options.skew_us) {
      return false;
    }
    if (cat.at(a.inc.signature).priority <= cat.at(b.inc.signature).priority || !same_gpu(a, b)) {
      return false;
    }
    return std::includes(a.inc.ranks.begin(), a.inc.ranks.end(), b.inc.ranks.begin(), b.inc.ranks.end());
  };
  for (auto& b : work) {
    if (b.absorbed) {
      continue;
    }
    // The line names its cause: "caused by previous Xid 149".
    if (!b.inc.caused_by.empty()) {
      if (auto id = cat.find("xid." + b.inc.caused_by)) {
        for (auto& a : work) {
          if (&a != &b && !a.absorbed && a.inc.signature == *id && same_gpu(a, b)) {
            absorb(a, b);
            break;
          }
        }
      }
      if (b.absorbed) {
        continue;
      }
    }
    for (auto& a : work) {
      if (&a == &b || a.absorbed) {
        continue;
      }
      const bool explained =
          cat.explains(a.inc.signature, b.inc.signature) && time_ok(a, b) && same_gpu(a, b) && same_node(a, b);
      if (explained || same_event(a, b)) {
        absorb(a, b);
        break;
      }
    }
  }
  std::vector<Incident> incidents;
  std::vector<Time> times;
  for (auto& w : work) {
    if (!w.absorbed) {
      incidents.push_back(std::move(w.inc));
      times.push_back(w.first_time);
    }
  }

  // --- The terminal episode holds the root: a cause after which training
  // still progressed (a later step with a finite loss, beyond the margin)
  // was recovered from, and does not initiate while another cause exists. ---
  std::vector<bool> recovered(incidents.size(), false);
  for (std::size_t i = 0; i < incidents.size(); ++i) {
    for (const auto& mark : progress) {
      Time mt;
      if (mark.time.kind == context::ClockKind::wall) {
        mt = Stamp{context::to_epoch_micros(mark.time.wall, ref_year), 0};
      } else if (mark.time.kind == context::ClockKind::monotonic) {
        mt = Stamp{mark.time.mono_micros, mark.source + 1};
      }
      const bool later = comparable(times[i], mt) ? mt->t > times[i]->t + options.progress_margin_us
                         : (!times[i] && mark.source == incidents[i].first.source)
                             ? mark.line_no > incidents[i].first.line_no + 200
                             : false;
      if (later) {
        recovered[i] = true;
        incidents[i].recovered = fmt::format("training progressed after it ({}:{}): the run recovered from this one",
                                             mark.source < d.sources.size() ? d.sources[mark.source].name : "?",
                                             mark.line_no);
        break;
      }
    }
  }

  // --- The initiating failure. ---
  if (!incidents.empty()) {
    std::vector<std::size_t> cand;
    const bool any_unrecovered = std::find(recovered.begin(), recovered.end(), false) != recovered.end();
    for (std::size_t i = 0; i < incidents.size(); ++i) {
      if (cat.at(incidents[i].signature).priority > k_generic_priority && (!any_unrecovered || !recovered[i])) {
        cand.push_back(i);
      }
    }
    bool generic_skipped = false;
    bool recovered_skipped = false;
    for (std::size_t i = 0; i < incidents.size(); ++i) {
      if (std::find(cand.begin(), cand.end(), i) != cand.end()) {
        continue;
      }
      (any_unrecovered && recovered[i] ? recovered_skipped : generic_skipped) = true;
    }
    if (cand.empty()) {
      for (std::size_t i = 0; i < incidents.size(); ++i) {
        if (!any_unrecovered || !recovered[i]) {
          cand.push_back(i);
        }
      }
      generic_skipped = false;
    }
    const bool all_timed =
        std::all_of(cand.begin(), cand.end(), [&](std::size_t i) { return comparable(times[i], times[cand[0]]); });
    auto prio = [&](std::size_t i) { return cat.at(incidents[i].signature).priority; };
    auto pos_less = [&](std::size_t a, std::size_t b) {
      return std::tie(incidents[a].first.source, incidents[a].first.line_no) <
             std::tie(incidents[b].first.source, incidents[b].first.line_no);
    };
    std::size_t best = cand[0];
    std::string rule;
    Confidence conf = Confidence::high;
    if (cand.size() == 1) {
      rule = "the only cause in the logs";
    } else if (all_timed) {
      for (auto i : cand) {
        if (times[i]->t < times[best]->t) {
          best = i;
        }
      }
      // Concurrent within the skew window: the more specific one wins.
      bool tie = false;
      for (auto i : cand) {
        if (i != best && times[i]->t - times[best]->t <= options.skew_us) {
          tie = true;
          if (prio(i) > prio(best) || (prio(i) == prio(best) && pos_less(i, best))) {
            best = i;
          }
        }
      }
      rule = tie ? fmt::format("earliest cause by timestamp; causes within {:.1f} s of it are treated as concurrent and "
                               "the most specific one (priority {}) wins",
                               static_cast<double>(options.skew_us) / 1e6, prio(best))
                 : "earliest cause by timestamp";
      conf = tie ? Confidence::medium : Confidence::high;
    } else if (std::all_of(cand.begin(), cand.end(),
                           [&](std::size_t i) { return incidents[i].first.source == incidents[cand[0]].first.source; })) {
      // One file without comparable stamps: its line order is still a clock.
      for (auto i : cand) {
        if (pos_less(i, best)) {
          best = i;
        }
      }
      rule = "earliest cause in its file (no comparable timestamps; line order used)";
      conf = Confidence::medium;
    } else {
      for (auto i : cand) {
        if (prio(i) > prio(best) || (prio(i) == prio(best) && pos_less(i, best))) {
          best = i;
        }
      }
      rule = "clocks are not comparable across these lines: highest priority, then first in the input";
      conf = Confidence::medium;
    }
    const bool only_generic = !cand.empty() && prio(cand[0]) <= k_generic_priority && !generic_skipped &&
                              std::all_of(cand.begin(), cand.end(), [&](std::size_t i) { return prio(i) <= k_generic_priority; });
    if (only_generic) {
      rule = "only generic reports were found (a wrapper such as an NCCL error code); the concrete cause is not in "
             "these logs";
      conf = Confidence::low;
    }
    if (generic_skipped) {
      rule += "; generic announcements were not considered";
    }
    if (recovered_skipped) {
      if (cand.size() == 1 && rule == "the only cause in the logs") {
        rule = "the only cause the run did not recover from";
      } else {
        rule += "; causes that training recovered from were not considered";
      }
    }
    auto& init = incidents[best];
    init.initiating = true;
    init.rule = rule;
    // Missing signals lower confidence.
    for (const auto& st : init.signals) {
      if (st.count == 0 && !cat.at(init.signature).signals[st.signal].if_missing.empty() && conf == Confidence::high) {
        conf = Confidence::medium;
      }
    }
    if (!init.inferred.empty() && conf == Confidence::high) {
      conf = Confidence::medium;
    }
    init.confidence = conf;
    // Order: initiating first, then by time / position.
    std::vector<std::size_t> idx(incidents.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      if (a == best || b == best) {
        return a == best && b != best;
      }
      if (comparable(times[a], times[b]) && times[a]->t != times[b]->t) {
        return times[a]->t < times[b]->t;
      }
      return pos_less(a, b);
    });
    std::vector<Incident> sorted;
    std::vector<Time> sorted_times;
    for (auto i : idx) {
      sorted.push_back(std::move(incidents[i]));
      sorted_times.push_back(times[i]);
    }
    incidents = std::move(sorted);
    times = std::move(sorted_times);
  }

  // --- Symptoms and context join incidents. ---
  for (const auto& p : prep) {
    const auto& sig = cat.at(p.hit->signature);
    if (sig.role == Role::cause) {
      if (p.folded || !raised[p.hit->signature]) {
        // Folded into a more specific cause on the same line: count it there.
        continue;
      }
      continue;
    }
    if (sig.role == Role::context) {
      for (std::size_t i = 0; i < incidents.size(); ++i) {
        if (cat.refines(p.hit->signature, incidents[i].signature)) {
          add_to_group(incidents[i].context, p);
          break;
        }
      }
      continue;
    }
    if (p.folded) {
      continue;
    }
    // A symptom joins the most recent incident before it (within the skew
    // window) that explains it and is on the same GPU when both name one;
    // without comparable clocks, the initiating incident if it qualifies.
    std::optional<std::size_t> target;
    for (std::size_t i = 0; i < incidents.size(); ++i) {
      const bool explains = sig.generic || cat.explains(incidents[i].signature, p.hit->signature);
      const bool gpu_ok = p.pci.empty() || incidents[i].pci.empty() || p.pci == incidents[i].pci;
      if (!explains || !gpu_ok) {
        continue;
      }
      const bool timed = comparable(times[i], p.stamp);
      if (timed && times[i]->t > p.stamp->t + options.skew_us) {
        continue; // the incident started after this report
      }
      if (!target) {
        target = i;
        continue;
      }
      const auto t = *target;
      if (timed && comparable(times[t], times[i]) && times[i]->t > times[t]->t) {
        target = i;
      } else if (!(timed && comparable(times[t], times[i])) && incidents[i].initiating) {
        target = i;
      }
    }
    if (target) {
      add_to_group(incidents[*target].collateral, p);
    } else {
      add_to_group(d.unexplained, p);
    }
  }

  // --- Missing evidence. ---
  for (auto& inc : incidents) {
    const auto& sig = cat.at(inc.signature);
    {
      // Only signals that name the evidence to look for (if_missing) are
      // corroboration; the others are alternative wordings of the anchor.
      for (const auto& st : inc.signals) {
        const auto& s = sig.signals[st.signal];
        if (st.count == 0 && !s.if_missing.empty()) {
          inc.missing.push_back(fmt::format("{} ({}): {}", s.id, s.description.empty() ? "not seen" : s.description,
                                            s.if_missing.empty() ? "not in these logs" : s.if_missing));
        }
      }
    }
    if (!inc.caused_by.empty() && !cat.find("xid." + inc.caused_by)) {
      inc.missing.push_back(fmt::format("the line names an earlier Xid {} as its cause; look for it in the node's "
                                        "kernel log (`dmesg -T | grep Xid`)",
                                        inc.caused_by));
    }
    for (auto& g : inc.collateral) {
      (void)g;
    }
    std::sort(inc.collateral.begin(), inc.collateral.end(),
              [](const Group& a, const Group& b) { return a.count > b.count; });
  }

  // --- Symptom-only runs: who is missing from the collective? ---
  if (incidents.empty()) {
    struct RankReport {
      std::int64_t seq = -1;
      std::string op;
    };
    std::map<int, RankReport> reports;
    int world = 0;
    std::string world_from;
    for (const auto& p : prep) {
      if (p.hit->ctx.nranks && p.hit->ctx.nranks->value > world) {
        world = p.hit->ctx.nranks->value;
        world_from = "nRanks in NCCL's init lines";
      }
      if (auto n = capture(*p.hit, "nranks"); !n.empty() && std::atoi(n.c_str()) > world) {
        world = std::atoi(n.c_str());
        world_from = "nRanks in NCCL's init lines";
      }
      const auto seq = capture(*p.hit, "seq");
      if (seq.empty() || !p.rank) {
        continue;
      }
      auto& r = reports[*p.rank];
      const auto s = std::atoll(seq.c_str());
      const auto op = capture(*p.hit, "op");
      if (s > r.seq) {
        r.seq = s;
        r.op = op;
      } else if (s == r.seq && r.op.empty()) {
        r.op = op; // another line about the same collective may name its type
      }
    }
    if (!reports.empty()) {
      Inference inf;
      const int highest = reports.rbegin()->first;
      if (world == 0) {
        world = highest + 1;
        world_from = "the highest rank that reported (the real world size may be larger)";
      }
      inf.world_size = world;
      inf.world_size_from = world_from;
      std::int64_t max_seq = -1;
      for (const auto& [r, rep] : reports) {
        max_seq = std::max(max_seq, rep.seq);
      }
      for (int r = 0; r < world; ++r) {
        if (reports.count(r) == 0) {
          inf.missing_ranks.push_back(r);
        }
      }
      for (const auto& [r, rep] : reports) {
        if (rep.seq < max_seq) {
          inf.lagging_ranks.push_back(r);
        }
      }
      std::map<std::int64_t, std::map<std::string, std::vector<int>>> ops;
      for (const auto& [r, rep] : reports) {
        if (!rep.op.empty()) { // a line that names no OpType cannot disagree
          ops[rep.seq][rep.op].push_back(r);
        }
      }
      for (const auto& [seq, by_op] : ops) {
        if (by_op.size() > 1) {
          std::string s = fmt::format("SeqNum {}:", seq);
          bool first = true;
          for (const auto& [op, rs] : by_op) {
            s += fmt::format("{} {} on rank(s) {}", first ? "" : ",", op.empty() ? "?" : op, format_ranks(rs));
            first = false;
          }
          inf.mismatches.push_back(std::move(s));
        }
      }
      std::vector<int> reporting;
      for (const auto& [r, rep] : reports) {
        reporting.push_back(r);
      }
      if (!inf.mismatches.empty()) {
        inf.summary = fmt::format("ranks disagree on which collective comes next ({}): a collective mismatch, usually "
                                  "a code path that only some ranks take",
                                  inf.mismatches.front());
        inf.next_steps.push_back("rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL to get the collective fingerprints");
      } else if (!inf.missing_ranks.empty() && world_from.rfind("nRanks", 0) != 0) {
        inf.summary = fmt::format("{} rank(s) ({}) reported a collective timeout; rank(s) {} did not report in these "
                                  "logs, which may be partial (no NCCL init lines give the world size): if their "
                                  "logs are complete, they are the suspects",
                                  reporting.size(), format_ranks(reporting), format_ranks(inf.missing_ranks));
        inf.next_steps.push_back(fmt::format("collect rank {}'s own log, or rerun with NCCL_DEBUG=INFO so the world size "
                                             "is in the log",
                                             format_ranks(inf.missing_ranks)));
      } else if (!inf.missing_ranks.empty()) {
        inf.summary = fmt::format("{} of {} ranks reported a collective timeout; rank(s) {} never did: the suspect "
                                  "is what stopped them",
                                  reporting.size(), world, format_ranks(inf.missing_ranks));
        inf.next_steps.push_back(fmt::format("read rank {}'s own log (stderr, --log-dir of torchrun)",
                                             format_ranks(inf.missing_ranks)));
        inf.next_steps.push_back("read the kernel log (dmesg -T, journalctl -k) of the node that ran it, for an Xid, "
                                 "an OOM kill or a link-down at the time of the hang");
      } else if (!inf.lagging_ranks.empty()) {
        inf.summary = fmt::format("rank(s) {} are behind (lower SeqNum than the others, {}): they stopped earlier "
                                  "and are the suspects",
                                  format_ranks(inf.lagging_ranks), max_seq);
        inf.next_steps.push_back(fmt::format("read rank {}'s log before its last collective",
                                             format_ranks(inf.lagging_ranks)));
      } else {
        inf.summary = fmt::format("every rank ({} of {}) timed out in the same collective (SeqNum {}): no rank in these "
                                  "logs stands out as the initiator",
                                  reporting.size(), world, max_seq);
        inf.next_steps.push_back("collect the Flight Recorder dumps (TORCH_NCCL_TRACE_BUFFER_SIZE=2000, "
                                 "TORCH_NCCL_DUMP_ON_TIMEOUT=1) and compare each rank's last collective");
        inf.next_steps.push_back("check every node's kernel log (dmesg -T) for Xid, OOM kills or NIC link-down "
                                 "events in the minutes before the timeout");
      }
      inf.next_steps.push_back("rerun with NCCL_DEBUG=WARN so a failing NCCL call prints its cause");
      d.inference = std::move(inf);
    }
  }
  std::sort(d.unexplained.begin(), d.unexplained.end(), [](const Group& a, const Group& b) { return a.count > b.count; });
  d.incidents = std::move(incidents);
  return d;
}

void add_starting_points(Diagnosis& d, const std::vector<ErrorLine>& lines, const CorrelateOptions& options,
                         std::size_t max_groups) {
  if (!d.incidents.empty() || d.inference || lines.empty()) {
    return;
  }
  const int year = d.assumed_year != 0 ? d.assumed_year : options.now_year;
  std::map<std::string, std::size_t> index;
  std::vector<StartingPoint> groups;
  for (const auto& l : lines) {
    // The template ignores launcher prefixes and stamps: numbers are masked.
    auto key = util::message_template(util::trim(l.text));
    auto it = index.find(key);
    std::optional<std::int64_t> t;
    if (l.ctx.time.kind == context::ClockKind::wall) {
      t = context::to_epoch_micros(l.ctx.time.wall, year);
    }
    if (it == index.end()) {
      it = index.emplace(key, groups.size()).first;
      StartingPoint sp;
      sp.template_text = std::move(key);
      sp.first.source = l.source;
      sp.first.line_no = l.line_no;
      sp.first.text = l.text;
      sp.first.ctx = l.ctx;
      sp.first.time_us = t;
      groups.push_back(std::move(sp));
    }
    auto& g = groups[it->second];
    ++g.count;
    if (l.ctx.rank) {
      g.ranks.insert(l.ctx.rank->value);
    }
    const bool earlier_time = t && g.first.time_us && *t < *g.first.time_us;
    if (earlier_time) {
      g.first.source = l.source;
      g.first.line_no = l.line_no;
      g.first.text = l.text;
      g.first.ctx = l.ctx;
      g.first.time_us = t;
    }
  }
  std::stable_sort(groups.begin(), groups.end(), [](const StartingPoint& a, const StartingPoint& b) {
    if (a.first.time_us && b.first.time_us && *a.first.time_us != *b.first.time_us) {
      return *a.first.time_us < *b.first.time_us;
    }
    return std::tie(a.first.source, a.first.line_no) < std::tie(b.first.source, b.first.line_no);
  });
  if (groups.size() > max_groups) {
    groups.resize(max_groups);
  }
  d.starting_points = std::move(groups);
}

} // namespace denpex::correlate
