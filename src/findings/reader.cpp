// Reads denpex's own `--format jsonl` findings back, so that the results of
// per-node runs are correlated in one more run (docs/cluster.md). Findings
// written since issue 18 carry the hits and progress marks each diagnosis
// was made from (evidence and progress records): those become this run's
// hits and marks as they were, so the merge decides as one run over all the
// logs would. Older findings have only incidents and groups: their locations
// become hits with their counts, ranks, hosts, GPUs and normalised times
// (approximate: per-rank times and the watchdogs' SeqNum/OpType are lost).
// The summary record of each run (a file may hold several, `cat`-ed) gives
// the sources, bytes and lines it read, reported instead of this file's own.
#include <denpex/findings/findings.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include <denpex/context/context.hpp>
#include <denpex/context/traceback.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::findings {

bool is_findings(std::string_view head) {
  const auto first = head.substr(0, head.find('\n'));
  const bool typed = util::starts_with(first, "{\"type\":\"");
  return typed && (first.find("\"format\":\"denpex-findings\"") != std::string_view::npos ||
                   first.find("\"schema_version\":") != std::string_view::npos);
}

class Reader::Impl {
public:
  Impl(const catalog::Catalog& cat, std::string name) : m_cat(cat), m_name(std::move(name)) {}


  // A record longer than the reader's line limit (a large merge's summary
  // lists every source it read) arrives in pieces, the last line of a chunk
  // without its '\n': the pieces are joined before the record is parsed.
  void read(std::string_view text, std::uint64_t first_line, Diagnostics& diags) {
    std::uint64_t line_no = first_line;
    std::size_t pos = 0;
    while (pos < text.size()) {
      auto end = text.find('\n', pos);
      if (end == std::string_view::npos) {
        if (m_partial.size() + (text.size() - pos) > k_max_record) {
          diags.error(Error{ErrorKind::format, m_name + ":" + std::to_string(line_no),
                            "a findings record longer than 256 MiB; skipped"});
          m_partial.clear();
          m_skip_partial = true;
        } else if (!m_skip_partial) {
          m_partial.append(text.substr(pos));
        }
        return; // the rest of this line comes in the next chunk
      }
      auto piece = text.substr(pos, end - pos);
      if (m_skip_partial) {
        m_skip_partial = false;
      } else if (!m_partial.empty()) {
        m_partial.append(piece);
        read_line(m_partial, line_no, diags);
        m_partial.clear();
      } else {
        read_line(piece, line_no, diags);
      }
      pos = end + 1;
      ++line_no;
    }
  }

  // At the end of the file: a run without its summary record was cut short.
  Contents finish(Diagnostics& diags) {
    if (!m_partial.empty()) {
      read_line(m_partial, 0, diags); // the last record, without its '\n'
      m_partial.clear();
    }
    if (m_records_in_run > 0) {
      diags.warning(Error{ErrorKind::format, m_name,
                          "findings end without their summary record (the run that wrote them was cut short?)"});
      end_run(nullptr);
    }
    return std::move(m_out);
  }

private:
  // Ordered: captures come back in the order they were written.
  using json = nlohmann::ordered_json;
  static constexpr std::size_t k_max_record = 256u << 20;

  void read_line(std::string_view text, std::uint64_t line_no, Diagnostics& diags) {
    const auto line = util::trim(text);
    if (!line.empty()) {
      read_record(line, line_no, diags);
    }
  }

  void read_record(std::string_view line, std::uint64_t line_no, Diagnostics& diags) {
    json rec = json::parse(line.begin(), line.end(), nullptr, false);
    if (rec.is_discarded() || !rec.is_object()) {
      diags.error(Error{ErrorKind::format, m_name + ":" + std::to_string(line_no), "not a denpex JSON Lines record"});
      return;
    }
    ++m_records_in_run;
    // A record with a field of the wrong type ("line": null) is one named
    // error; what it had added is taken back and the rest merge (issue 36).
    const auto hits = m_out.hits.size();
    const auto progress = m_out.progress.size();
    const auto located = m_located.size();
    try {
      add_record(rec, line_no, diags);
    } catch (const json::exception& e) {
      m_out.hits.resize(hits);
      m_out.progress.resize(progress);
      m_located.resize(located);
      diags.error(Error{ErrorKind::format, m_name + ":" + std::to_string(line_no),
                        std::string("a findings record with a field of the wrong type, skipped (") + e.what() + ")"});
    }
  }

