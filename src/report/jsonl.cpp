// JSON Lines: one finding per line (docs/output-formats.md, "jsonl").
//
// Every line is a complete object that names its own source file and host,
// so the outputs of per-node runs can be concatenated (`cat node-*.jsonl`)
// and read back line by line. Record order: incidents (initiating first),
// unexplained groups, inference, starting points, diagnostics, evidence,
// progress, then one summary. The "where" objects are those of `--format
// json` plus time_us/mono_us, the normalised clock values. Evidence and
// progress records are the hits and progress marks the diagnosis was made
// from: a merge of per-node findings reads those back and decides as one run
// over all the logs would (docs/cluster.md).
#include <denpex/report/formats.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "json_fields.hpp"

#include <denpex/correlate/describe.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

using nlohmann::ordered_json;

using detail::group_json;
using detail::groups_json;
using detail::hosts_json;
using detail::safe;
using detail::signals_json;
using detail::where_json;


// The host of an evidence line: its own context, else what its path says.
ordered_json host_of(const correlate::Diagnosis& d, const correlate::Evidence& e) {
  if (e.ctx.host) {
    return safe(e.ctx.host->value);
  }
  const auto p = context::parse_path(d.source_name(e.source));
  return p.host.empty() ? ordered_json(nullptr) : ordered_json(safe(p.host));
}

ordered_json header(std::string_view type, const correlate::Diagnosis& d, const correlate::Evidence* e) {
  ordered_json j;
  j["type"] = std::string(type);
  j["schema_version"] = k_jsonl_schema_version;
  if (e != nullptr) {
    j["file"] = safe(d.source_name(e->source));
    j["host"] = host_of(d, *e);
  }
  return j;
}

void emit(std::ostream& out, const ordered_json& j) {
  out << j.dump(-1, ' ', false, ordered_json::error_handler_t::replace) << "\n";
}

ordered_json int_or_null(const std::optional<context::Field<int>>& f) {
  return f ? ordered_json(f->value) : ordered_json(nullptr);
}

std::string origin(context::Origin o) { return std::string(context::to_string(o)); }

// A stamp as its line printed it, exactly: "2024-11-29T17:59:58.604000",
// year 0000 when the line printed none, "+01:00" only when it printed a zone.
std::string stamp_text(const context::WallTime& w) {
  auto s = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}", w.year, w.month, w.day, w.hour, w.minute, w.second,
                       w.micros);
  if (w.tz_minutes) {
    const int m = *w.tz_minutes;
    s += fmt::format("{}{:02}:{:02}", m < 0 ? '-' : '+', std::abs(m) / 60, std::abs(m) % 60);
  }
  return s;
}

// The clock fields of an evidence or progress record.
void put_time(ordered_json& j, const context::Timestamp& t) {
  j["clock"] = std::string(context::to_string(t.kind));
  j["stamp"] = t.kind == context::ClockKind::wall ? ordered_json(stamp_text(t.wall)) : ordered_json(nullptr);
  j["mono_us"] = t.kind == context::ClockKind::monotonic ? ordered_json(t.mono_micros) : ordered_json(nullptr);
  j["time_format"] = t.kind == context::ClockKind::none ? ordered_json(nullptr) : ordered_json(std::string(t.format));
}

// Reports folded into one evidence record were printed within this long of
// the earliest of them: a rank's watchdog prints its timeout, the abort
// notice and the what() of its exception within a millisecond, and the ranks
// of a node time out within a second of each other. Half the skew window
// (2 s) within which the correlator already takes reports as concurrent.
constexpr std::int64_t k_fold_us = 1'000'000;

// One evidence record: a hit the diagnosis was made from, and the hits
// folded into it.
struct Folded {
  const correlate::Hit* first = nullptr; // the earliest by time, then position
  std::uint64_t count = 0;
  std::uint64_t last_line = 0; // in the first's source
  std::vector<std::pair<std::string, std::string>> captures; // of all of them; a name has one value
  std::set<int> also_ranks;                                  // their ranks besides the first's
  bool keep_text = false;
};

