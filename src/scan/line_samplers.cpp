// What the scan stage reads beside the matches (line_samplers.hpp).
#include "line_samplers.hpp"

#include <cstring>
#include <memory>

#include <re2/re2.h>
#include <re2/set.h>

#include <denpex/scan/error_lines.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::scan::detail {

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
                     std::size_t max_copy, std::vector<scan::ErrorLine>& out) const {
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
        scan::ErrorLine el;
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
              std::optional<scan::ProgressMark>& mark) const {
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
        scan::ProgressMark m;
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

} // namespace

std::size_t sample_error_lines(const source::Chunk& chunk, std::uint32_t source, context::SourceContext& ctx,
                               std::size_t budget, std::size_t max_copy, std::vector<ErrorLine>& out) {
  static const ErrorSampler k_sampler;
  return k_sampler.sample(chunk, source, ctx, budget, max_copy, out);
}

void track_progress(const source::Chunk& chunk, std::uint32_t source, context::SourceContext& ctx,
                    std::optional<ProgressMark>& mark) {
  static const ProgressTracker k_tracker;
  k_tracker.update(chunk, source, ctx, mark);
}

void RunStartTracker::update(const source::Chunk& chunk, std::uint32_t source, std::vector<scan::ProgressMark>& marks) {
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
      scan::ProgressMark m;
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

std::string RunStartTracker::preamble(std::string_view text) {
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

} // namespace denpex::scan::detail