  void add_record(const json& rec, std::uint64_t line_no, Diagnostics& diags) {
    const auto type = rec.value(key::type, std::string());
    if (type == type::evidence) {
      add_evidence(rec, line_no, diags);
    } else if (type == type::progress) {
      add_progress(rec);
    } else if (type == type::incident) {
      const auto sig = find(rec, key::signature, line_no, diags);
      if (!sig) {
        return;
      }
      bool any_signal = false;
      if (rec.contains(key::signals) && rec[key::signals].is_array()) {
        for (const auto& s : rec[key::signals]) {
          if (!s.value(key::seen, false) || !s.contains(key::first) || !s[key::first].is_object()) {
            continue;
          }
          const auto signal = signal_index(*sig, s.value(key::id, std::string())).value_or(0);
          add(*sig, signal, s[key::first], s.value(key::count, std::uint64_t{1}), {});
          any_signal = true;
        }
      }
      if (!any_signal && rec.contains(key::where)) {
        add(*sig, 0, rec[key::where], rec.value(key::count, std::uint64_t{1}), ranks_of(rec));
      }
      for (const char* group : {key::collateral, key::context}) {
        if (rec.contains(group) && rec[group].is_array()) {
          for (const auto& g : rec[group]) {
            add_group(g, line_no, diags);
          }
        }
      }
    } else if (type == type::unexplained) {
      add_group(rec, line_no, diags);
    } else if (type == type::summary) {
      end_run(&rec);
    } else if (type == type::header) {
      check_header(rec, line_no, diags);
    }
    // inference, starting_point and diagnostic records carry nothing to correlate.
  }

  // The first record of a run's findings: a newer format is read as far as
  // this one goes, and said so once.
  void check_header(const json& rec, std::uint64_t line_no, Diagnostics& diags) {
    const auto version = rec.value(key::schema_version, 0);
    if (rec.value(key::format, std::string()) != k_format || version > k_schema_version) {
      if (!m_warned_version) {
        diags.warning(Error{ErrorKind::format, m_name + ":" + std::to_string(line_no),
                            "findings of format '" + rec.value(key::format, std::string()) + "' version " +
                                std::to_string(version) + "; this denpex reads " + std::string(k_format) +
                                " version " + std::to_string(k_schema_version) + ", and reads what it knows"});
      }
      m_warned_version = true;
    }
  }

  // The end of one run's records (its summary, or the end of the file):
  // without evidence records, the incidents' and groups' locations stand in
  // for its hits.
  void end_run(const json* summary) {
    if (!m_evidence_in_run) {
      for (auto& h : m_located) {
        m_out.hits.push_back(std::move(h));
      }
    }
    m_located.clear();
    auto count = [&](const char* key) {
      const auto it = summary->find(key);
      return it != summary->end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : std::uint64_t{0};
    };
    if (summary != nullptr) {
      m_out.totals.sources += count(key::sources);
      m_out.totals.bytes += count(key::bytes);
      m_out.totals.lines += count(key::lines);
      m_out.totals.long_lines_cut += count(key::long_lines_cut);
      m_out.totals.matches += count(key::matches);
    } else {
      m_out.totals.sources += m_sources.size();
    }
    // The next run's files are its own, even where names repeat (every
    // node has a kern.log).
    m_sources.clear();
    m_evidence_in_run = false;
    m_records_in_run = 0;
  }

  std::optional<std::uint32_t> find(const json& rec, const char* key, std::uint64_t line_no, Diagnostics& diags) {
    const auto id = rec.value(key, std::string());
    const auto idx = m_cat.find(id);
    if (!idx) {
      diags.warning(Error{ErrorKind::invalid, m_name + ":" + std::to_string(line_no),
                          "signature '" + id + "' is not in this catalog; record skipped"});
      return std::nullopt;
    }
    return static_cast<std::uint32_t>(*idx);
  }

  std::optional<std::uint32_t> signal_index(std::uint32_t sig, const std::string& id) const {
    const auto& signals = m_cat.at(sig).signals;
    for (std::uint32_t k = 0; k < signals.size(); ++k) {
      if (signals[k].id == id) {
        return k;
      }
    }
    return std::nullopt;
  }