std::int64_t fold_time(const context::Timestamp& t) {
  switch (t.kind) {
  case context::ClockKind::wall:
    return context::to_epoch_micros(t.wall, 2000); // a year-less stamp compares with its own kind only
  case context::ClockKind::monotonic:
    return t.mono_micros;
  case context::ClockKind::none:
    break;
  }
  return 0;
}

// What must be equal for two hits to fold. A line that names its rank folds
// with other ranks' lines on its host: its GPU index, local rank and pid
// only show who it was. A line without one folds only within its source and
// process.
std::string fold_key(const correlate::Hit& h) {
  const auto& c = h.ctx;
  auto i = [](const auto& f) { return f ? std::to_string(f->value) : std::string("-"); };
  auto s = [](const auto& f) { return f ? f->value : std::string("\x01"); };
  const auto kind = static_cast<int>(c.time.kind);
  if (c.rank) {
    return fmt::format("r\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", h.signature, h.signal, s(c.host), s(c.pci),
                       i(c.nranks), kind);
  }
  return fmt::format("s\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", h.signature, h.signal, h.source,
                     i(c.local_rank), i(c.nranks), s(c.host), s(c.pci), i(c.gpu), i(c.pid), kind);
}

bool borrowed(const correlate::Hit& h) { return h.ctx.time.origin == context::Origin::neighbour; }

bool has_capture(const correlate::Hit& h, std::string_view name) {
  return std::any_of(h.captures.begin(), h.captures.end(), [&](const auto& c) { return c.first == name; });
}

// Adds `h`'s captures to `into` unless a name has another value there. A
// `rank` capture is the correlator's last resort for a line whose context
// names no rank (and, with `nranks`, NCCL's identity line): beside a rank of
// its own it differs from rank to rank and decides nothing.
bool merge_captures(std::vector<std::pair<std::string, std::string>>& into, const correlate::Hit& h) {
  const bool own_rank = h.ctx.rank && !has_capture(h, "nranks");
  std::vector<std::pair<std::string, std::string>> added;
  for (const auto& [k, v] : h.captures) {
    const auto& name = k; // clang before 16 cannot capture a structured binding
    const auto it = std::find_if(into.begin(), into.end(), [&name](const auto& c) { return c.first == name; });
    if (it == into.end()) {
      added.emplace_back(k, v);
    } else if (it->second != v && !(own_rank && k == "rank")) {
      return false;
    }
  }
  into.insert(into.end(), added.begin(), added.end());
  return true;
}

// Entries raised by these hits alone (an anchor signal, and one of the
// `requires_any` signals where it has them): raised in any merge too.
std::vector<bool> raised_entries(const correlate::Diagnosis& d, const catalog::Catalog& cat) {
  std::vector<bool> anchor(cat.size(), false);
  std::vector<bool> required(cat.size(), false);
  for (const auto& h : d.evidence) {
    const auto& sig = cat.at(h.signature);
    anchor[h.signature] = anchor[h.signature] || sig.signals[h.signal].anchor;
    required[h.signature] = required[h.signature] || sig.requires_any.empty() ||
                            std::find(sig.requires_any.begin(), sig.requires_any.end(), sig.signals[h.signal].id) !=
                                sig.requires_any.end();
  }
  std::vector<bool> raised(cat.size(), false);
  for (std::size_t i = 0; i < cat.size(); ++i) {
    raised[i] = anchor[i] && required[i];
  }
  return raised;
}

// What the correlator decides by line rather than by time ("Fold" in
// docs/correlator.md): a line with a cause hit on it.
struct LineFacts {
  int causes = 0;           // cause hits on it
  bool only_generic = true; // ... all of them generic evidence (an entry with a headline)
  int raised_symptoms = 0;  // hits of raised symptom entries on it (they make generic evidence collateral)
  // Only generic evidence, made collateral by a symptom on the line (a
  // what() under the watchdog's own words): its causes never initiate.
  [[nodiscard]] bool overruled() const { return causes > 0 && only_generic && raised_symptoms > 0; }
};

