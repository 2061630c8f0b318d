#include <denpex/scan/scan.hpp>

#include <algorithm>
#include <cstring>
#include <array>
#include <filesystem>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <optional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include <re2/re2.h>
#include <re2/set.h>

#include <nlohmann/json.hpp>

#include <denpex/context/context.hpp>
#include <denpex/context/traceback.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::scan {

namespace {

// What one input unit produced; merged in input order for determinism.
struct UnitResult {
  std::vector<correlate::SourceRef> sources;
  std::vector<correlate::Hit> hits; // source ids are local to the unit
  std::vector<correlate::ErrorLine> error_lines;
  std::vector<correlate::ProgressMark> progress; // the last progress line of each source
  ScanTotals totals;
  matcher::ScanStats matcher;
  std::vector<Diagnostic> diags;
};

} // namespace

bool is_findings(std::string_view head) {
  const auto first = head.substr(0, head.find('\n'));
  return util::starts_with(first, "{\"type\":\"") && first.find("\"schema_version\":") != std::string_view::npos;
}

const std::vector<std::string>& error_line_patterns() {
  static const std::vector<std::string> k_patterns = {
      R"(\b[A-Z]\w*(?:Error|Exception)\b: )",
      R"(\b(?:FATAL|CRITICAL|ERROR)\b)",
      R"(\b(?:Fatal error|Segmentation fault|core dumped|Aborted)\b)",
      R"(NCCL WARN)",
      R"((?:^|\]:|\[)E\d{3,4} \d\d:\d\d:\d\d)",
      R"(\berror: )",
      // absl::Status codes that mean failure (XLA, JAX, TensorFlow, gRPC):
      // "INTERNAL: ... NCCL operation ... failed", "RESOURCE_EXHAUSTED: ...".
      // Not OUT_OF_RANGE or CANCELLED: tf.data ends every epoch with them.
      R"((?:^|: )(?:INTERNAL|UNKNOWN|RESOURCE_EXHAUSTED|UNAVAILABLE|FAILED_PRECONDITION|DEADLINE_EXCEEDED|ABORTED|DATA_LOSS|INVALID_ARGUMENT|PERMISSION_DENIED|UNIMPLEMENTED): \S)",
  };
  return k_patterns;
}

namespace {

// Samples the first error-looking lines of a source (Python exceptions,
// ERROR/FATAL, glog E-lines, NCCL WARN, "error:"), whether or not a signature
// matched them: the starting points of rule 10 when nothing is known. Stops
// scanning once its budget is spent, so it costs one set scan per chunk at
// the start of each source and nothing after.
class ErrorSampler {
public:
  ErrorSampler() {
    RE2::Options o;
    o.set_log_errors(false);
    m_set = std::make_unique<RE2::Set>(o, RE2::UNANCHORED);
    for (const auto& p : error_line_patterns()) {
      m_set->Add(p, nullptr);
    }
    m_set->Compile();
  }

  // Appends up to `budget` error-looking lines of `chunk`; returns how many.
  std::size_t sample(const source::Chunk& chunk, std::uint32_t source, context::SourceContext& ctx, std::size_t budget,
                     std::size_t max_copy, std::vector<correlate::ErrorLine>& out) const {
    const std::string_view text = chunk.text;
    if (budget == 0 || !m_set->Match(re2::StringPiece(text.data(), text.size()), nullptr)) {
      return 0;
    }
    std::size_t taken = 0;
    source::LineCounter lines(chunk);
    std::size_t pos = 0;
    while (pos < text.size() && taken < budget) {
      auto end = text.find('\n', pos);
      if (end == std::string_view::npos) {
        end = text.size();
      }
      std::string_view line = text.substr(pos, end - pos);
      if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
      }
      if (m_set->Match(re2::StringPiece(line.data(), line.size()), nullptr)) {
        correlate::ErrorLine el;
        el.source = source;
        el.line_no = lines.at(pos);
        el.text = std::string(util::clip(line, max_copy));
        el.ctx = ctx.context_for(text, pos, line);
        out.push_back(std::move(el));
        ++taken;
      }
      pos = end + 1;
    }
    return taken;
  }

private:
  std::unique_ptr<RE2::Set> m_set;
};

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
class FindingsReader {
public:
  FindingsReader(const catalog::Catalog& cat, UnitResult& out, std::string name)
      : m_cat(cat), m_out(out), m_name(std::move(name)) {}