  static std::vector<int> ranks_of(const json& rec) {
    std::vector<int> ranks;
    if (rec.contains(key::ranks) && rec[key::ranks].is_array()) {
      for (const auto& r : rec[key::ranks]) {
        if (r.is_number_integer()) {
          ranks.push_back(r.get<int>());
        }
      }
    }
    return ranks;
  }

  void add_group(const json& g, std::uint64_t line_no, Diagnostics& diags) {
    const auto sig = find(g, key::signature, line_no, diags);
    if (!sig || !g.contains(key::first)) {
      return;
    }
    add(*sig, 0, g[key::first], g.value(key::count, std::uint64_t{1}), ranks_of(g));
  }

  // The source a record's "file" names within its run. A merge's own
  // findings also say which findings file each source came from
  // ("findings"): every node has a ./rank_0.log, and a merge of merges
  // must keep them apart as the first merge did.
  std::uint32_t source_id(const std::string& file, const std::string& findings = {}) {
    const auto key = findings.empty() ? file : findings + '\n' + file;
    auto it = m_sources.find(key);
    if (it == m_sources.end()) {
      it = m_sources.emplace(key, static_cast<std::uint32_t>(m_out.sources.size())).first;
      m_out.sources.push_back(scan::SourceRef{file, std::nullopt, findings.empty() ? m_name : findings});
    }
    return it->second;
  }

