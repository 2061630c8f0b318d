#include <denpex/scan/scan.hpp>

#include "collector.hpp"
#include "line_samplers.hpp"

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
#include <denpex/findings/findings.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::scan {

namespace {

using detail::Collector;
using detail::RunStartTracker;
using detail::UnitResult;

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
  findings::Reader findings(catalog, name);
  NextChunk chunk = std::move(first);
  for (; chunk && *chunk; chunk = reader.next()) {
    findings.read((*chunk)->text, (*chunk)->first_line, diags);
  }
  if (!chunk) {
    diags.error(chunk.error());
  }
  // An archive's members are one unit: this file's sources follow the ones
  // its earlier members added.
  auto contents = findings.finish(diags);
  const auto base = static_cast<std::uint32_t>(out.sources.size());
  for (auto& s : contents.sources) {
    out.sources.push_back(std::move(s));
  }
  for (auto& h : contents.hits) {
    h.source += base;
    out.hits.push_back(std::move(h));
  }
  for (auto& m : contents.progress) {
    m.source += base;
    out.progress.push_back(std::move(m));
  }
  out.totals.sources += contents.totals.sources;
  out.totals.bytes += contents.totals.bytes;
  out.totals.lines += contents.totals.lines;
  out.totals.long_lines_cut += contents.totals.long_lines_cut;
  out.totals.matches += contents.totals.matches;
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
               const std::function<void(const scan::Hit&, const scan::SourceRef&)>& live,
               Diagnostics& diags) {
  opener.read(unit, diags, [&](source::SourceInfo& info, source::ByteStream& stream) {
    const auto local_id = static_cast<std::uint32_t>(out.sources.size());
    out.sources.push_back(scan::SourceRef{info.name, info.mtime});
    ++out.totals.sources;
    source::LineReader reader(stream, info.name, options.reader);
    context::SourceContext ctx(info.name, options.formats);
    Collector sink(out, local_id, ctx, options, matcher.presence_patterns());
    std::size_t samples_left = options.error_samples;
    std::optional<scan::ProgressMark> progress;
    std::vector<scan::ProgressMark> relaunches;
    RunStartTracker run_start;
    if (live) {
      sink.m_on_hit = [&](const scan::Hit& h) { live(h, out.sources[local_id]); };
    }

    // Everything after the set match, in input order.
    auto finish_chunk = [&](const source::Chunk& chunk, const matcher::Candidates& candidates) {
      ++out.matcher.chunks;
      matcher.scan_candidates(chunk, candidates, sink, &out.matcher);
      detail::track_progress(chunk, local_id, ctx, progress);
      run_start.update(chunk, local_id, relaunches);
      // With the sampler's patterns in the matcher's set, a chunk is sampled
      // only if the set saw one of them: no second pass over every byte.
      const bool may_sample = !matcher.has_extra_patterns() ||
                              (!candidates.whole.empty() &&
                                                              static_cast<std::size_t>(candidates.whole.back()) >= matcher.extra_base());
      if (samples_left > 0 && may_sample) {
        samples_left -= detail::sample_error_lines(chunk, local_id, ctx, samples_left, options.max_line_copy,
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
      if (options.findings_catalog != nullptr && findings::is_findings((*first)->text)) {
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
               const std::function<void(const scan::Hit&, const scan::SourceRef&)>& live) {
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