// The lines the diagnosis shows (incidents, signals, groups): their records keep their text.
std::set<std::pair<std::uint32_t, std::uint64_t>> shown_lines(const correlate::Diagnosis& d) {
  std::set<std::pair<std::uint32_t, std::uint64_t>> shown;
  auto show = [&](const correlate::Evidence& e) { shown.emplace(e.source, e.line_no); };
  auto show_groups = [&](const std::vector<correlate::Group>& groups) {
    for (const auto& g : groups) {
      show(g.first);
    }
  };
  for (const auto& inc : d.incidents) {
    show(inc.first);
    for (const auto& st : inc.signals) {
      if (st.first) {
        show(*st.first);
      }
    }
    show_groups(inc.collateral);
    show_groups(inc.context);
  }
  show_groups(d.unexplained);
  return shown;
}

using LineKey = std::pair<std::uint32_t, std::uint64_t>; // source, line

// fold_evidence (below): the hits, what is known of each line, and the
// records made so far, each with the position of its first hit.
class EvidenceFolder {
public:
  EvidenceFolder(const correlate::Diagnosis& d, const catalog::Catalog& cat)
      : m_hits(d.evidence), m_cat(cat), m_raised(raised_entries(d, cat)), m_keep_text(m_hits.size()) {
    tally_lines();
    group(shown_lines(d));
  }

  std::vector<Folded> run() {
    for (const auto i : m_alone) {
      start(i);
    }
    // Overruled causes first: a line they leave frees its symptoms to fold too.
    for (const bool causes : {true, false}) {
      for (auto& [key, members] : m_by_key) {
        if ((m_cat.at(m_hits[members.front()].signature).role == catalog::Role::cause) == causes) {
          fold(members);
        }
      }
    }
    std::sort(m_out.begin(), m_out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Folded> records;
    records.reserve(m_out.size());
    for (auto& [pos, f] : m_out) {
      if (f.first->ctx.rank) {
        f.also_ranks.erase(f.first->ctx.rank->value);
      }
      records.push_back(std::move(f));
    }
    return records;
  }

private:
  // What each line holds, and the sources with a cause that may become an
  // incident (their neighbours decide by line).
  void tally_lines() {
    for (const auto& h : m_hits) {
      const auto& sig = m_cat.at(h.signature);
      auto& l = m_lines[{h.source, h.line_no}];
      if (sig.role == catalog::Role::cause) {
        ++l.causes;
        l.only_generic = l.only_generic && !sig.headline.empty();
      } else if (sig.role == catalog::Role::symptom && m_raised[h.signature]) {
        ++l.raised_symptoms;
      }
    }
    for (const auto& [at, l] : m_lines) {
      if (l.causes > 0 && !l.overruled()) {
        m_live_cause_sources.insert(at.first);
      }
    }
  }

  // Which hits keep their text, and which may fold, grouped by what must be equal.
  void group(const std::set<LineKey>& shown) {
    std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> first_of_signal; // source, entry, signal
    for (std::size_t i = 0; i < m_hits.size(); ++i) {
      const auto& h = m_hits[i];
      const auto& sig = m_cat.at(h.signature);
      const bool first_of_its_signal = first_of_signal.emplace(h.source, h.signature, h.signal).second;
      const bool overruled = sig.role == catalog::Role::cause && m_lines[{h.source, h.line_no}].overruled();
      m_keep_text[i] = (sig.role == catalog::Role::cause && !overruled) || first_of_its_signal ||
                       shown.count({h.source, h.line_no}) != 0;
      if ((sig.role != catalog::Role::cause || overruled) && !h.traceback &&
          m_live_cause_sources.count(h.source) == 0) {
        m_by_key[fold_key(h)].push_back(i);
      } else {
        m_alone.push_back(i);
      }
    }
  }

  // A new record, from hit i.
  void start(std::size_t i) {
    const auto& h = m_hits[i];
    Folded f;
    f.first = &h;
    f.count = h.count;
    f.last_line = h.last_line_no;
    f.keep_text = m_keep_text[i];
    f.also_ranks.insert(h.also_ranks.begin(), h.also_ranks.end());
    for (const auto& c : h.captures) {
      if (!std::any_of(f.captures.begin(), f.captures.end(), [&](const auto& x) { return x.first == c.first; })) {
        f.captures.push_back(c); // the correlator reads a name's first value
      }
    }
    m_out.emplace_back(i, std::move(f));
  }

  // Whether hit i may leave its line without changing what the correlator
  // decides there: overruled generic evidence may (its line stays overruled
  // or holds no cause); a symptom may leave a line whose causes another
  // symptom keeps collateral.
  bool may_leave(std::size_t i) {
    const auto& h = m_hits[i];
    const auto& line = m_lines[{h.source, h.line_no}];
    const auto role = m_cat.at(h.signature).role;
    const bool symptom = role == catalog::Role::symptom && m_raised[h.signature];
    return role == catalog::Role::cause || line.causes == 0 || (symptom && line.raised_symptoms > 1);
  }

  // Hit i into record f, when close enough in time and its captures agree.
  bool merge(Folded& f, std::size_t i) {
    const auto& h = m_hits[i];
    const auto role = m_cat.at(h.signature).role;
    const auto dt = fold_time(h.ctx.time) - fold_time(f.first->ctx.time);
    // An overruled cause's captures (its headline) are never read.
    if (dt > k_fold_us || (borrowed(*f.first) && !borrowed(h)) ||
        (role != catalog::Role::cause && !merge_captures(f.captures, h))) {
      return false;
    }
    f.count += h.count;
    if (h.source == f.first->source) {
      f.last_line = std::max(f.last_line, h.last_line_no);
    }
    f.keep_text = f.keep_text || m_keep_text[i];
    if (h.ctx.rank && h.ctx.rank->value != f.first->ctx.rank->value) {
      f.also_ranks.insert(h.ctx.rank->value);
    }
    f.also_ranks.insert(h.also_ranks.begin(), h.also_ranks.end());
    auto& line = m_lines[{h.source, h.line_no}];
    line.raised_symptoms -= role == catalog::Role::symptom && m_raised[h.signature] ? 1 : 0;
    line.causes -= role == catalog::Role::cause ? 1 : 0;
    return true;
  }

  // One key's hits, by time: each folds into the current record or starts one.
  void fold(std::vector<std::size_t>& members) {
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      const auto ta = fold_time(m_hits[a].ctx.time);
      const auto tb = fold_time(m_hits[b].ctx.time);
      return std::tie(ta, m_hits[a].source, m_hits[a].line_no) < std::tie(tb, m_hits[b].source, m_hits[b].line_no);
    });
    std::size_t current = 0;
    for (const auto i : members) {
      if (i != members.front() && may_leave(i) && merge(m_out[current].second, i)) {
        continue;
      }
      current = m_out.size();
      start(i);
    }
  }

  const std::vector<correlate::Hit>& m_hits;
  const catalog::Catalog& m_cat;
  const std::vector<bool> m_raised;
  std::map<LineKey, LineFacts> m_lines;
  std::set<std::uint32_t> m_live_cause_sources;
  std::vector<bool> m_keep_text;
  std::map<std::string, std::vector<std::size_t>> m_by_key;
  std::vector<std::size_t> m_alone;
  std::vector<std::pair<std::size_t, Folded>> m_out;
};