  // A record longer than the reader's line limit (a large merge's summary
  // lists every source it read) arrives in pieces, the last line of a chunk
  // without its '\n': the pieces are joined before the record is parsed.
  void read_chunk(const source::Chunk& chunk, Diagnostics& diags) {
    std::uint64_t line_no = chunk.first_line;
    std::size_t pos = 0;
    while (pos < chunk.text.size()) {
      auto end = chunk.text.find('\n', pos);
      if (end == std::string_view::npos) {
        if (m_partial.size() + (chunk.text.size() - pos) > k_max_record) {
          diags.error(Error{ErrorKind::format, m_name + ":" + std::to_string(line_no),
                            "a findings record longer than 256 MiB; skipped"});
          m_partial.clear();
          m_skip_partial = true;
        } else if (!m_skip_partial) {
          m_partial.append(chunk.text.substr(pos));
        }
        return; // the rest of this line comes in the next chunk
      }
      auto piece = chunk.text.substr(pos, end - pos);
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
  void finish(Diagnostics& diags) {
    if (!m_partial.empty()) {
      read_line(m_partial, 0, diags); // the last record, without its '\n'
      m_partial.clear();
    }
    if (m_records_in_run > 0) {
      diags.warning(Error{ErrorKind::format, m_name,
                          "findings end without their summary record (the run that wrote them was cut short?)"});
      end_run(nullptr);
    }
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
    const auto type = rec.value("type", std::string());
    if (type == "evidence") {
      add_evidence(rec, line_no, diags);
    } else if (type == "progress") {
      add_progress(rec);
    } else if (type == "incident") {
      const auto sig = find(rec, "signature", line_no, diags);
      if (!sig) {
        return;
      }
      bool any_signal = false;
      if (rec.contains("signals") && rec["signals"].is_array()) {
        for (const auto& s : rec["signals"]) {
          if (!s.value("seen", false) || !s.contains("first") || !s["first"].is_object()) {
            continue;
          }
          const auto signal = signal_index(*sig, s.value("id", std::string())).value_or(0);
          add(*sig, signal, s["first"], s.value("count", std::uint64_t{1}), {});
          any_signal = true;
        }
      }
      if (!any_signal && rec.contains("where")) {
        add(*sig, 0, rec["where"], rec.value("count", std::uint64_t{1}), ranks_of(rec));
      }
      for (const char* group : {"collateral", "context"}) {
        if (rec.contains(group) && rec[group].is_array()) {
          for (const auto& g : rec[group]) {
            add_group(g, line_no, diags);
          }
        }
      }
    } else if (type == "unexplained") {
      add_group(rec, line_no, diags);
    } else if (type == "summary") {
      end_run(&rec);
    }
    // inference, starting_point and diagnostic records carry nothing to correlate.
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
      m_out.totals.sources += count("sources");
      m_out.totals.bytes += count("bytes");
      m_out.totals.lines += count("lines");
      m_out.totals.long_lines_cut += count("long_lines_cut");
      m_out.totals.matches += count("matches");
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
    if (rec.contains("ranks") && rec["ranks"].is_array()) {
      for (const auto& r : rec["ranks"]) {
        if (r.is_number_integer()) {
          ranks.push_back(r.get<int>());
        }
      }
    }
    return ranks;
  }

  void add_group(const json& g, std::uint64_t line_no, Diagnostics& diags) {
    const auto sig = find(g, "signature", line_no, diags);
    if (!sig || !g.contains("first")) {
      return;
    }
    add(*sig, 0, g["first"], g.value("count", std::uint64_t{1}), ranks_of(g));
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
      m_out.sources.push_back(correlate::SourceRef{file, std::nullopt, findings.empty() ? m_name : findings});
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
    correlate::Hit hit;
    hit.signature = sig;
    hit.signal = signal;
    hit.source = source_id(where.value("file", m_name));
    hit.line_no = where.value("line", std::uint64_t{0});
    hit.last_line_no = hit.line_no;
    hit.text = where.value("text", std::string());
    auto& ctx = hit.ctx;
    if (where.contains("host") && where["host"].is_string()) {
      ctx.host = context::Field<std::string>{where["host"].get<std::string>(), context::Origin::capture};
    }
    if (where.contains("pci") && where["pci"].is_string()) {
      ctx.pci = context::Field<std::string>{where["pci"].get<std::string>(), context::Origin::capture};
    }
    if (where.contains("gpu") && where["gpu"].is_number_integer()) {
      ctx.gpu = context::Field<int>{where["gpu"].get<int>(), context::Origin::capture};
    }
    if (const auto us = clock_micros(where, "time_us")) {
      ctx.time = from_epoch_micros(*us);
    } else if (const auto mono = clock_micros(where, "mono_us")) {
      ctx.time.kind = context::ClockKind::monotonic;
      ctx.time.mono_micros = *mono;
      ctx.time.format = "dmesg";
    }
    const bool where_rank = where.contains("rank") && where["rank"].is_number_integer();
    if (where_rank && std::find(ranks.begin(), ranks.end(), where["rank"].get<int>()) == ranks.end()) {
      ranks.insert(ranks.begin(), where["rank"].get<int>());
    }
    if (ranks.empty()) {
      hit.count = std::max<std::uint64_t>(count, 1);
      m_located.push_back(std::move(hit));
      return;
    }
    const std::uint64_t n = ranks.size();
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      correlate::Hit h = hit;
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
    const auto clock = rec.value("clock", std::string("none"));
    const auto stamp = rec.find("stamp");
    if (clock == "wall" && stamp != rec.end() && stamp->is_string()) {
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
    } else if (const auto us = clock_micros(rec, "mono_us"); clock == "monotonic" && us) {
      t.kind = context::ClockKind::monotonic;
      t.mono_micros = *us;
    } else {
      return t;
    }
    t.format = intern_format(rec.value("time_format", std::string()));
    t.origin = origin_of(from, "time");
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
    const auto sig = find(rec, "signature", line_no, diags);
    if (!sig) {
      return;
    }
    const auto signal = signal_index(*sig, rec.value("signal", std::string()));
    if (!signal) {
      diags.warning(Error{ErrorKind::invalid, m_name + ":" + std::to_string(line_no),
                          "signal '" + rec.value("signal", std::string()) + "' of '" + m_cat.at(*sig).id +
                              "' is not in this catalog; record skipped"});
      return;
    }
    const auto& from = object_or_empty(rec, "from");
    correlate::Hit hit;
    hit.signature = *sig;
    hit.signal = *signal;
    hit.source = source_id(rec.value("file", m_name), string_or_empty(rec, "findings"));
    hit.line_no = rec.value("line", std::uint64_t{0});
    hit.last_line_no = rec.value("last_line", hit.line_no);
    hit.count = std::max<std::uint64_t>(rec.value("count", std::uint64_t{1}), 1);
    hit.text = string_or_empty(rec, "text"); // null: a line no merge shows
    auto& ctx = hit.ctx;
    auto int_field = [&](const char* key, std::optional<context::Field<int>>& field) {
      const auto it = rec.find(key);
      if (it != rec.end() && it->is_number_integer()) {
        field = context::Field<int>{it->get<int>(), origin_of(from, key)};
      }
    };
    int_field("rank", ctx.rank);
    if (const auto it = rec.find("also_ranks"); it != rec.end() && it->is_array()) {
      for (const auto& r : *it) {
        if (r.is_number_integer()) {
          hit.also_ranks.push_back(r.get<int>());
        }
      }
    }
    int_field("local_rank", ctx.local_rank);
    int_field("nranks", ctx.nranks);
    int_field("gpu", ctx.gpu);
    auto string_field = [&](const char* key, std::optional<context::Field<std::string>>& field) {
      const auto it = rec.find(key);
      if (it != rec.end() && it->is_string()) {
        field = context::Field<std::string>{it->get<std::string>(), origin_of(from, key)};
      }
    };
    string_field("host", ctx.host);
    string_field("pci", ctx.pci);
    if (const auto it = rec.find("pid"); it != rec.end() && it->is_number_integer()) {
      ctx.pid = context::Field<std::int64_t>{it->get<std::int64_t>(), origin_of(from, "pid")};
    }
    ctx.time = time_of(rec, from);
    for (const auto& [k, v] : object_or_empty(rec, "captures").items()) {
      if (v.is_string()) {
        hit.captures.emplace_back(k, v.get<std::string>());
      }
    }
    if (const auto it = rec.find("traceback"); it != rec.end() && it->is_object()) {
      hit.traceback = std::make_shared<const context::Traceback>(traceback_of(*it));
    }
    m_out.hits.push_back(std::move(hit));
  }

  static context::Traceback traceback_of(const json& j) {
    context::Traceback tb;
    tb.frame_count = j.value("frame_count", std::size_t{0});
    if (const auto it = j.find("frames"); it != j.end() && it->is_array()) {
      for (const auto& f : *it) {
        if (f.is_object()) {
          tb.frames.push_back(context::Frame{f.value("file", std::string()), f.value("line", 0),
                                             f.value("function", std::string()), f.value("code", std::string())});
        }
      }
    }
    if (const auto it = j.find("chain"); it != j.end() && it->is_array()) {
      for (const auto& c : *it) {
        if (c.is_object()) {
          tb.chain.push_back(context::ChainedException{
              c.value("text", std::string()), c.value("line", std::uint64_t{0}),
              c.value("link", std::string()) == "direct-cause" ? context::ChainLink::direct_cause
                                                               : context::ChainLink::during_handling});
        }
      }
    }
    return tb;
  }

  void add_progress(const json& rec) {
    correlate::ProgressMark m;
    m.source = source_id(rec.value("file", m_name), string_or_empty(rec, "findings"));
    m.line_no = rec.value("line", std::uint64_t{0});
    m.time = time_of(rec, object_or_empty(rec, "from"));
    m.text = string_or_empty(rec, "text");
    m.relaunch = rec.value("relaunch", false);
    m_out.progress.push_back(std::move(m));
  }

  const catalog::Catalog& m_cat;
  UnitResult& m_out;
  std::string m_name;
  std::string m_partial;       // a record the reader cut at its line limit, so far
  bool m_skip_partial = false; // ... or the rest of one too long to keep
  std::map<std::string, std::uint32_t> m_sources; // of the current run's records
  std::vector<correlate::Hit> m_located;          // from incidents and groups, used when no evidence came
  bool m_evidence_in_run = false;
  std::size_t m_records_in_run = 0;
};

// Finds the last training-progress line of a source cheaply: only the tail
// of each chunk (4 KiB) is looked at, so progress is known at chunk
// granularity for about 0.4% extra work. Progress is a step or iteration
// with a finite loss, Megatron's iteration counter, a tqdm bar, or Hugging
// Face Trainer's log dict with a finite loss and an epoch, and no NaN or Inf
// loss or gradient norm on the line.
class ProgressTracker {
public:
  ProgressTracker() {
    RE2::Options o;
    o.set_log_errors(false);
    m_set = std::make_unique<RE2::Set>(o, RE2::UNANCHORED);
    static const char* const k_patterns[] = {
        R"((?i)\b(?:step|iter(?:ation)?|global_step)\b[ =:#]*\d+.*\bloss\b[ =:]*-?\d+\.\d+)", // "Step #50\tLoss: 0.2" (Horovod's examples)
        R"(\biteration\s+\d+\s*/\s*\d+\s*\|)",
        R"(\d+/\d+ \[\d+:\d+(?::\d+)?<\d+:\d+)",
        R"(\{'loss': -?\d+(?:\.\d+)?(?:e-?\d+)?,.*'epoch': \d)",
    };
    for (const char* p : k_patterns) {
      m_set->Add(p, nullptr);
    }
    m_set->Compile();
    m_nonfinite = std::make_unique<RE2>(R"((?i)\b(?:loss|grad[ _]norm)\b[^|,]*?[:=]\s*'?(?:nan|[-+]?inf)\b)", o);
  }

  // Updates `mark` with the last progress line in the tail of `chunk`.
  void update(const source::Chunk& chunk, std::uint32_t source, context::SourceContext& ctx,
              std::optional<correlate::ProgressMark>& mark) const {
    const std::string_view text = chunk.text;
    std::size_t start = text.size() > 4096 ? text.size() - 4096 : 0;
    if (start > 0) {
      const auto nl = text.find('\n', start);
      if (nl == std::string_view::npos) {
        return;
      }
      start = nl + 1;
    }
    const auto tail = text.substr(start);
    if (!m_set->Match(re2::StringPiece(tail.data(), tail.size()), nullptr)) {
      return;
    }
    // The last matching line of the tail, found from the end.
    std::size_t end = text.size();
    while (end > start) {
      std::size_t line_end = end;
      if (text[line_end - 1] == '\n') {
        --line_end;
      }
      const auto nl = line_end == 0 ? std::string_view::npos : text.rfind('\n', line_end - 1);
      const std::size_t line_start = nl == std::string_view::npos || nl < start ? start : nl + 1;
      const auto line = text.substr(line_start, line_end - line_start);
      const re2::StringPiece piece(line.data(), line.size());
      // A step whose loss or gradient norm is NaN or Inf is not progress:
      // the run counts on, but it no longer trains.
      if (m_set->Match(piece, nullptr) && !RE2::PartialMatch(piece, *m_nonfinite)) {
        correlate::ProgressMark m;
        m.source = source;
        m.line_no = chunk.line_at(line_start);
        m.time = ctx.context_for(text, line_start, line).time;
        m.text = std::string(util::clip(line, 512));
        mark = std::move(m);
        return;
      }
      end = line_start;
    }
  }

private:
  std::unique_ptr<RE2::Set> m_set;
  std::unique_ptr<RE2> m_nonfinite;
};

// Finds where a file that several runs appended to began again (LSF's -e
// and nohup append; so does `>>`): the file's first three lines (module
// loads, a banner, the arguments a script echoes) printed again, in order,
// from the start of a later line. The last k_max_marks such places are
// kept: the correlator takes the last one with failure evidence below it,
// and a cause above that one ended an earlier run (docs/correlator.md,
// "Episodes"). A line with a stamp of its own never repeats exactly, so
// this reads the logs without stamps, where line order is all there is.
// Costs one memmem of the three-line block per chunk (tens of GB/s); a block
// split across two chunks is not seen.
class RunStartTracker {
public:
  static constexpr std::size_t k_max_marks = 64;
  static constexpr std::string_view k_bom = "\xEF\xBB\xBF";

  void update(const source::Chunk& chunk, std::uint32_t source, std::vector<correlate::ProgressMark>& marks) {
    const std::string_view text = chunk.text;
    if (chunk.first_line == 1) {
      m_block = preamble(text);
    }
    if (m_block.empty()) {
      return;
    }
    std::size_t from = 0;
    if (chunk.first_line == 1) { // not the file's own first lines
      from = (text.substr(0, k_bom.size()) == k_bom ? k_bom.size() : 0) + 1;
    }
    while (from + m_block.size() <= text.size()) {
      const void* hit = ::memmem(text.data() + from, text.size() - from, m_block.data(), m_block.size());
      if (hit == nullptr) {
        break;
      }
      const auto at = static_cast<std::size_t>(static_cast<const char*>(hit) - text.data());
      const std::size_t after = at + m_block.size();
      // A run whose output begins with a byte-order mark (a Windows or .NET
      // writer appending to the file) still begins a line.
      std::size_t line_at = at;
      if (line_at >= k_bom.size() && text.substr(line_at - k_bom.size(), k_bom.size()) == k_bom) {
        line_at -= k_bom.size();
      }
      const bool starts_line = line_at == 0 || text[line_at - 1] == '\n';
      const bool ends_line = after == text.size() || text[after] == '\n' || text[after] == '\r';
      if (starts_line && ends_line) {
        correlate::ProgressMark m;
        m.source = source;
        m.line_no = chunk.line_at(line_at);
        m.text = std::string(util::clip(text.substr(at, text.find('\n', at) - at), 512));
        m.relaunch = true;
        if (marks.size() == k_max_marks) {
          marks.erase(marks.begin());
        }
        marks.push_back(std::move(m));
      }
      from = at + 1;
    }
  }

private:
  // The first three lines as one block, when they can mark a start: none
  // blank or stamped (a stamp never repeats), 24 bytes or more in all, and
  // not a traceback (a file that holds only crashes begins with one, and
  // every crash repeats it).
  static std::string preamble(std::string_view text) {
    if (text.substr(0, k_bom.size()) == k_bom) {
      text.remove_prefix(k_bom.size());
    }
    std::size_t end = 0;
    for (int n = 0; n < 3; ++n) {
      const auto nl = text.find('\n', end);
      if (nl == std::string_view::npos) {
        return {};
      }
      const auto line = text.substr(end, nl - end);
      if (line.find_first_not_of(" \t\r") == std::string_view::npos || context::find_timestamp(line)) {
        return {};
      }
      end = nl + 1;
    }
    const auto block = text.substr(0, end - 1);
    if (block.size() < 24 || block.find("Traceback (most recent call last)") != std::string_view::npos) {
      return {};
    }
    return std::string(block.back() == '\r' ? block.substr(0, block.size() - 1) : block);
  }

  std::string m_block;
};

const ProgressTracker& progress_tracker() {
  static const ProgressTracker k_tracker;
  return k_tracker;
}

const ErrorSampler& error_sampler() {
  static const ErrorSampler k_sampler;
  return k_sampler;
}

using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, int, std::string>;

// Collects hits from one source with bounded memory: per key, the first
// `keep` hits are kept; later ones are folded into the last kept one.
class Collector final : public matcher::MatchSink {
public:
  Collector(UnitResult& out, std::uint32_t source, context::SourceContext& ctx, const ScanOptions& options,
            std::size_t presence_patterns)
      : m_out(out), m_source(source), m_ctx(ctx), m_options(options), m_presence_patterns(presence_patterns),
        m_presence_wanted(presence_patterns > 0) {}

  // Whether a presence signal is still to be found in this source (read by
  // the threads that look for the next chunks' candidates: a late answer
  // only costs a chunk's scan of the presence signals' database).
  [[nodiscard]] bool presence_wanted() const { return m_presence_wanted.load(std::memory_order_relaxed); }

  bool wants(std::uint32_t signature, std::uint32_t signal) override {
    return std::find(m_present.begin(), m_present.end(), std::make_pair(signature, signal)) == m_present.end();
  }

  bool matched(const matcher::MatchEvent& ev) override {
    ++m_out.totals.matches;
    if (ev.presence) {
      m_present.emplace_back(ev.signature, ev.signal); // this source needs no more of it
      m_presence_wanted.store(m_present.size() < m_presence_patterns, std::memory_order_relaxed);
    }
    if (logged_exception(ev)) {
      return true;
    }
    const context::LineContext& ctx = context_of(ev);
    auto& slot = m_kept[key_of(ev, ctx)];
    const bool folded = slot.size() >= m_options.keep_per_key;
    // A traceback walk also keeps the chain state for later exceptions, so it
    // runs for every exception line; the hit is built only when it is kept
    // (or shown as it is read).
    const auto lookback = lookback_of(ev);
    if (folded && !m_on_hit && lookback && *lookback != catalog::Signal::Lookback::python_traceback) {
      count_into(slot, ev);
      return true;
    }
    correlate::Hit hit;
    hit.signature = ev.signature;
    hit.signal = ev.signal;
    hit.source = m_source;
    hit.line_no = ev.line_no;
    hit.last_line_no = ev.line_no;
    hit.ctx = ctx;
    for (const auto& c : ev.captures()) {
      hit.captures.emplace_back(std::string(c.name), std::string(util::clip(c.value, 256)));
    }
    read_above(ev, hit);
    if (hit.traceback && hit.traceback->ignored) {
      return true; // Python reported it and went on (atexit, unraisable): not evidence
    }
    if (m_on_hit) {
      hit.text = std::string(util::clip(ev.line, m_options.max_line_copy));
      m_on_hit(hit);
    }
    if (folded) {
      count_into(slot, ev);
      return true;
    }
    if (!m_on_hit) {
      hit.text = std::string(util::clip(ev.line, m_options.max_line_copy));
    }
    slot.push_back(m_out.hits.size());
    m_out.hits.push_back(std::move(hit));
    return true;
  }

  std::function<void(const correlate::Hit&)> m_on_hit;

  void end_chunk(std::string_view chunk) {
    if (m_options.catalog != nullptr) {
      m_above.end_chunk(chunk);
    }
  }

private:

  // The line's context. Several entries matching one line (NCCL's NVLS
  // line, an exception two entries name) read it once.
  const context::LineContext& context_of(const matcher::MatchEvent& ev) {
    if (!m_line_ctx || m_line_ctx->offset != ev.offset || m_line_ctx->match_pos != ev.match_pos) {
      m_line_ctx = LineContextCache{ev.offset, ev.match_pos, m_ctx.context_for(ev.chunk, ev.line_pos, ev.line, ev.match_pos)};
    }
    return m_line_ctx->ctx;
  }

  // The slot a hit is kept in: entry, signal, source, rank and what tells
  // hits of one rank apart (the GPU; the message, for generic entries; the
  // process and communicator size, for a line without a rank).
  Key key_of(const matcher::MatchEvent& ev, const context::LineContext& ctx) {
    const int rank = ctx.rank ? ctx.rank->value : -1;
    std::string gpu = ctx.pci ? ctx.pci->value : "";
    if (const auto pci = capture_of(ev, "pci")) {
      gpu = context::normalize_pci(util::clip(*pci, 256));
    }
    // Generic evidence is kept per distinct message (numbers masked): a
    // rank's fatal exception is never folded into the recovered ones before it.
    // Distinct messages are unbounded (a warning naming a different file each
    // step): past k_max_messages per entry and rank in a source, the rest
    // share one slot, so memory and the correlator's work stay bounded.
    if (m_options.catalog != nullptr && !m_options.catalog->at(ev.signature).headline.empty()) {
      gpu = util::message_template(ev.line.substr(std::min(ev.match_pos, ev.line.size())));
      auto& seen = m_messages[{ev.signature, ev.signal, rank}];
      if (seen.count(gpu) == 0) {
        if (seen.size() >= k_max_messages) {
          gpu = "\x01more messages";
        } else {
          seen.insert(gpu);
        }
      }
    }
    // A line from a named process (NCCL's host:pid) is kept per process, and a
    // line that states its communicator's size per size: every process's
    // init line for its largest communicator says who it is (the identity map).
    if (rank < 0 && ctx.pid) {
      gpu += "|pid " + std::to_string(ctx.pid->value);
      if (const auto n = capture_of(ev, "nranks")) {
        gpu += "|n ";
        gpu += util::clip(*n, 256);
      }
    }
    return Key{ev.signature, ev.signal, m_source, rank, std::move(gpu)};
  }

  // An exception line that a logger printed below the error level
  // ("[WARNING] FileNotFoundError: ...", torch._dynamo reporting a compile
  // it fell back from) was caught and logged: not evidence of a failure.
  bool logged_exception(const matcher::MatchEvent& ev) const {
    return lookback_of(ev) == catalog::Signal::Lookback::python_traceback &&
           context::logged_below_error(ev.line.substr(0, std::min(ev.match_pos, ev.line.size())));
  }

  // What the hit's signal reads above its line; nothing known without a catalog.
  std::optional<catalog::Signal::Lookback> lookback_of(const matcher::MatchEvent& ev) const {
    if (m_options.catalog == nullptr) {
      return std::nullopt;
    }
    return m_options.catalog->at(ev.signature).signals[ev.signal].lookback;
  }

  // A capture the slot depends on; the captures are only taken when the
  // pattern has a group of that name.
  static std::optional<std::string_view> capture_of(const matcher::MatchEvent& ev, std::string_view name) {
    if (!ev.declares(name)) {
      return std::nullopt;
    }
    for (const auto& c : ev.captures()) {
      if (c.name == name) {
        return c.value;
      }
    }
    return std::nullopt;
  }

  void count_into(const std::vector<std::size_t>& slot, const matcher::MatchEvent& ev) {
    auto& last = m_out.hits[slot.back()];
    last.count += 1;
    last.last_line_no = ev.line_no;
  }

  // What the signal wants read above its line: the traceback an exception
  // line ends, or the type a C++ what() line was thrown as (a capture).
  void read_above(const matcher::MatchEvent& ev, correlate::Hit& hit) {
    const auto lookback = lookback_of(ev);
    if (!lookback) {
      return;
    }
    using Lookback = catalog::Signal::Lookback;
    switch (*lookback) {
    case Lookback::none:
      break;
    case Lookback::python_traceback:
      if (auto tb = m_above.ending_at(ev.chunk, ev.line_pos, ev.line_no)) {
        rank_from_header(*tb, hit);
        hit.traceback = std::make_shared<const context::Traceback>(std::move(*tb));
      }
      break;
    case Lookback::cxx_terminate:
      // Without the "terminate called" line above it, the type is unknown.
      hit.captures.emplace_back("type", m_above.thrown_type(ev.chunk, ev.line_pos).value_or("uncaught C++ exception"));
      break;
    }
  }

  // An exception line that names no one takes who printed it from its
  // traceback's header line: a logger prints "[stamp TP3] Scheduler hit an
  // exception: Traceback ..." with its prefix once, above the frames.
  static void rank_from_header(const context::Traceback& tb, correlate::Hit& hit) {
    if (hit.ctx.rank || hit.ctx.local_rank || tb.header_line.empty()) {
      return;
    }
    const auto header = context::parse_line(tb.header_line);
    if (header.rank) {
      hit.ctx.rank = context::Field<int>{header.rank->value, context::Origin::neighbour};
    } else if (header.local_rank) {
      hit.ctx.local_rank = context::Field<int>{header.local_rank->value, context::Origin::neighbour};
    }
    if (!hit.ctx.pid && header.pid && (header.rank || header.local_rank)) {
      hit.ctx.pid = context::Field<std::int64_t>{header.pid->value, context::Origin::neighbour};
    }
  }

  static constexpr std::size_t k_max_messages = 256;
  std::map<std::tuple<std::uint32_t, std::uint32_t, int>, std::set<std::string>> m_messages;
  context::TracebackReader m_above;
  UnitResult& m_out;
  std::uint32_t m_source;
  context::SourceContext& m_ctx;
  const ScanOptions& m_options;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> m_present; // presence signals found (a handful)
  std::size_t m_presence_patterns;
  std::atomic<bool> m_presence_wanted;
  std::map<Key, std::vector<std::size_t>> m_kept;
  struct LineContextCache {
    std::uint64_t offset; // the line's, in its source
    std::size_t match_pos;
    context::LineContext ctx;
  };
  std::optional<LineContextCache> m_line_ctx;
};

// One chunk copied out of the reader, with the set's verdict on it.
struct PendingChunk {
  std::string text;
  std::uint64_t first_line = 0;
  std::uint64_t offset = 0;
  std::vector<std::uint32_t> soft_breaks;
  matcher::Candidates candidates;
};

using NextChunk = Expected<std::optional<source::Chunk>>;

// denpex's own JSON Lines findings (a per-node run's output), merged.
void read_findings(source::LineReader& reader, std::optional<source::Chunk> first, const catalog::Catalog& catalog,
                   UnitResult& out, const std::string& name, Diagnostics& diags) {
  FindingsReader findings(catalog, out, name);
  NextChunk chunk = std::move(first);
  for (; chunk && *chunk; chunk = reader.next()) {
    findings.read_chunk(**chunk, diags);
  }
  if (!chunk) {
    diags.error(chunk.error());
  }
  findings.finish(diags);
  ++out.totals.findings_files;
}

// One chunk after another: the candidates, then everything after them.
template <typename Finish>
void scan_sequential(source::LineReader& reader, std::optional<source::Chunk> first, const matcher::Matcher& matcher,
                     const Collector& sink, Diagnostics& diags, Finish& finish_chunk) {
  matcher::Candidates candidates;
  for (NextChunk chunk = std::move(first);; chunk = reader.next()) {
    if (!chunk) {
      diags.error(chunk.error());
      break;
    }
    if (!*chunk) {
      break;
    }
    matcher.candidates((*chunk)->text, candidates, diags, nullptr, sink.presence_wanted());
    finish_chunk(**chunk, candidates);
  }
}

// One big file on several cores, double-buffered: while `threads` workers
// find the candidates of one batch of chunks (most of the time), this thread
// reads the next batch; then it finishes the matched batch in input order.
// Two batches of up to 16 chunks (1 MiB each by default) bound the memory
// whatever the core count.
template <typename Finish>
void scan_double_buffered(source::LineReader& reader, std::optional<source::Chunk> first,
                          const matcher::Matcher& matcher, const Collector& sink, unsigned threads, Diagnostics& diags,
                          Finish& finish_chunk) {
  const std::size_t batch_size = std::min<std::size_t>(static_cast<std::size_t>(threads) * 2, 16);
  std::vector<PendingChunk> cur(batch_size);
  std::vector<PendingChunk> nxt(batch_size);
  std::optional<NextChunk> pending = NextChunk(std::move(first));
  bool done = false;
  auto read_batch = [&](std::vector<PendingChunk>& batch) {
    std::size_t n = 0;
    while (!done && n < batch.size()) {
      auto chunk = pending ? std::move(*pending) : reader.next();
      pending.reset();
      if (!chunk) {
        diags.error(chunk.error());
        done = true;
      } else if (!*chunk) {
        done = true;
      } else {
        batch[n].text.assign((*chunk)->text);
        batch[n].first_line = (*chunk)->first_line;
        batch[n].offset = (*chunk)->offset;
        batch[n].soft_breaks.assign((*chunk)->soft_breaks.begin(), (*chunk)->soft_breaks.end());
        ++n;
      }
    }
    return n;
  };
  std::size_t n = read_batch(cur);
  while (n > 0) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads && t < n; ++t) {
      pool.emplace_back([&, t] {
        for (std::size_t k = t; k < n; k += threads) {
          matcher.candidates(cur[k].text, cur[k].candidates, diags, nullptr, sink.presence_wanted());
        }
      });
    }
    const std::size_t next_n = read_batch(nxt);
    for (auto& th : pool) {
      th.join();
    }
    for (std::size_t k = 0; k < n; ++k) {
      finish_chunk(source::Chunk{cur[k].text, cur[k].first_line, cur[k].offset, cur[k].soft_breaks}, cur[k].candidates);
    }
    std::swap(cur, nxt);
    n = next_n;
  }
}

