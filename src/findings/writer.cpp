// The findings a merge reads back (findings.hpp): the header record, the
// evidence records with their compaction, and the progress records. Every
// record type and field is named through record.hpp, as the reader names it.
#include <denpex/findings/findings.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <denpex/context/context.hpp>
#include <denpex/correlate/rules.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::findings {

namespace {

using nlohmann::ordered_json;

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
  j[key::clock] = std::string(context::to_string(t.kind));
  j[key::stamp] = t.kind == context::ClockKind::wall ? ordered_json(stamp_text(t.wall)) : ordered_json(nullptr);
  j[key::mono_us] = t.kind == context::ClockKind::monotonic ? ordered_json(t.mono_micros) : ordered_json(nullptr);
  j[key::time_format] = t.kind == context::ClockKind::none ? ordered_json(nullptr) : ordered_json(std::string(t.format));
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
  const scan::Hit* first = nullptr; // the earliest by time, then position
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
std::string fold_key(const scan::Hit& h) {
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

bool borrowed(const scan::Hit& h) { return h.ctx.time.origin == context::Origin::neighbour; }

bool has_capture(const scan::Hit& h, std::string_view name) {
  return std::any_of(h.captures.begin(), h.captures.end(), [&](const auto& c) { return c.first == name; });
}

// Adds `h`'s captures to `into` unless a name has another value there. A
// `rank` capture is the correlator's last resort for a line whose context
// names no rank (and, with `nranks`, NCCL's identity line): beside a rank of
// its own it differs from rank to rank and decides nothing.
bool merge_captures(std::vector<std::pair<std::string, std::string>>& into, const scan::Hit& h) {
  const bool own_rank = h.ctx.rank && !has_capture(h, key::nranks);
  std::vector<std::pair<std::string, std::string>> added;
  for (const auto& [k, v] : h.captures) {
    const auto& name = k; // clang before 16 cannot capture a structured binding
    const auto it = std::find_if(into.begin(), into.end(), [&name](const auto& c) { return c.first == name; });
    if (it == into.end()) {
      added.emplace_back(k, v);
    } else if (it->second != v && !(own_rank && k == key::rank)) {
      return false;
    }
  }
  into.insert(into.end(), added.begin(), added.end());
  return true;
}

// Entries raised by these hits alone (RaisedEntries, correlate/rules.hpp):
// raised in any merge too, whatever the other nodes' findings hold.
std::vector<bool> raised_entries(const correlate::Diagnosis& d, const catalog::Catalog& cat) {
  correlate::RaisedEntries entries(cat);
  for (const auto& h : d.evidence) {
    entries.add(h);
  }
  std::vector<bool> raised(cat.size(), false);
  for (std::uint32_t i = 0; i < cat.size(); ++i) {
    raised[i] = entries.raised(i);
  }
  return raised;
}

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
      // Every cause counts, raised here or not: another node's findings
      // may raise it in a merge, where the line rule then applies.
      if (sig.role == catalog::Role::cause) {
        l.add_cause(sig);
      } else if (sig.role == catalog::Role::symptom && m_raised[h.signature]) {
        l.add_raised_symptom();
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

  const std::vector<scan::Hit>& m_hits;
  const catalog::Catalog& m_cat;
  const std::vector<bool> m_raised;
  std::map<LineKey, correlate::LineCauses> m_lines;
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
    j[key::findings] = util::sanitize_utf8(d.sources[source].findings);
  }
}

// One evidence record, with everything the correlator reads
// (docs/output-formats.md, "evidence"): a merge turns it back into a hit.
ordered_json evidence_json(const correlate::Diagnosis& d, const catalog::Catalog& cat, const Folded& f) {
  const auto& h = *f.first;
  const auto& sig = cat.at(h.signature);
  const auto& ctx = h.ctx;
  ordered_json j;
  j[key::type] = type::evidence;
  j[key::schema_version] = k_schema_version;
  j[key::file] = util::sanitize_utf8(d.source_name(h.source));
  put_findings(j, d, h.source);
  j[key::host] = ctx.host ? ordered_json(util::sanitize_utf8(ctx.host->value)) : ordered_json(nullptr);
  j[key::signature] = sig.id;
  j[key::signal] = sig.signals[h.signal].id;
  j[key::line] = h.line_no;
  j[key::last_line] = f.last_line;
  j[key::count] = f.count;
  j[key::rank] = int_or_null(ctx.rank);
  j[key::also_ranks] = std::vector<int>(f.also_ranks.begin(), f.also_ranks.end());
  j[key::local_rank] = int_or_null(ctx.local_rank);
  j[key::nranks] = int_or_null(ctx.nranks);
  j[key::gpu] = int_or_null(ctx.gpu);
  j[key::pci] = ctx.pci ? ordered_json(ctx.pci->value) : ordered_json(nullptr);
  j[key::pid] = ctx.pid ? ordered_json(ctx.pid->value) : ordered_json(nullptr);
  put_time(j, ctx.time);
  ordered_json from = ordered_json::object();
  auto put_origin = [&](const char* key, const auto& field) {
    if (field) {
      from[key] = origin(field->origin);
    }
  };
  put_origin(key::rank, ctx.rank);
  put_origin(key::local_rank, ctx.local_rank);
  put_origin(key::nranks, ctx.nranks);
  put_origin(key::host, ctx.host);
  put_origin(key::gpu, ctx.gpu);
  put_origin(key::pci, ctx.pci);
  put_origin(key::pid, ctx.pid);
  if (ctx.time.kind != context::ClockKind::none) {
    from[key::time] = origin(ctx.time.origin);
  }
  j[key::from] = from;
  ordered_json caps = ordered_json::object();
  for (const auto& [k, v] : f.captures) {
    caps[k] = util::sanitize_utf8(v);
  }
  j[key::captures] = caps;
  if (h.traceback) {
    const auto& tb = *h.traceback;
    ordered_json frames = ordered_json::array();
    for (const auto& fr : tb.frames) {
      frames.push_back(
          {{key::file, util::sanitize_utf8(fr.file)}, {key::line, fr.line}, {key::function, util::sanitize_utf8(fr.function)}, {key::code, util::sanitize_utf8(fr.code)}});
    }
    ordered_json chain = ordered_json::array();
    for (const auto& c : tb.chain) {
      chain.push_back({{key::text, util::sanitize_utf8(c.text)}, {key::line, c.line_no}, {key::link, std::string(context::to_string(c.link))}});
    }
    j[key::traceback] = {{key::frame_count, tb.frame_count}, {key::frames, frames}, {key::chain, chain}};
  } else {
    j[key::traceback] = nullptr;
  }
  j[key::text] = f.keep_text ? ordered_json(util::sanitize_utf8(h.text)) : ordered_json(nullptr);
  return j;
}

ordered_json progress_json(const correlate::Diagnosis& d, const scan::ProgressMark& m) {
  ordered_json j;
  j[key::type] = type::progress;
  j[key::schema_version] = k_schema_version;
  j[key::file] = util::sanitize_utf8(d.source_name(m.source));
  put_findings(j, d, m.source);
  j[key::line] = m.line_no;
  put_time(j, m.time);
  j[key::from] = m.time.kind == context::ClockKind::none ? ordered_json::object()
                                                      : ordered_json({{key::time, origin(m.time.origin)}});
  j[key::text] = util::sanitize_utf8(m.text);
  if (m.relaunch) {
    j[key::relaunch] = true;
  }
  return j;
}

} // namespace

void write_header(std::ostream& out, std::string_view tool_version) {
  ordered_json j;
  j[key::type] = type::header;
  j[key::schema_version] = k_schema_version;
  j[key::format] = std::string(k_format);
  j[key::tool] = {{"name", "denpex"}, {"version", std::string(tool_version)}};
  emit(out, j);
}

std::size_t write_evidence(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat) {
  const auto evidence = fold_evidence(d, cat);
  for (const auto& f : evidence) {
    emit(out, evidence_json(d, cat, f));
  }
  return evidence.size();
}

void write_progress(std::ostream& out, const correlate::Diagnosis& d) {
  for (const auto& m : d.progress) {
    emit(out, progress_json(d, m));
  }
}

} // namespace denpex::findings