// The diagnosis's hits as evidence records, in order (docs/cluster.md,
// "What the findings carry"). Hits of one entry and signal on one host, GPU
// and clock fold into the earliest of them when they were printed within
// k_fold_us of it and nothing the correlator decides by line changes:
//  - none is a cause or read a traceback (causes are few, and decide);
//  - its source holds no cause that could become an incident (one that is
//    not generic evidence overruled by a symptom on its own line): such a
//    cause's neighbours decide by line (a report just above it, the next
//    stamp below it);
//  - it leaves no cause's line but one where generic evidence keeps another
//    symptom next to it (which keeps it collateral);
//  - the captures agree (two SeqNums stay two records), and a stamped line
//    does not fold into a borrowed stamp.
// A record keeps its line's text when the diagnosis shows one of its lines,
// one of them is the first of its entry's signal in its source, or it is a
// cause: no merge shows the others, whose text is null.
std::vector<Folded> fold_evidence(const correlate::Diagnosis& d, const catalog::Catalog& cat) {
  return EvidenceFolder(d, cat).run();
}

// A merge's source came from a findings file: say which, so that a merge of
// merges keeps apart the ./rank_0.log of every node (docs/cluster.md).
void put_findings(ordered_json& j, const correlate::Diagnosis& d, std::uint32_t source) {
  if (source < d.sources.size() && !d.sources[source].findings.empty()) {
    j["findings"] = safe(d.sources[source].findings);
  }
}

