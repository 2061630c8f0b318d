// denpex::context — where in the code: the traceback above an exception.
//
// A Python exception line ends a traceback printed above it:
//
//   Traceback (most recent call last):
//     File "/workspace/train.py", line 231, in <module>
//       main()
//     File "/workspace/model.py", line 88, in build
//       raise ValueError(...)
//   ValueError: Total number of attention heads (32) must be divisible by ...
//
// and may be the last of a chain ("During handling of the above exception,
// another exception occurred:", "The above exception was the direct cause of
// the following exception:"). A C++ `what():` line belongs to the
// `terminate called after throwing an instance of 'T'` line above it.
//
// Like the stamp look-back in SourceContext, this runs only for matched
// lines, looks back a bounded distance (also into the end of the previous
// chunks, so the answer does not depend on where chunks were cut), and keeps
// to the lines of the exception's own rank when launchers interleave ranks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace denpex::context {

struct Frame {
  std::string file;
  int line = 0;
  std::string function; // "" when the frame names none
  std::string code;     // the source line printed under it ("" when none was)
};

// How an exception relates to the one printed before it.
enum class ChainLink {
  during_handling, // "During handling of the above exception, another exception occurred:"
  direct_cause,    // "The above exception was the direct cause of the following exception:"
};
std::string_view to_string(ChainLink l); // "during-handling", "direct-cause"

// An earlier exception of the chain.
struct ChainedException {
  std::string text;          // the exception line, launcher prefixes removed
  std::uint64_t line_no = 0; // 1-based, in the same source
  ChainLink link = ChainLink::during_handling; // how the next exception of the chain follows it
};

struct Traceback {
  // The frames as printed (outermost first): all of them, or the first
  // k_head and the last k_tail when there are more.
  std::vector<Frame> frames;
  std::size_t frame_count = 0;          // frames printed in all
  std::vector<ChainedException> chain;  // the exceptions this one was raised from, root first
  // Python printed it and went on: an exception in an atexit handler or one
  // it could not raise ("Exception ignored in: ..."); not a failure.
  bool ignored = false;
  // What the header's line says before "Traceback (most recent call last):"
  // (a logger's "[2026-01-12 10:57:43 TP3] Scheduler hit an exception: "),
  // or empty: who printed the traceback, when its exception line does not
  // say (issue 32).
  std::string header_line;

  static constexpr std::size_t k_head = 2;
  static constexpr std::size_t k_tail = 8;

  // Where it was raised: the innermost frame.
  [[nodiscard]] const Frame* raising() const { return frames.empty() ? nullptr : &frames.back(); }
  // The innermost frame outside installed libraries and the standard library
  // (site-packages, dist-packages, lib/pythonX.Y, <frozen ...>): usually the
  // caller's own code. Null when every frame is library code.
  [[nodiscard]] const Frame* user_frame() const;
};

// Whether a frame's file is library code (site-packages, the standard library).
bool library_file(std::string_view file);

// Parses `  File "/x/y.py", line 12, in main` (after any launcher prefix).
std::optional<Frame> parse_frame(std::string_view line);

// Per-source look-back for exception lines, fed every chunk in order.
class TracebackReader {
public:
  // The traceback that ends at the exception line at `line_pos` in `chunk`
  // (line `line_no` of the source). Remembers the line, so that a later
  // exception chained to it carries the whole chain. Null when no
  // "Traceback (most recent call last):" header is found close enough above,
  // except for an exception right under Python's "Exception ignored in"
  // note: a Traceback without frames, `ignored` set.
  std::optional<Traceback> ending_at(std::string_view chunk, std::size_t line_pos, std::uint64_t line_no);

  // For a C++ `what():` line: the type named by the "terminate called after
  // throwing an instance of 'T'" line just above it (same rank), if any.
  std::optional<std::string> thrown_type(std::string_view chunk, std::size_t line_pos) const;

  // Call at the end of every chunk: keeps its last k_tail_bytes.
  void end_chunk(std::string_view chunk);

  // Look-back limits: a deep traceback (a hundred frames with their code
  // lines) fits; a recursion error's thousand frames are cut to the last ones.
  static constexpr std::size_t k_max_lines = 400;
  static constexpr std::size_t k_tail_bytes = 48 * 1024;

private:
  struct Last {
    std::uint64_t line_no = 0;
    std::string text;
    std::vector<ChainedException> chain;
  };
  std::string m_tail;                     // the end of the previous chunks, whole lines
  std::unordered_map<int, Last> m_last;   // per prefix rank (-1: none): the last exception line
  // Per prefix rank: the last exception line in this chunk (chunk, offset)
  // whose walk up found no header. A later walk that reaches it stops there:
  // a log of headerless exception lines costs one walk, not one per line.
  std::unordered_map<int, std::pair<const char*, std::size_t>> m_no_header;
  // Where in `chunk` that line of speaker `who` starts, or null.
  [[nodiscard]] const char* headerless_line(int who, std::string_view chunk) const;
};

} // namespace denpex::context
