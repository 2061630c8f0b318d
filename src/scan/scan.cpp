#include <denpex/scan/scan.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include <re2/re2.h>
#include <re2/set.h>

#include <denpex/context/context.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::scan {

namespace {

// What one input unit produced; merged in input order for determinism.
struct UnitResult {
  std::vector<correlate::SourceRef> sources;
  std::vector<correlate::Hit> hits; // source ids are local to the unit
  std::vector<correlate::ErrorLine> error_lines;
  ScanTotals totals;
  std::vector<Diagnostic> diags;
};

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
    static const char* const k_patterns[] = {
        R"(\b[A-Z]\w*(?:Error|Exception)\b: )",
        R"(\b(?:FATAL|CRITICAL|ERROR)\b)",
        R"(\b(?:Fatal error|Segmentation fault|core dumped|Aborted)\b)",
        R"(NCCL WARN)",
        R"((?:^|\]:|\[)E\d{4} \d\d:\d\d:\d\d)",
        R"(\berror: )",
    };
    for (const char* p : k_patterns) {
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
    std::uint64_t line_no = chunk.first_line;
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
        el.line_no = line_no;
        el.text = std::string(util::clip(line, max_copy));
        el.ctx = ctx.context_for(text, pos, line);
        out.push_back(std::move(el));
        ++taken;
      }
      pos = end + 1;
      ++line_no;
    }
    return taken;
  }

private:
  std::unique_ptr<RE2::Set> m_set;
};

const ErrorSampler& error_sampler() {
  static const ErrorSampler k_sampler;
  return k_sampler;
}

using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, int, std::string>;

// Collects hits from one source with bounded memory: per key, the first
// `keep` hits are kept; later ones are folded into the last kept one.
class Collector final : public matcher::MatchSink {
public:
  Collector(UnitResult& out, std::uint32_t source, context::SourceContext& ctx, const ScanOptions& options)
      : m_out(out), m_source(source), m_ctx(ctx), m_options(options) {}

  bool matched(const matcher::MatchEvent& ev) override {
    ++m_out.totals.matches;
    correlate::Hit hit;
    hit.signature = ev.signature;
    hit.signal = ev.signal;
    hit.source = m_source;
    hit.line_no = ev.line_no;
    hit.last_line_no = ev.line_no;
    hit.ctx = m_ctx.context_for(ev.chunk, ev.line_pos, ev.line);
    for (const auto& c : *ev.captures) {
      hit.captures.emplace_back(std::string(c.name), std::string(util::clip(c.value, 256)));
    }
    const int rank = hit.ctx.rank ? hit.ctx.rank->value : -1;
    std::string gpu = hit.ctx.pci ? hit.ctx.pci->value : "";
    for (const auto& [k, v] : hit.captures) {
      if (k == "pci") {
        gpu = context::normalize_pci(v);
      }
    }
    Key key{ev.signature, ev.signal, m_source, rank, gpu};
    if (m_on_hit) {
      hit.text = std::string(util::clip(ev.line, m_options.max_line_copy));
      m_on_hit(hit);
    }
    auto& slot = m_kept[key];
    if (slot.size() >= m_options.keep_per_key) {
      auto& last = m_out.hits[slot.back()];
      last.count += 1;
      last.last_line_no = ev.line_no;
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

private:
  UnitResult& m_out;
  std::uint32_t m_source;
  context::SourceContext& m_ctx;
  const ScanOptions& m_options;
  std::map<Key, std::vector<std::size_t>> m_kept;
};

void scan_unit(source::InputOpener& opener, const source::InputUnit& unit, const matcher::Matcher& matcher,
               const ScanOptions& options, UnitResult& out, const std::function<void(const correlate::Hit&, const correlate::SourceRef&)>& live) {
  Diagnostics diags;
  opener.read(unit, diags, [&](source::SourceInfo& info, source::ByteStream& stream) {
    const auto local_id = static_cast<std::uint32_t>(out.sources.size());
    out.sources.push_back(correlate::SourceRef{info.name, info.mtime});
    ++out.totals.sources;
    source::LineReader reader(stream, info.name, options.reader);
    context::SourceContext ctx(info.name);
    Collector sink(out, local_id, ctx, options);
    std::size_t samples_left = options.error_samples;
    if (live) {
      sink.m_on_hit = [&](const correlate::Hit& h) { live(h, out.sources[local_id]); };
    }
    for (;;) {
      auto chunk = reader.next();
      if (!chunk) {
        diags.error(chunk.error());
        break;
      }
      if (!*chunk) {
        break;
      }
      matcher.scan(**chunk, sink, diags);
      if (samples_left > 0) {
        samples_left -= error_sampler().sample(**chunk, local_id, ctx, samples_left, options.max_line_copy,
                                               out.error_lines);
      }
      ctx.end_chunk((*chunk)->text);
      if (options.bytes_done != nullptr) {
        options.bytes_done->fetch_add((*chunk)->text.size(), std::memory_order_relaxed);
      }
      if (options.on_chunk) {
        options.on_chunk(out.hits, out.sources);
      }
    }
    const auto& st = reader.stats();
    out.totals.bytes += st.bytes;
    out.totals.lines += st.lines;
    out.totals.long_lines_cut += st.long_lines_cut;
    return true;
  });
  out.diags = diags.items();
  if (options.units_done != nullptr) {
    options.units_done->fetch_add(1, std::memory_order_relaxed);
  }
}

} // namespace

ScanResult run(source::InputOpener& opener, const std::vector<std::string>& paths, const matcher::Matcher& matcher,
               const ScanOptions& options, Diagnostics& diags, const HitCallback& on_hit) {
  ScanResult result;
  const auto units = opener.expand(paths, diags);
  std::vector<UnitResult> results(units.size());

  const unsigned jobs = std::max(1u, std::min<unsigned>(options.jobs, static_cast<unsigned>(units.size())));
  if (jobs <= 1 || on_hit || options.on_chunk) {
    // Streaming (grep) keeps input order by reading units one after another.
    for (std::size_t i = 0; i < units.size(); ++i) {
      scan_unit(opener, units[i], matcher, options, results[i], on_hit);
    }
  } else {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < jobs; ++t) {
      pool.emplace_back([&] {
        for (std::size_t i = next++; i < units.size(); i = next++) {
          scan_unit(opener, units[i], matcher, options, results[i], {});
        }
      });
    }
    for (auto& th : pool) {
      th.join();
    }
  }

  for (auto& r : results) {
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
    result.totals.bytes += r.totals.bytes;
    result.totals.lines += r.totals.lines;
    result.totals.sources += r.totals.sources;
    result.totals.long_lines_cut += r.totals.long_lines_cut;
    result.totals.matches += r.totals.matches;
    for (auto& d : r.diags) {
      diags.add(d.level, std::move(d.error));
    }
  }
  return result;
}

} // namespace denpex::scan
