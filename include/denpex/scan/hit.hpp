// denpex::scan — what the scan stage produces: matched lines (hits), the
// sources they were read from, error-looking lines no entry named and
// training-progress marks. Header-only plain data: the correlator reads
// these, the findings reader makes them from a merge's files, and neither
// needs the scanner itself (docs/ARCHITECTURE.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <denpex/context/context.hpp>
#include <denpex/context/traceback.hpp>

namespace denpex::scan {

// One matched line, owned (copied out of the reader's buffer).
struct Hit {
  std::uint32_t signature = 0;
  std::uint32_t signal = 0;
  std::uint32_t source = 0;
  std::uint64_t line_no = 0;
  std::string text; // clipped
  std::vector<std::pair<std::string, std::string>> captures;
  context::LineContext ctx;
  std::uint64_t count = 1;        // this hit plus the repeats folded into it
  std::uint64_t last_line_no = 0; // of the last folded repeat
  // Other ranks whose same report, printed within a few milliseconds, a
  // findings file folded into this one (docs/cluster.md): counted in `count`,
  // and reporters as much as ctx.rank. Empty for a hit read from a log.
  std::vector<int> also_ranks;
  // An exception line: the traceback printed above it (frames, chain).
  std::shared_ptr<const context::Traceback> traceback;
};

struct SourceRef {
  std::string name;
  std::optional<std::int64_t> mtime;
  // A merge (docs/cluster.md): the findings file (denpex's own JSON Lines)
  // this log's evidence was read from; empty for a log read directly.
  std::string findings;
};

// A line that looks like an error but matched no signature.
struct ErrorLine {
  std::uint32_t source = 0;
  std::uint64_t line_no = 0;
  std::string text;
  context::LineContext ctx;
};

// The last training-progress line seen in a source (a step/iteration with a
// finite loss, a tqdm bar): a cause followed by progress was recovered from.
// Or, with `relaunch`, the last line where the same file began again (a log
// appended to by several runs): a cause above it ended an earlier run.
struct ProgressMark {
  std::uint32_t source = 0;
  std::uint64_t line_no = 0;
  context::Timestamp time;
  std::string text;
  bool relaunch = false;
  // Or, with `completed`, a line where the run said it had completed (an
  // entry tagged run-completed: MLPerf's run_stop with status success):
  // failures printed after it in the same file belong to the shutdown.
  bool completed = false;
};

} // namespace denpex::scan