// One evidence record, with everything the correlator reads
// (docs/output-formats.md, "evidence"): a merge turns it back into a hit.
ordered_json evidence_json(const correlate::Diagnosis& d, const catalog::Catalog& cat, const Folded& f) {
  const auto& h = *f.first;
  const auto& sig = cat.at(h.signature);
  const auto& ctx = h.ctx;
  ordered_json j;
  j["type"] = "evidence";
  j["schema_version"] = k_jsonl_schema_version;
  j["file"] = safe(d.source_name(h.source));
  put_findings(j, d, h.source);
  j["host"] = ctx.host ? ordered_json(safe(ctx.host->value)) : ordered_json(nullptr);
  j["signature"] = sig.id;
  j["signal"] = sig.signals[h.signal].id;
  j["line"] = h.line_no;
  j["last_line"] = f.last_line;
  j["count"] = f.count;
  j["rank"] = int_or_null(ctx.rank);
  j["also_ranks"] = std::vector<int>(f.also_ranks.begin(), f.also_ranks.end());
  j["local_rank"] = int_or_null(ctx.local_rank);
  j["nranks"] = int_or_null(ctx.nranks);
  j["gpu"] = int_or_null(ctx.gpu);
  j["pci"] = ctx.pci ? ordered_json(ctx.pci->value) : ordered_json(nullptr);
  j["pid"] = ctx.pid ? ordered_json(ctx.pid->value) : ordered_json(nullptr);
  put_time(j, ctx.time);
  ordered_json from = ordered_json::object();
  auto put_origin = [&](const char* key, const auto& field) {
    if (field) {
      from[key] = origin(field->origin);
    }
  };
  put_origin("rank", ctx.rank);
  put_origin("local_rank", ctx.local_rank);
  put_origin("nranks", ctx.nranks);
  put_origin("host", ctx.host);
  put_origin("gpu", ctx.gpu);
  put_origin("pci", ctx.pci);
  put_origin("pid", ctx.pid);
  if (ctx.time.kind != context::ClockKind::none) {
    from["time"] = origin(ctx.time.origin);
  }
  j["from"] = from;
  ordered_json caps = ordered_json::object();
  for (const auto& [k, v] : f.captures) {
    caps[k] = safe(v);
  }
  j["captures"] = caps;
  if (h.traceback) {
    const auto& tb = *h.traceback;
    ordered_json frames = ordered_json::array();
    for (const auto& fr : tb.frames) {
      frames.push_back(
          {{"file", safe(fr.file)}, {"line", fr.line}, {"function", safe(fr.function)}, {"code", safe(fr.code)}});
    }
    ordered_json chain = ordered_json::array();
    for (const auto& c : tb.chain) {
      chain.push_back({{"text", safe(c.text)}, {"line", c.line_no}, {"link", std::string(context::to_string(c.link))}});
    }
    j["traceback"] = {{"frame_count", tb.frame_count}, {"frames", frames}, {"chain", chain}};
  } else {
    j["traceback"] = nullptr;
  }
  j["text"] = f.keep_text ? ordered_json(safe(h.text)) : ordered_json(nullptr);
  return j;
}

ordered_json progress_json(const correlate::Diagnosis& d, const correlate::ProgressMark& m) {
  ordered_json j;
  j["type"] = "progress";
  j["schema_version"] = k_jsonl_schema_version;
  j["file"] = safe(d.source_name(m.source));
  put_findings(j, d, m.source);
  j["line"] = m.line_no;
  put_time(j, m.time);
  j["from"] = m.time.kind == context::ClockKind::none ? ordered_json::object()
                                                      : ordered_json({{"time", origin(m.time.origin)}});
  j["text"] = safe(m.text);
  if (m.relaunch) {
    j["relaunch"] = true;
  }
  return j;
}

} // namespace