  // An old findings file's location: one hit per rank named (the first
  // carries the rest of the count), so that rank sets and world sizes
  // survive the merge.
  void add(std::uint32_t sig, std::uint32_t signal, const json& where, std::uint64_t count, std::vector<int> ranks) {
    if (!where.is_object()) {
      return;
    }
    scan::Hit hit;
    hit.signature = sig;
    hit.signal = signal;
    hit.source = source_id(where.value(key::file, m_name));
    hit.line_no = where.value(key::line, std::uint64_t{0});
    hit.last_line_no = hit.line_no;
    hit.text = where.value(key::text, std::string());
    auto& ctx = hit.ctx;
    if (where.contains(key::host) && where[key::host].is_string()) {
      ctx.host = context::Field<std::string>{where[key::host].get<std::string>(), context::Origin::capture};
    }
    if (where.contains(key::pci) && where[key::pci].is_string()) {
      ctx.pci = context::Field<std::string>{where[key::pci].get<std::string>(), context::Origin::capture};
    }
    if (where.contains(key::gpu) && where[key::gpu].is_number_integer()) {
      ctx.gpu = context::Field<int>{where[key::gpu].get<int>(), context::Origin::capture};
    }
    if (const auto us = clock_micros(where, key::time_us)) {
      ctx.time = from_epoch_micros(*us);
    } else if (const auto mono = clock_micros(where, key::mono_us)) {
      ctx.time.kind = context::ClockKind::monotonic;
      ctx.time.mono_micros = *mono;
      ctx.time.format = "dmesg";
    }
    const bool where_rank = where.contains(key::rank) && where[key::rank].is_number_integer();
    if (where_rank && std::find(ranks.begin(), ranks.end(), where[key::rank].get<int>()) == ranks.end()) {
      ranks.insert(ranks.begin(), where[key::rank].get<int>());
    }
    if (ranks.empty()) {
      hit.count = std::max<std::uint64_t>(count, 1);
      m_located.push_back(std::move(hit));
      return;
    }
    const std::uint64_t n = ranks.size();
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      scan::Hit h = hit;
      h.ctx.rank = context::Field<int>{ranks[i], context::Origin::capture};
      h.count = i == 0 ? std::max<std::uint64_t>(count > n ? count - (n - 1) : 1, 1) : 1;
      m_located.push_back(std::move(h));
    }
  }

  // A clock field in microseconds, or nullopt when absent, not an integer
  // or beyond any real clock (about 12,000 years either way): stamps are
  // subtracted from one another, and a hostile record must not overflow them.
  static std::optional<std::int64_t> clock_micros(const json& rec, const char* key) {
    static constexpr std::int64_t k_max_us = std::int64_t{400000000000000000};
    const auto it = rec.find(key);
    if (it == rec.end() || !it->is_number_integer()) {
      return std::nullopt;
    }
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(k_max_us)) {
      return std::nullopt;
    }
    const auto v = it->get<std::int64_t>();
    if (v > k_max_us || v < -k_max_us) {
      return std::nullopt;
    }
    return v;
  }

  static context::Timestamp from_epoch_micros(std::int64_t us) {
    std::time_t secs = static_cast<std::time_t>(us / 1'000'000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    context::Timestamp t;
    t.kind = context::ClockKind::wall;
    t.wall = context::WallTime{tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                               static_cast<int>(us % 1'000'000), std::nullopt};
    t.format = "iso8601";
    t.origin = context::Origin::capture;
    return t;
  }

  static context::Origin origin_of(const json& from, const char* key) {
    const auto it = from.find(key);
    if (it != from.end() && it->is_string()) {
      const auto& name = it->get_ref<const std::string&>();
      for (const auto o : {context::Origin::prefix, context::Origin::body, context::Origin::capture,
                           context::Origin::file_name, context::Origin::neighbour, context::Origin::identity,
                           context::Origin::option}) {
        if (context::to_string(o) == name) {
          return o;
        }
      }
    }
    return context::Origin::capture;
  }

  // The clock fields of an evidence or progress record (jsonl.cpp, put_time).
  static context::Timestamp time_of(const json& rec, const json& from) {
    context::Timestamp t;
    const auto clock = rec.value(key::clock, std::string(context::to_string(context::ClockKind::none)));
    const auto stamp = rec.find(key::stamp);
    if (clock == context::to_string(context::ClockKind::wall) && stamp != rec.end() && stamp->is_string()) {
      auto& w = t.wall;
      const auto& text = stamp->get_ref<const std::string&>();
      int used = 0;
      if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%6d%n", &w.year, &w.month, &w.day, &w.hour, &w.minute,
                      &w.second, &w.micros, &used) != 7) {
        return t;
      }
      char sign = 0;
      int tz_h = 0;
      int tz_m = 0;
      if (std::sscanf(text.c_str() + used, "%c%2d:%2d", &sign, &tz_h, &tz_m) == 3 && (sign == '+' || sign == '-')) {
        w.tz_minutes = (sign == '-' ? -1 : 1) * (tz_h * 60 + tz_m);
      }
      t.kind = context::ClockKind::wall;
    } else if (const auto us = clock_micros(rec, key::mono_us); clock == context::to_string(context::ClockKind::monotonic) && us) {
      t.kind = context::ClockKind::monotonic;
      t.mono_micros = *us;
    } else {
      return t;
    }
    t.format = intern_format(rec.value(key::time_format, std::string()));
    t.origin = origin_of(from, key::time);
    return t;
  }

  // A time format's name outlives the record (Timestamp::format is a view).
  static std::string_view intern_format(const std::string& name) {
    static std::mutex mutex;
    static std::set<std::string, std::less<>> names;
    const std::lock_guard<std::mutex> lock(mutex);
    return *names.insert(name).first;
  }

  static std::string string_or_empty(const json& rec, const char* key) {
    const auto it = rec.find(key);
    return it != rec.end() && it->is_string() ? it->get<std::string>() : std::string();
  }

  static const json& object_or_empty(const json& rec, const char* key) {
    static const json k_empty = json::object();
    const auto it = rec.find(key);
    return it != rec.end() && it->is_object() ? *it : k_empty;
  }

  void add_evidence(const json& rec, std::uint64_t line_no, Diagnostics& diags) {
    m_evidence_in_run = true;
    const auto sig = find(rec, key::signature, line_no, diags);
    if (!sig) {
      return;
    }
    const auto signal = signal_index(*sig, rec.value(key::signal, std::string()));
    if (!signal) {
      diags.warning(Error{ErrorKind::invalid, m_name + ":" + std::to_string(line_no),
                          "signal '" + rec.value(key::signal, std::string()) + "' of '" + m_cat.at(*sig).id +
                              "' is not in this catalog; record skipped"});
      return;
    }
    const auto& from = object_or_empty(rec, key::from);
    scan::Hit hit;
    hit.signature = *sig;
    hit.signal = *signal;
    hit.source = source_id(rec.value(key::file, m_name), string_or_empty(rec, key::findings));
    hit.line_no = rec.value(key::line, std::uint64_t{0});
    hit.last_line_no = rec.value(key::last_line, hit.line_no);
    hit.count = std::max<std::uint64_t>(rec.value(key::count, std::uint64_t{1}), 1);
    hit.text = string_or_empty(rec, key::text); // null: a line no merge shows
    auto& ctx = hit.ctx;
    auto int_field = [&](const char* key, std::optional<context::Field<int>>& field) {
      const auto it = rec.find(key);
      if (it != rec.end() && it->is_number_integer()) {
        field = context::Field<int>{it->get<int>(), origin_of(from, key)};
      }
    };
    int_field(key::rank, ctx.rank);
    if (const auto it = rec.find(key::also_ranks); it != rec.end() && it->is_array()) {
      for (const auto& r : *it) {
        if (r.is_number_integer()) {
          hit.also_ranks.push_back(r.get<int>());
        }
      }
    }
    int_field(key::local_rank, ctx.local_rank);
    int_field(key::nranks, ctx.nranks);
    int_field(key::gpu, ctx.gpu);
    auto string_field = [&](const char* key, std::optional<context::Field<std::string>>& field) {
      const auto it = rec.find(key);
      if (it != rec.end() && it->is_string()) {
        field = context::Field<std::string>{it->get<std::string>(), origin_of(from, key)};
      }
    };
    string_field(key::host, ctx.host);
    string_field(key::pci, ctx.pci);
    if (const auto it = rec.find(key::pid); it != rec.end() && it->is_number_integer()) {
      ctx.pid = context::Field<std::int64_t>{it->get<std::int64_t>(), origin_of(from, key::pid)};
    }
    ctx.time = time_of(rec, from);
    for (const auto& [k, v] : object_or_empty(rec, key::captures).items()) {
      if (v.is_string()) {
        hit.captures.emplace_back(k, v.get<std::string>());
      }
    }
    if (const auto it = rec.find(key::traceback); it != rec.end() && it->is_object()) {
      hit.traceback = std::make_shared<const context::Traceback>(traceback_of(*it));
    }
    m_out.hits.push_back(std::move(hit));
  }

  static context::Traceback traceback_of(const json& j) {
    context::Traceback tb;
    tb.frame_count = j.value(key::frame_count, std::size_t{0});
    if (const auto it = j.find(key::frames); it != j.end() && it->is_array()) {
      for (const auto& f : *it) {
        if (f.is_object()) {
          tb.frames.push_back(context::Frame{f.value(key::file, std::string()), f.value(key::line, 0),
                                             f.value(key::function, std::string()), f.value(key::code, std::string())});
        }
      }
    }
    if (const auto it = j.find(key::chain); it != j.end() && it->is_array()) {
      for (const auto& c : *it) {
        if (c.is_object()) {
          tb.chain.push_back(context::ChainedException{
              c.value(key::text, std::string()), c.value(key::line, std::uint64_t{0}),
              c.value(key::link, std::string()) == context::to_string(context::ChainLink::direct_cause) ? context::ChainLink::direct_cause
                                                               : context::ChainLink::during_handling});
        }
      }
    }
    return tb;
  }

  void add_progress(const json& rec) {
    scan::ProgressMark m;
    m.source = source_id(rec.value(key::file, m_name), string_or_empty(rec, key::findings));
    m.line_no = rec.value(key::line, std::uint64_t{0});
    m.time = time_of(rec, object_or_empty(rec, key::from));
    m.text = string_or_empty(rec, key::text);
    m.relaunch = rec.value(key::relaunch, false);
    m_out.progress.push_back(std::move(m));
  }

  const catalog::Catalog& m_cat;
  Contents m_out;
  std::string m_name;
  std::string m_partial;       // a record the reader cut at its line limit, so far
  bool m_skip_partial = false; // ... or the rest of one too long to keep
  std::map<std::string, std::uint32_t> m_sources; // of the current run's records
  std::vector<scan::Hit> m_located;          // from incidents and groups, used when no evidence came
  bool m_evidence_in_run = false;
  bool m_warned_version = false;
  std::size_t m_records_in_run = 0;
};


Reader::Reader(const catalog::Catalog& cat, std::string name) : m_impl(std::make_unique<Impl>(cat, std::move(name))) {}
Reader::~Reader() = default;

void Reader::read(std::string_view text, std::uint64_t first_line, Diagnostics& diags) {
  m_impl->read(text, first_line, diags);
}

Contents Reader::finish(Diagnostics& diags) { return m_impl->finish(diags); }

} // namespace denpex::findings