void read_unit(source::InputOpener& opener, const source::InputUnit& unit, const matcher::Matcher& matcher,
               const ScanOptions& options, unsigned threads, UnitResult& out,
               const std::function<void(const correlate::Hit&, const correlate::SourceRef&)>& live,
               Diagnostics& diags) {
  opener.read(unit, diags, [&](source::SourceInfo& info, source::ByteStream& stream) {
    const auto local_id = static_cast<std::uint32_t>(out.sources.size());
    out.sources.push_back(correlate::SourceRef{info.name, info.mtime});
    ++out.totals.sources;
    source::LineReader reader(stream, info.name, options.reader);
    context::SourceContext ctx(info.name, options.formats);
    Collector sink(out, local_id, ctx, options, matcher.presence_patterns());
    std::size_t samples_left = options.error_samples;
    std::optional<correlate::ProgressMark> progress;
    std::vector<correlate::ProgressMark> relaunches;
    RunStartTracker run_start;
    if (live) {
      sink.m_on_hit = [&](const correlate::Hit& h) { live(h, out.sources[local_id]); };
    }

    // Everything after the set match, in input order.
    auto finish_chunk = [&](const source::Chunk& chunk, const matcher::Candidates& candidates) {
      ++out.matcher.chunks;
      matcher.scan_candidates(chunk, candidates, sink, &out.matcher);
      progress_tracker().update(chunk, local_id, ctx, progress);
      run_start.update(chunk, local_id, relaunches);
      // With the sampler's patterns in the matcher's set, a chunk is sampled
      // only if the set saw one of them: no second pass over every byte.
      const bool may_sample = !matcher.has_extra_patterns() ||
                              (!candidates.whole.empty() &&
                                                              static_cast<std::size_t>(candidates.whole.back()) >= matcher.extra_base());
      if (samples_left > 0 && may_sample) {
        samples_left -= error_sampler().sample(chunk, local_id, ctx, samples_left, options.max_line_copy,
                                               out.error_lines);
      }
      ctx.end_chunk(chunk.text);
      sink.end_chunk(chunk.text);
      if (options.bytes_done != nullptr) {
        options.bytes_done->fetch_add(chunk.text.size(), std::memory_order_relaxed);
      }
      if (options.on_chunk) {
        options.on_chunk(out.hits, out.sources);
      }
    };

    // The first chunk decides whether this is a log or denpex's own findings.
    bool is_findings = false;
    auto first = reader.next();
    if (!first) {
      diags.error(first.error());
    } else if (*first) {
      if (options.findings_catalog != nullptr && scan::is_findings((*first)->text)) {
        out.sources.pop_back(); // the findings name their own sources, and count them
        --out.totals.sources;
        read_findings(reader, std::move(*first), *options.findings_catalog, out, info.name, diags);
        is_findings = true;
      } else if (threads <= 1 || options.on_chunk) {
        scan_sequential(reader, std::move(*first), matcher, sink, diags, finish_chunk);
      } else {
        scan_double_buffered(reader, std::move(*first), matcher, sink, threads, diags, finish_chunk);
      }
    }
    if (progress) {
      out.progress.push_back(std::move(*progress));
    }
    for (auto& m : relaunches) {
      out.progress.push_back(std::move(m));
    }
    // Findings report what their runs read (their summary records), not their own lines.
    if (!is_findings) {
      const auto& st = reader.stats();
      out.totals.bytes += st.bytes;
      out.totals.lines += st.lines;
      out.totals.long_lines_cut += st.long_lines_cut;
    }
    return true;
  });
}