void print_jsonl(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run) {
  for (const auto& inc : d.incidents) {
    const auto& sig = cat.at(inc.signature);
    auto j = header("incident", d, &inc.first);
    detail::put_incident_head(j, d, cat, inc);
    j["fingerprint"] = finding_fingerprint(sig.id, safe(d.source_name(inc.first.source)), inc.first.line_no);
    detail::put_incident_reach(j, d, inc);
    j["caused_by"] = inc.caused_by.empty() ? ordered_json(nullptr) : ordered_json("xid." + inc.caused_by);
    j["fix"] = sig.fix.summary;
    j["signals"] = signals_json(d, sig, inc);
    ordered_json missing = ordered_json::array();
    for (const auto& m : inc.missing) {
      missing.push_back(safe(m));
    }
    j["missing"] = missing;
    j["collateral"] = groups_json(d, cat, inc.collateral);
    j["context"] = groups_json(d, cat, inc.context);
    emit(out, j);
  }
  for (const auto& g : d.unexplained) {
    const auto& sig = cat.at(g.signature);
    auto j = header("unexplained", d, &g.first);
    j["signature"] = sig.id;
    j["title"] = sig.title;
    j["role"] = std::string(catalog::to_string(sig.role));
    j["severity"] = std::string(catalog::to_string(sig.severity));
    j["fingerprint"] = finding_fingerprint(sig.id, safe(d.source_name(g.first.source)), g.first.line_no);
    j["count"] = g.count;
    j["ranks"] = std::vector<int>(g.ranks.begin(), g.ranks.end());
    j["hosts"] = hosts_json(g.hosts);
    j["where"] = where_json(d, g.first);
    emit(out, j);
  }
  if (d.inference) {
    const auto& inf = *d.inference;
    auto j = header("inference", d, nullptr);
    j["summary"] = safe(correlate::summary(inf));
    j["kind"] = std::string(correlate::to_string(inf.kind));
    j["world_size"] = inf.world_size;
    j["world_size_from"] = correlate::world_size_from(inf);
    j["missing_ranks"] = inf.missing_ranks;
    j["lagging_ranks"] = inf.lagging_ranks;
    ordered_json mm = ordered_json::array();
    for (const auto& m : inf.mismatches) {
      mm.push_back(safe(m));
    }
    j["mismatches"] = mm;
    j["next_steps"] = correlate::next_steps(inf);
    emit(out, j);
  }
  for (const auto& sp : d.starting_points) {
    auto j = header("starting_point", d, &sp.first);
    j["template"] = safe(sp.template_text);
    j["count"] = sp.count;
    j["ranks"] = std::vector<int>(sp.ranks.begin(), sp.ranks.end());
    j["where"] = where_json(d, sp.first);
    emit(out, j);
  }
  for (const auto& dg : run.diagnostics) {
    auto j = header("diagnostic", d, nullptr);
    detail::put_diagnostic(j, dg);
    emit(out, j);
  }
  const auto evidence = fold_evidence(d, cat);
  for (const auto& f : evidence) {
    emit(out, evidence_json(d, cat, f));
  }
  for (const auto& m : d.progress) {
    emit(out, progress_json(d, m));
  }
  auto j = header("summary", d, nullptr);
  j["tool"] = {{"name", "denpex"}, {"version", run.version}, {"catalog_size", cat.size()}};
  j["failures"] = d.incidents.size();
  j["initiating"] = d.initiating() != nullptr ? ordered_json(cat.at(d.initiating()->signature).id) : ordered_json(nullptr);
  j["unexplained"] = d.unexplained.size();
  j["sources"] = run.sources;
  j["bytes"] = run.bytes;
  j["lines"] = run.lines;
  j["matches"] = d.hits;
  j["long_lines_cut"] = run.long_lines_cut;
  j["clock_note"] = d.clock_note;
  ordered_json files = ordered_json::array();
  std::set<std::string_view> findings;
  for (const auto& s : d.sources) {
    const auto p = context::parse_path(s.name);
    ordered_json f = {{"file", safe(s.name)}, {"host", p.host.empty() ? ordered_json(nullptr) : ordered_json(safe(p.host))}};
    if (!s.findings.empty()) {
      f["findings"] = safe(s.findings);
      findings.insert(s.findings);
    }
    files.push_back(std::move(f));
  }
  j["findings_files"] = findings.size();
  j["evidence"] = evidence.size();
  j["files"] = files;
  emit(out, j);
}

} // namespace denpex::report
