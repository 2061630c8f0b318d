// denpex::scan — what the scan stage reads beside the matches (private):
// the error-looking lines no entry named, the last training-progress line
// and the places where a file that several runs appended to began again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/context/context.hpp>
#include <denpex/scan/hit.hpp>
#include <denpex/source/chunk.hpp>

namespace denpex::scan::detail {

// Appends up to `budget` error-looking lines of `chunk` to `out` (Python
// exceptions, ERROR/FATAL, glog E-lines, NCCL WARN, "error:"; error_lines.hpp),
// whether or not an entry matched them: the starting points of a diagnosis
// with no incident. Returns how many. Costs one set scan per chunk while the
// source's budget lasts, and nothing after.
std::size_t sample_error_lines(const source::Chunk& chunk, std::uint32_t source, context::SourceContext& ctx,
                               std::size_t budget, std::size_t max_copy, std::vector<ErrorLine>& out);

// Updates `mark` with the last training-progress line in the tail (4 KiB)
// of `chunk`: progress is known at chunk granularity for about 0.4% extra
// work. Progress is a step or iteration with a finite loss, Megatron's
// iteration counter, a tqdm bar, or Hugging Face Trainer's log dict with a
// finite loss and an epoch, and no NaN or Inf loss or gradient norm on the line.
void track_progress(const source::Chunk& chunk, std::uint32_t source, context::SourceContext& ctx,
                    std::optional<ProgressMark>& mark);

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

  void update(const source::Chunk& chunk, std::uint32_t source, std::vector<scan::ProgressMark>& marks);

private:
  // The first three lines as one block, when they can mark a start: none
  // blank or stamped (a stamp never repeats), 24 bytes or more in all, and
  // not a traceback (a file that holds only crashes begins with one, and
  // every crash repeats it).
  static std::string preamble(std::string_view text);

  std::string m_block;
};

} // namespace denpex::scan::detail