void scan_unit(source::InputOpener& opener, const source::InputUnit& unit, const matcher::Matcher& matcher,
               const ScanOptions& options, unsigned threads, UnitResult& out,
               const std::function<void(const correlate::Hit&, const correlate::SourceRef&)>& live) {
  Diagnostics diags;
  // Whatever a unit throws (a library's exception on input nobody foresaw)
  // is that unit's one named error, never the end of the run: units are
  // read on worker threads, where an escaping exception ends the process.
  try {
    read_unit(opener, unit, matcher, options, threads, out, live, diags);
  } catch (const std::exception& e) {
    diags.error(Error{ErrorKind::io, unit.display, std::string("reading stopped: ") + e.what()});
  }
  out.diags = diags.items();
  if (options.units_done != nullptr) {
    options.units_done->fetch_add(1, std::memory_order_relaxed);
  }
}

// Moves one unit's results onto the end of the run's (source ids shifted)
// and releases the unit's buffers.
void commit(UnitResult& r, ScanResult& result, Diagnostics& diags) {
  const auto base = static_cast<std::uint32_t>(result.sources.size());
  for (auto& s : r.sources) {
    result.sources.push_back(std::move(s));
  }
  for (auto& h : r.hits) {
    h.source += base;
    result.hits.push_back(std::move(h));
  }
  for (auto& e : r.error_lines) {
    e.source += base;
    result.error_lines.push_back(std::move(e));
  }
  for (auto& p : r.progress) {
    p.source += base;
    result.progress.push_back(std::move(p));
  }
  result.totals.bytes += r.totals.bytes;
  result.totals.lines += r.totals.lines;
  result.totals.sources += r.totals.sources;
  result.totals.long_lines_cut += r.totals.long_lines_cut;
  result.totals.matches += r.totals.matches;
  result.totals.findings_files += r.totals.findings_files;
  result.matcher.chunks += r.matcher.chunks;
  result.matcher.chunks_with_hits += r.matcher.chunks_with_hits;
  result.matcher.line_by_line += r.matcher.line_by_line;
  result.matcher.lines_confirmed += r.matcher.lines_confirmed;
  result.matcher.confirm_ns += r.matcher.confirm_ns;
  for (auto& d : r.diags) {
    diags.add(d.level, std::move(d.error));
  }
  r = UnitResult{};
}

