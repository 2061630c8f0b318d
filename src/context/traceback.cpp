// The look-back above an exception line (include/denpex/context/traceback.hpp).
#include <denpex/context/context.hpp>
#include <denpex/context/traceback.hpp>
#include <denpex/util/strings.hpp>

#include <algorithm>

namespace denpex::context {

namespace {

constexpr std::string_view k_header = "Traceback (most recent call last):";
constexpr std::string_view k_during = "During handling of the above exception, another exception occurred";
constexpr std::string_view k_cause = "The above exception was the direct cause of the following exception";
constexpr std::string_view k_terminate = "terminate called after throwing an instance of '";
// What Python prints above an exception it reports and then goes on from: an
// exception in an atexit handler ("Error in atexit._run_exitfuncs:" before
// 3.12, "Exception ignored in atexit callback: <f>" since) or one it cannot
// raise ("Exception ignored in: <function X.__del__ ...>"). The process's
// exit status is not changed.
constexpr std::string_view k_ignored[] = {"Exception ignored in", "Error in atexit._run_exitfuncs:"};

bool ignored_marker(std::string_view body) {
  return std::any_of(std::begin(k_ignored), std::end(k_ignored),
                     [&](std::string_view m) { return util::starts_with(body, m); });
}
// A chained exception is at most this many lines above the link line (its
// message may run over several lines).
constexpr std::uint64_t k_chain_gap = 20;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Lines going backwards from `pos` in `chunk`, then through `tail` (the end
// of the previous chunks, which ends where `chunk` begins).
class BackLines {
public:
  BackLines(std::string_view chunk, std::size_t pos, std::string_view tail) : m_parts{tail, chunk.substr(0, pos)} {}

  // The next line up, or nullopt at the start of the text kept.
  std::optional<std::string_view> next() {
    while (m_part >= 0) {
      std::string_view text = m_parts[static_cast<std::size_t>(m_part)];
      std::size_t& end = m_end[static_cast<std::size_t>(m_part)];
      if (!m_started[static_cast<std::size_t>(m_part)]) {
        m_started[static_cast<std::size_t>(m_part)] = true;
        end = text.size();
        if (end > 0 && text[end - 1] == '\n') {
          --end; // the newline that ends the previous line
        }
        if (text.empty()) {
          --m_part;
          continue;
        }
      } else if (end == 0) {
        --m_part;
        continue;
      } else {
        --end; // the newline before the line just returned
      }
      const auto nl = end == 0 ? std::string_view::npos : text.rfind('\n', end - 1);
      const std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
      const auto line = text.substr(start, end - start);
      end = start;
      return line;
    }
    return std::nullopt;
  }

private:
  std::string_view m_parts[2];
  std::size_t m_end[2] = {0, 0};
  bool m_started[2] = {false, false};
  int m_part = 1;
};

// Who printed a line: its prefix rank, else its prefix local rank, else none.
int speaker(const Prefix& p) {
  if (p.rank) {
    return *p.rank;
  }
  if (p.local_rank) {
    return 1'000'000 + *p.local_rank;
  }
  return -1;
}

// The lines above an exception line that its own speaker printed (their
// bodies, without launcher prefixes), counting every line passed: `at` is
// the line number of the last one read.
class SpeakerWalk {
public:
  SpeakerWalk(BackLines& up, int who, std::uint64_t line_no, const char* stop_at)
      : m_up(up), m_who(who), m_at(line_no), m_stop_at(stop_at) {}

  // The next line up of the speaker; nullopt at the end of the text kept,
  // after `budget` lines, or at `stop_at` (an earlier exception line of this
  // speaker whose own walk found no header: no header lies above it).
  std::optional<std::string_view> next(std::size_t& budget) {
    if (m_replay && budget > 0) {
      m_replay = false;
      --budget;
      return m_first;
    }
    if (m_stopped) {
      return std::nullopt;
    }
    while (budget > 0) {
      --budget;
      const auto l = m_up.next();
      if (!l) {
        return std::nullopt;
      }
      if (l->data() == m_stop_at) {
        budget = 0;
        m_stopped = true;
        return std::nullopt;
      }
      --m_at;
      const auto p = launcher_prefix(*l);
      if (speaker(p) == m_who) {
        return l->substr(std::min(p.body, l->size()));
      }
      // A logger prints its prefix once, on a multi-line message's first
      // line: "[2026-01-12 10:57:43 TP3] Scheduler hit an exception:
      // Traceback ...", then frames and the exception with none. The header
      // is read whole, prefix included: it says who printed the traceback.
      if (m_who == -1 && l->find(k_header) != std::string_view::npos) {
        return *l;
      }
    }
    return std::nullopt;
  }
  // The speaker's line just above the exception line, read again by the
  // next call to next(): whether Python printed a note over the exception.
  std::optional<std::string_view> first_line() {
    if (!m_first_read) {
      m_first_read = true;
      std::size_t budget = 1;
      m_first = next(budget);
      m_replay = m_first.has_value();
    }
    return m_first;
  }
  // Past the header the stop no longer applies (it was found below it).
  void past_header() {
    m_stop_at = nullptr;
    m_stopped = false;
  }
  [[nodiscard]] std::uint64_t at() const { return m_at; }

private:
  BackLines& m_up;
  int m_who;
  std::uint64_t m_at;
  const char* m_stop_at;
  std::optional<std::string_view> m_first;
  bool m_first_read = false;
  bool m_replay = false;
  bool m_stopped = false; // reached m_stop_at
};

// The frames between an exception line and its "Traceback (most recent call
// last):" header, innermost first, each with the code line printed under it.
struct FramesRead {
  std::vector<Frame> frames;
  std::size_t count = 0;
  bool header = false;
  std::string_view header_line; // the header's line, before "Traceback ..."
};

FramesRead read_frames(SpeakerWalk& walk) {
  FramesRead r;
  std::string_view below; // the speaker's line under the one being read: a frame's code line
  std::size_t budget = TracebackReader::k_max_lines;
  while (const auto own_line = walk.next(budget)) {
    const auto body = *own_line;
    // A Ray task's remote traceback starts under "RayTaskError(T): ray::f() (pid=...)".
    if (body.find(k_header) != std::string_view::npos ||
        (body.find("ray::") != std::string_view::npos && body.find("(pid=") != std::string_view::npos)) {
      r.header = true;
      r.header_line = body.substr(0, std::min(body.find(k_header), body.size()));
      break;
    }
    if (auto f = parse_frame(body)) {
      ++r.count;
      f->code = std::string(below.substr(0, 300));
      r.frames.push_back(std::move(*f));
      below = {};
    } else if (const auto t = trim(body); t.find_first_not_of("^~ ") != std::string_view::npos) {
      below = t; // not the ^^^^ markers under a code line (Python 3.11+)
    }
  }
  return r;
}

// Above a traceback's header: a blank line, the link sentence, a blank
// line, and the previous exception of the chain (or the last line of its
// message), read as `body` at line `at`.
struct LinkAbove {
  ChainLink link;
  std::uint64_t at;
  std::string_view body;
};

// What is above a traceback's header: the link to the exception it was
// raised from, or Python's note that it printed this one and went on.
struct Above {
  std::optional<LinkAbove> link;
  bool ignored = false;
};

Above read_above_header(SpeakerWalk& walk) {
  std::optional<ChainLink> link;
  std::size_t budget = 8;
  while (const auto own_line = walk.next(budget)) {
    const auto body = trim(*own_line);
    if (body.empty()) {
      continue;
    }
    if (link) {
      return Above{LinkAbove{*link, walk.at(), body}, false};
    }
    if (body.find(k_during) != std::string_view::npos) {
      link = ChainLink::during_handling;
    } else if (body.find(k_cause) != std::string_view::npos) {
      link = ChainLink::direct_cause;
    } else {
      return Above{std::nullopt, ignored_marker(body)}; // no chain
    }
  }
  return {};
}

} // namespace

std::string_view to_string(ChainLink l) {
  return l == ChainLink::direct_cause ? "direct-cause" : "during-handling";
}

bool library_file(std::string_view file) {
  static constexpr std::string_view k_markers[] = {"site-packages/", "dist-packages/", "<frozen ", "/lib/python",
                                                   "/lib64/python", "\\Lib\\", "<string>"};
  return std::any_of(std::begin(k_markers), std::end(k_markers),
                     [&](std::string_view m) { return file.find(m) != std::string_view::npos; });
}

const Frame* Traceback::user_frame() const {
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (!library_file(it->file)) {
      return &*it;
    }
  }
  return nullptr;
}

std::optional<Frame> parse_frame(std::string_view line) {
  line = trim(line);
  if (line.substr(0, 6) != "File \"") {
    return std::nullopt;
  }
  const auto close = line.find("\", line ", 6);
  if (close == std::string_view::npos) {
    return std::nullopt;
  }
  Frame f;
  f.file = std::string(line.substr(6, close - 6));
  std::size_t i = close + 8;
  int n = 0;
  std::size_t digits = 0;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9' && digits < 9) {
    n = n * 10 + (line[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0) {
    return std::nullopt;
  }
  f.line = n;
  if (line.substr(i, 5) == ", in ") {
    f.function = std::string(trim(line.substr(i + 5)));
  }
  return f;
}

std::optional<Traceback> TracebackReader::ending_at(std::string_view chunk, std::size_t line_pos, std::uint64_t line_no) {
  const auto eol = chunk.find('\n', line_pos);
  const auto line = chunk.substr(line_pos, eol == std::string_view::npos ? std::string_view::npos : eol - line_pos);
  const auto own = launcher_prefix(line);
  const int who = speaker(own);
  Last now;
  now.line_no = line_no;
  now.text = std::string(trim(line.substr(std::min(own.body, line.size()))));

  BackLines up(chunk, line_pos, m_tail);
  SpeakerWalk walk(up, who, line_no, headerless_line(who, chunk));
  // An exception printed without a traceback right under Python's note.
  if (const auto first = walk.first_line(); first && ignored_marker(trim(*first))) {
    m_last[who] = std::move(now);
    Traceback tb;
    tb.ignored = true;
    return tb;
  }
  auto read = read_frames(walk);
  if (!read.header) {
    m_last[who] = std::move(now);
    m_no_header[who] = {chunk.data(), line_pos};
    return std::nullopt;
  }
  walk.past_header();

  Traceback tb;
  tb.frame_count = read.count;
  tb.header_line = std::string(trim(read.header_line.substr(0, 300)));
  auto& frames = read.frames;
  std::reverse(frames.begin(), frames.end());
  if (frames.size() > Traceback::k_head + Traceback::k_tail) {
    frames.erase(frames.begin() + static_cast<std::ptrdiff_t>(Traceback::k_head),
                 frames.end() - static_cast<std::ptrdiff_t>(Traceback::k_tail));
  }
  tb.frames = std::move(frames);
  const auto above = read_above_header(walk);
  tb.ignored = above.ignored;
  if (const auto& l = above.link) {
    // The previous exception of the chain: this speaker's last exception line
    // when it is just above the link, else the line read there.
    const auto it = m_last.find(who);
    if (it != m_last.end() && it->second.line_no <= l->at && l->at - it->second.line_no <= k_chain_gap) {
      tb.chain = it->second.chain;
      tb.chain.push_back(ChainedException{it->second.text, it->second.line_no, l->link});
    } else {
      tb.chain.push_back(ChainedException{std::string(l->body), l->at, l->link});
    }
  }
  now.chain = tb.chain;
  m_last[who] = std::move(now);
  return tb;
}

std::optional<std::string> TracebackReader::thrown_type(std::string_view chunk, std::size_t line_pos) const {
  const auto eol = chunk.find('\n', line_pos);
  const auto line = chunk.substr(line_pos, eol == std::string_view::npos ? std::string_view::npos : eol - line_pos);
  const int who = speaker(launcher_prefix(line));
  BackLines up(chunk, line_pos, m_tail);
  for (std::size_t n = 0; n < 6; ++n) {
    const auto l = up.next();
    if (!l) {
      break;
    }
    const auto at = l->find(k_terminate);
    if (at == std::string_view::npos || speaker(launcher_prefix(*l)) != who) {
      continue;
    }
    const auto start = at + k_terminate.size();
    const auto end = l->find('\'', start);
    if (end == std::string_view::npos || end == start) {
      return std::nullopt;
    }
    return std::string(l->substr(start, end - start));
  }
  return std::nullopt;
}

const char* TracebackReader::headerless_line(int who, std::string_view chunk) const {
  const auto it = m_no_header.find(who);
  return it != m_no_header.end() && it->second.first == chunk.data() ? chunk.data() + it->second.second : nullptr;
}

void TracebackReader::end_chunk(std::string_view chunk) {
  m_no_header.clear();
  if (chunk.size() >= k_tail_bytes) {
    m_tail.assign(chunk.substr(chunk.size() - k_tail_bytes));
  } else {
    m_tail.append(chunk);
  }
  if (m_tail.size() > k_tail_bytes) {
    m_tail.erase(0, m_tail.size() - k_tail_bytes);
  }
  // Keep whole lines only.
  if (const auto nl = m_tail.find('\n'); nl != std::string::npos && m_tail.size() >= k_tail_bytes) {
    m_tail.erase(0, nl + 1);
  }
}

} // namespace denpex::context