// The progress line's denominators (ScanOptions::units_total, bytes_total).
void publish_totals(const std::vector<source::InputUnit>& units, const ScanOptions& options) {
  if (options.units_total != nullptr) {
    options.units_total->store(units.size(), std::memory_order_relaxed);
  }
  if (options.bytes_total == nullptr) {
    return;
  }
  static constexpr std::array<std::string_view, 9> k_packed = {".gz", ".tgz", ".zst", ".xz", ".bz2",
                                                                ".tar", ".zip", ".lz4", ".7z"};
  std::uint64_t total = 0;
  for (const auto& u : units) {
    std::error_code ec;
    const bool packed = std::any_of(k_packed.begin(), k_packed.end(),
                                    [&](std::string_view ext) { return util::ends_with(u.path, ext); });
    if (u.path == "-" || packed || !std::filesystem::is_regular_file(u.path, ec)) {
      return; // unknown: read bytes are not comparable with a size on disk
    }
    total += std::filesystem::file_size(u.path, ec);
  }
  options.bytes_total->store(total, std::memory_order_relaxed);
}

} // namespace

ScanResult run(source::InputOpener& opener, const std::vector<std::string>& paths, const matcher::Matcher& matcher,
               const ScanOptions& options, Diagnostics& diags, const HitCallback& on_hit) {
  ScanResult result;
  const auto units = opener.expand(paths, diags);
  std::vector<UnitResult> results(units.size());
  publish_totals(units, options);

  // Each unit's results join the run's as soon as every unit before it has
  // (input order, so the output does not depend on the threads): the run
  // never holds every unit's buffers next to the joined ones, which for a
  // merge of 1,000 nodes' findings (1,000 units) would double its memory.
  const unsigned jobs = std::max(1u, std::min<unsigned>(options.jobs, static_cast<unsigned>(units.size())));
  if (jobs <= 1 || on_hit || options.on_chunk) {
    // One unit (or streaming, which keeps input order): units one after
    // another, each using every core for its set matching.
    const unsigned threads = std::max(1u, options.jobs);
    for (std::size_t i = 0; i < units.size(); ++i) {
      scan_unit(opener, units[i], matcher, options, threads, results[i], on_hit);
      commit(results[i], result, diags);
    }
  } else {
    std::atomic<std::size_t> next{0};
    std::mutex mutex;
    std::vector<char> done(units.size(), 0);
    std::size_t committed = 0;
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < jobs; ++t) {
      pool.emplace_back([&] {
        for (std::size_t i = next++; i < units.size(); i = next++) {
          scan_unit(opener, units[i], matcher, options, 1, results[i], {});
          const std::lock_guard<std::mutex> lock(mutex);
          done[i] = 1;
          for (; committed < units.size() && done[committed] != 0; ++committed) {
            commit(results[committed], result, diags);
          }
        }
      });
    }
    for (auto& th : pool) {
      th.join();
    }
  }
  return result;
}

} // namespace denpex::scan
