// Rank, host, GPU and pid from the prefixes and bodies of log lines. See
// docs/context.md for every format and where it comes from.
#include <denpex/context/context.hpp>
#include <denpex/context/formats.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace denpex::context {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_host_char(char c) { return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_'; }

std::optional<int> read_int(std::string_view s, std::size_t& pos, std::size_t max_digits = 7) {
  std::size_t i = pos;
  long v = 0;
  while (i < s.size() && is_digit(s[i]) && i - pos < max_digits) {
    v = v * 10 + (s[i] - '0');
    ++i;
  }
  if (i == pos || (i < s.size() && is_digit(s[i]))) {
    return std::nullopt;
  }
  pos = i;
  return static_cast<int>(v);
}

bool looks_like_host(std::string_view token) {
  if (token.empty() || token.size() > 64 || (!is_alpha(token[0]) && !is_digit(token[0]))) {
    return false;
  }
  bool digit = false;
  for (char c : token) {
    if (!is_host_char(c)) {
      return false;
    }
    digit = digit || is_digit(c);
  }
  // An interpreter's name before its own message ("python3: FILE:LINE: ...
  // Assertion ... failed.", "python3.10: can't open file") is not a host.
  for (const std::string_view program : {"python", "pypy", "a.out"}) {
    if (token.substr(0, program.size()) == program) {
      return false;
    }
  }
  // Words that end a Python exception or a log level are not hosts.
  static const char* const k_words[] = {"Error", "Exception", "Warning", "Traceback", "INFO", "WARN", "ERROR"};
  for (const char* w : k_words) {
    const auto n = std::strlen(w);
    if (token.size() >= n && token.substr(token.size() - n) == w) {
      return false;
    }
  }
  return digit || token.find('-') != std::string_view::npos || token.find('.') != std::string_view::npos;
}

// mpirun --timestamp-output puts a ctime stamp right before the tag:
// "Thu Jan 23 11:55:50 2025[1,1]<stderr>:". Returns where the tag starts (0: none).
std::size_t mpirun_stamp(std::string_view line) {
  static const char* const k_weekdays[] = {"Mon ", "Tue ", "Wed ", "Thu ", "Fri ", "Sat ", "Sun "};
  for (const char* w : k_weekdays) {
    if (line.substr(0, 4) == w) {
      const auto tag = line.find("[", 4);
      if (tag != std::string_view::npos && tag <= 25 && tag + 1 < line.size() && is_digit(line[tag + 1])) {
        return tag;
      }
      break;
    }
  }
  return 0;
}

// SGLang's "[2025-02-21 22:59:28 TP0] " (also "DP0 TP3", "PP0 TP3", "TP6
// EP6"): the stamp and the parallel ranks of the process. The tensor-parallel
// rank is the process's rank when no other dimension is named, or every
// other one is 0 (the first replica): with DP1 the global rank would need
// the TP size, which the line does not say.
std::optional<std::size_t> sglang_prefix(std::string_view rest, LineContext& ctx) {
  if (rest.size() < 24 || !is_digit(rest[1]) || rest[5] != '-' || rest[11] != ' ' || rest[14] != ':') {
    return std::nullopt;
  }
  const auto close = rest.find(']');
  if (close == std::string_view::npos || close > 64) {
    return std::nullopt;
  }
  std::optional<int> tp;
  bool other_nonzero = false;
  bool any = false;
  for (std::size_t at = 20; at < close;) {
    while (at < close && rest[at] == ' ') {
      ++at;
    }
    std::size_t j = at;
    while (j < close && rest[j] >= 'A' && rest[j] <= 'Z') {
      ++j;
    }
    const auto dim = rest.substr(at, j - at);
    auto n = read_int(rest, j, 4);
    if (!n || (j < close && rest[j] != ' ') || (dim != "TP" && dim != "DP" && dim != "PP" && dim != "EP" && dim != "CP")) {
      if (at < close && !is_digit(rest[at]) && rest[at] != ':' && rest[at] != '.') {
        return std::nullopt; // not a parallel-rank tag: some other bracketed stamp
      }
      at = rest.find(' ', at);
      at = at == std::string_view::npos || at > close ? close : at;
      continue;
    }
    any = true;
    if (dim == "TP") {
      tp = *n;
    } else if (dim != "EP" && *n != 0) {
      other_nonzero = true; // EP ranks follow the TP ranks; DP/PP/CP replicas do not
    }
    at = j;
  }
  if (!any) {
    return std::nullopt;
  }
  if (tp && !other_nonzero) {
    ctx.rank = Field<int>{*tp, Origin::prefix};
  }
  return close + 1;
}

// A bracketed tag: [rank3]: / [default3]: / [1,3]<stderr>: / Horovod's
// [3]<stderr>: / Lightning's "[rank: 3] " / a bare "[80746] " / [stderr].
// Returns the bytes it takes, or nullopt.
std::optional<std::size_t> bracket_prefix(std::string_view rest, LineContext& ctx) {
  std::size_t i = 1;
  while (i < rest.size() && is_alpha(rest[i])) {
    ++i;
  }
  const std::string_view word = rest.substr(1, i - 1);
  if (i > 1 && i < rest.size() && is_digit(rest[i])) {
    std::size_t j = i;
    auto n = read_int(rest, j);
    if (n && j + 1 < rest.size() && rest[j] == ']' && rest[j + 1] == ':') {
      (word == "rank" ? ctx.rank : ctx.local_rank) = Field<int>{*n, Origin::prefix};
      return j + 2;
    }
  }
  // Lightning's rank_prefixed_message: "[rank: 1] Global seed set to 1".
  if (word == "rank" && rest.substr(i, 2) == ": ") {
    std::size_t j = i + 2;
    auto n = read_int(rest, j);
    if (n && j + 1 < rest.size() && rest[j] == ']' && rest[j + 1] == ' ') {
      ctx.rank = Field<int>{*n, Origin::prefix};
      return j + 2;
    }
  }
  if (i == 1 && i < rest.size() && is_digit(rest[1])) {
    std::size_t j = 1;
    auto job = read_int(rest, j);
    if (job && j < rest.size() && rest[j] == ',') {
      ++j;
      auto r = read_int(rest, j);
      if (r && j < rest.size() && rest[j] == ']') {
        const auto close = rest.find(">:", j);
        if (rest.substr(j + 1, 1) == "<" && close != std::string_view::npos && close < j + 12) {
          ctx.rank = Field<int>{*r, Origin::prefix};
          return close + 2;
        }
      }
    }
    // horovodrun's Gloo tag: "[3]<stderr>:" (the global rank).
    if (job && (rest.substr(j, 10) == "]<stderr>:" || rest.substr(j, 10) == "]<stdout>:")) {
      ctx.rank = Field<int>{*job, Origin::prefix};
      return j + 10;
    }
    if (auto taken = sglang_prefix(rest, ctx)) {
      return taken;
    }
    // A bare numeric tag ("[80746] ", a pasted line number): no meaning, skip it.
    j = 1;
    if (read_int(rest, j, 9) && j + 1 < rest.size() && rest[j] == ']' && rest[j + 1] == ' ' &&
        rest.find(':', 1) != j - 1) {
      return j + 2;
    }
  }
  if (rest.substr(0, 8) == "[stderr]" || rest.substr(0, 8) == "[stdout]") {
    return 8;
  }
  return std::nullopt;
}

// vLLM V1's worker names: "Worker_TP3", "Worker_PP0_TP3", "Worker_PP1",
// "Worker_PP1_TP0" (multiproc_executor). The rank is the TP index when
// every other index is 0, the PP index when there is no TP; with a later
// pipeline stage and a TP index the global rank needs the TP size, which the
// name does not say.
std::optional<int> vllm_worker_rank(std::string_view name) {
  if (name.substr(0, 7) != "Worker_") {
    return std::nullopt;
  }
  std::optional<int> tp;
  std::optional<int> pp;
  bool other_nonzero = false;
  for (std::size_t at = 7; at < name.size();) {
    std::size_t j = at;
    while (j < name.size() && name[j] >= 'A' && name[j] <= 'Z') {
      ++j;
    }
    const auto dim = name.substr(at, j - at);
    const auto n = read_int(name, j, 4);
    if (!n || (j < name.size() && name[j] != '_')) {
      return std::nullopt;
    }
    if (dim == "TP") {
      tp = *n;
    } else if (dim == "PP") {
      pp = *n;
    } else if (*n != 0) {
      other_nonzero = true; // DP / EP replicas
    }
    at = j + 1;
  }
  if (other_nonzero) {
    return std::nullopt;
  }
  if (tp && (!pp || *pp == 0)) {
    return tp;
  }
  if (pp && !tp) {
    return pp;
  }
  return std::nullopt;
}

// Ray: "(RayWorkerVllm pid=7046) ", "(RayWorkerWrapper pid=92234, ip=...)";
// vLLM's multiprocessing workers: "(VllmWorker rank=3 pid=1090) " (the
// worker's rank in the engine: its global rank), "(Worker_TP0 pid=160) ",
// "(Worker_PP1_TP4, pid=44045) " and, without a pid, "(Worker_PP1_TP0) ".
std::optional<std::size_t> ray_prefix(std::string_view rest, LineContext& ctx) {
  const auto close = rest.find(") ");
  const auto pid_at = rest.find("pid=");
  const bool vllm_worker = rest.substr(1, 7) == "Worker_";
  if (close == std::string_view::npos || close >= 80 ||
      ((pid_at == std::string_view::npos || pid_at >= close) && !vllm_worker)) {
    return std::nullopt;
  }
  if (vllm_worker) {
    const auto name_end = rest.find_first_of(" ,)", 1);
    if (auto r = vllm_worker_rank(rest.substr(1, name_end - 1))) {
      ctx.rank = Field<int>{*r, Origin::prefix};
    }
  }
  if (pid_at == std::string_view::npos || pid_at >= close) {
    return close + 2;
  }
  std::size_t j = pid_at + 4;
  if (auto p = read_int(rest, j, 9)) {
    ctx.pid = Field<std::int64_t>{*p, Origin::prefix};
  }
  auto rank_at = rest.find(" rank=");
  rank_at = rank_at == std::string_view::npos ? rest.find("[rank=") : rank_at; // "(MegatronPolicyWorker[rank=9] pid=..)"
  if (rank_at != std::string_view::npos && rank_at < close) {
    std::size_t k = rank_at + 6;
    if (auto r = read_int(rest, k, 6); r && (rest[k] == ' ' || rest[k] == ')' || rest[k] == ',' || rest[k] == ']')) {
      ctx.rank = Field<int>{*r, Origin::prefix};
    }
  }
  return close + 2;
}

// srun -l: "3: ".
std::optional<std::size_t> srun_prefix(std::string_view rest, LineContext& ctx) {
  std::size_t j = 0;
  auto r = read_int(rest, j, 6);
  if (r && j + 1 < rest.size() && rest[j] == ':' && rest[j + 1] == ' ' && !ctx.rank) {
    ctx.rank = Field<int>{*r, Origin::prefix};
    return j + 2;
  }
  return std::nullopt;
}

// pdsh/DeepSpeed "host: " or "host [stderr] ". NCCL's "host:pid:tid" has no
// space after the colon, so it is not taken here.
std::optional<std::size_t> host_prefix(std::string_view rest, LineContext& ctx) {
  std::size_t j = 0;
  while (j < rest.size() && is_host_char(rest[j])) {
    ++j;
  }
  const std::string_view token = rest.substr(0, j);
  if (j == 0 || !looks_like_host(token)) {
    return std::nullopt;
  }
  if (rest.substr(j, 2) == ": ") {
    ctx.host = Field<std::string>{std::string(token), Origin::prefix};
    return j + 2;
  }
  if (rest.substr(j, 10) == " [stderr] " || rest.substr(j, 10) == " [stdout] ") {
    ctx.host = Field<std::string>{std::string(token), Origin::prefix};
    return j + 10;
  }
  return std::nullopt;
}

// Strips the launcher prefixes stacked at the start of `line`, recording what
// they say. Returns the position after the last one (and the spaces after it).
std::size_t strip_prefixes(std::string_view line, LineContext& ctx) {
  std::size_t pos = mpirun_stamp(line);
  bool srun_rank = false; // the rank came from srun -l's task number
  for (int round = 0; round < 6 && pos < line.size(); ++round) {
    while (pos < line.size() && line[pos] == ' ') {
      ++pos;
    }
    const std::string_view rest = line.substr(pos);
    if (rest.empty()) {
      break;
    }
    std::optional<std::size_t> taken;
    if (rest[0] == '[') {
      taken = bracket_prefix(rest, ctx);
    } else if (rest[0] == '(') {
      taken = ray_prefix(rest, ctx);
    } else {
      const bool had_rank = ctx.rank.has_value();
      taken = is_digit(rest[0]) ? srun_prefix(rest, ctx) : std::nullopt;
      srun_rank = srun_rank || (taken && !had_rank && ctx.rank);
      if (!taken) {
        taken = host_prefix(rest, ctx);
      }
    }
    if (!taken) {
      break;
    }
    pos += *taken;
  }
  // "0: [default3]: ...": srun runs one torchrun per node, so its task
  // number is the node's index, not a rank (issue 32).
  if (srun_rank && ctx.local_rank && ctx.rank && ctx.rank->origin == Origin::prefix) {
    bool rank_from_bracket = false;
    for (std::size_t at = line.find("[rank"); at != std::string_view::npos && at < pos; at = line.find("[rank", at + 1)) {
      rank_from_bracket = true;
    }
    if (!rank_from_bracket) {
      ctx.rank.reset();
    }
  }
  return pos;
}

// line.find(token, from), searching for token.substr(k), which starts at a
// rarer byte ("Ranks " in " nRanks ", "NCCL " in " NCCL "), and checking the
// k bytes before it.
std::size_t find_by(std::string_view line, std::string_view token, std::size_t k, std::size_t from = 0) {
  const std::string_view rest = token.substr(k);
  for (auto at = line.find(rest, from + k); at != std::string_view::npos; at = line.find(rest, at + 1)) {
    if (line.substr(at - k, k) == token.substr(0, k)) {
      return at - k;
    }
  }
  return std::string_view::npos;
}

// NCCL's prefix "host:pid:tid [dev] NCCL" (possibly after a timestamp), and
// NCCL 2.4's "host:pid:tid [dev] include/socket.h:360 WARN" without the word
// NCCL, whose host must then hold a letter ("12:30:45 [0]" is a time). The
// token's shape is checked first: most lines have no such token, and then
// the words are not looked for.
void nccl_prefix(std::string_view line, std::size_t from, LineContext& ctx) {
  const auto bracket = find_by(line, " [", 1, from);
  if (bracket == std::string_view::npos || bracket >= 128) {
    return;
  }
  std::size_t tok_start = bracket;
  while (tok_start > from && line[tok_start - 1] != ' ') {
    --tok_start;
  }
  const std::string_view tok = line.substr(tok_start, bracket - tok_start);
  const auto c2 = tok.rfind(':');
  const auto c1 = c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : tok.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos || c1 == 0) {
    return;
  }
  std::size_t p = c1 + 1;
  const auto pid = read_int(tok, p, 9);
  std::size_t q = c2 + 1;
  const auto tid = read_int(tok, q, 9);
  if (!pid || !tid || p != c2 || q != tok.size()) {
    return;
  }
  const bool nccl_word =
      find_by(line, " NCCL ", 1, from) != std::string_view::npos || line.find("] NCCL") != std::string_view::npos;
  const bool legacy = !nccl_word && (find_by(line, " WARN ", 1, from) != std::string_view::npos ||
                                     find_by(line, " INFO ", 1, from) != std::string_view::npos);
  const std::string_view host = tok.substr(0, c1);
  if (!(nccl_word || legacy) || (legacy && std::none_of(host.begin(), host.end(), is_alpha))) {
    return;
  }
  // NCCL's token is followed by its device, "[3]"; a time "00:29:48" before
  // a logger's "[multiproc_executor.py:863]" is not a host (issue 32).
  std::size_t dev_end = bracket + 2;
  if (!read_int(line, dev_end, 3) || dev_end >= line.size() || line[dev_end] != ']' ||
      std::all_of(host.begin(), host.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return;
  }
  if (!host.empty() && !ctx.host) {
    ctx.host = Field<std::string>{std::string(host), Origin::body};
  }
  if (!ctx.pid) {
    ctx.pid = Field<std::int64_t>{*pid, Origin::body};
  }
  std::size_t d = bracket + 2;
  if (auto dev = read_int(line, d, 3); dev && d < line.size() && line[d] == ']') {
    ctx.gpu = Field<int>{*dev, Origin::body};
  }
}

// Whether the "Rank N" at `at` is inside c10d's prefix of a process group
// other than the default one ("[PG ID 3 PG GUID 3(TENSOR_MODEL_PARALLEL_GROUP)
// Rank 1]", "[PG 2 Rank 1]"): N is then the rank within that group, not a
// global rank (issue 32).
bool in_subgroup(std::string_view line, std::size_t at) {
  const auto open = line.rfind('[', at);
  if (open == std::string_view::npos || at - open > 96) {
    return false;
  }
  const auto tag = line.substr(open, at - open);
  const auto pg = tag.find("PG ");
  if (pg == std::string_view::npos) {
    return false;
  }
  std::size_t j = pg + 3;
  if (tag.substr(j, 3) == "ID ") {
    j += 3;
  }
  const auto id = read_int(tag, j);
  return id && *id != 0 && tag.find("default_pg") == std::string_view::npos;
}

// Finds "Rank N" inside c10d messages: [Rank 3], [PG ID 1 PG GUID 1 Rank 3],
// [PG 0 Rank 3], "rank 3 nRanks 16", "global rank 3".
void scan_body(std::string_view line, std::size_t from, LineContext& ctx) {
  for (std::size_t at = line.find("Rank ", from); at != std::string_view::npos; at = line.find("Rank ", at + 5)) {
    // Accept "[Rank 3]" and "... Rank 3]" (PG forms) but not "nRanks".
    if (at > 0 && is_alpha(line[at - 1])) {
      continue;
    }
    std::size_t j = at + 5;
    auto r = read_int(line, j);
    if (r && j < line.size() && (line[j] == ']' || line[j] == ':' || line[j] == ' ' || line[j] == ',')) {
      if ((!ctx.rank || ctx.rank->origin != Origin::prefix) && !in_subgroup(line, at)) {
        ctx.rank = Field<int>{*r, Origin::body};
      }
      break;
    }
  }
  // NCCL: "comm 0x... rank 3 nRanks 16"
  auto nranks_at = find_by(line, " nRanks ", 2);
  if (nranks_at == std::string_view::npos) {
    nranks_at = find_by(line, " nranks ", 5); // "ks "
  }
  if (auto at = nranks_at; at != std::string_view::npos) {
    std::size_t j = at + 8;
    if (auto n = read_int(line, j)) {
      ctx.nranks = Field<int>{*n, Origin::body};
    }
    const auto r_at = line.rfind(" rank ", at);
    if (r_at != std::string_view::npos && r_at + 6 <= at) {
      std::size_t k = r_at + 6;
      if (auto r = read_int(line, k); r && k == at && !ctx.rank) {
        ctx.rank = Field<int>{*r, Origin::body};
      }
    }
  }
  nccl_prefix(line, from, ctx);
  // NVRM: "PCI:0000:3b:00" / "NVRM: GPU 0000:3b:00.0:" / "NVRM: The NVIDIA GPU 0000:b3:00.0"
  if (auto at = line.find("PCI:"); at != std::string_view::npos) {
    auto pci = normalize_pci(line.substr(at + 4, 16));
    if (!pci.empty()) {
      ctx.pci = Field<std::string>{std::move(pci), Origin::body};
    }
  } else if (auto nv = line.find("NVRM: "); nv != std::string_view::npos) {
    const auto gpu = line.find("GPU ", nv);
    if (gpu != std::string_view::npos) {
      auto pci = normalize_pci(line.substr(gpu + 4, 16));
      if (!pci.empty()) {
        ctx.pci = Field<std::string>{std::move(pci), Origin::body};
      }
    }
  }
}

// Syslog / journal: "Nov 29 17:59:59 host proc[pid]:" or ISO "... host kernel:".
void syslog_host(std::string_view line, LineContext& ctx) {
  if (ctx.host || ctx.time.kind != ClockKind::wall) {
    return;
  }
  if (ctx.time.format != "syslog" && ctx.time.format != "iso8601") {
    return;
  }
  // The token after the stamp, followed by a "proc:" or "proc[pid]:" token.
  std::size_t pos = 0;
  // skip the stamp: first 3 tokens for syslog, 1 for ISO
  int skip = ctx.time.format == "syslog" ? 3 : 1;
  while (skip > 0 && pos < line.size()) {
    while (pos < line.size() && line[pos] == ' ') {
      ++pos;
    }
    while (pos < line.size() && line[pos] != ' ') {
      ++pos;
    }
    --skip;
  }
  while (pos < line.size() && line[pos] == ' ') {
    ++pos;
  }
  std::size_t end = pos;
  while (end < line.size() && is_host_char(line[end])) {
    ++end;
  }
  if (end == pos || end >= line.size() || line[end] != ' ') {
    return;
  }
  std::size_t p2 = end + 1;
  std::size_t e2 = p2;
  while (e2 < line.size() && line[e2] != ' ' && line[e2] != ':') {
    ++e2;
  }
  if (e2 < line.size() && line[e2] == ':' && e2 > p2) {
    ctx.host = Field<std::string>{std::string(line.substr(pos, end - pos)), Origin::prefix};
  }
}

} // namespace

std::string normalize_pci(std::string_view s) {
  // [domain:]bus:device[.function]
  std::size_t i = 0;
  auto hex_run = [&](std::size_t max) {
    std::size_t start = i;
    while (i < s.size() && i - start < max && std::isxdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
    }
    return s.substr(start, i - start);
  };
  auto a = hex_run(8);
  if (a.empty() || i >= s.size() || s[i] != ':') {
    return {};
  }
  ++i;
  auto b = hex_run(2);
  if (b.size() != 2) {
    return {};
  }
  std::string_view domain = "0000";
  std::string_view bus;
  std::string_view dev;
  if (i < s.size() && s[i] == ':') {
    ++i;
    auto c = hex_run(2);
    if (c.size() != 2) {
      return {};
    }
    domain = a.size() > 4 ? a.substr(a.size() - 4) : a;
    bus = b;
    dev = c;
  } else {
    if (a.size() != 2) {
      return {};
    }
    bus = a;
    dev = b;
  }
  std::string out;
  for (std::size_t k = domain.size(); k < 4; ++k) {
    out += '0';
  }
  out += domain;
  out += ':';
  out += bus;
  out += ':';
  out += dev;
  for (auto& ch : out) {
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return out;
}

Prefix launcher_prefix(std::string_view line) {
  LineContext ctx;
  Prefix p;
  p.body = strip_prefixes(line, ctx);
  if (ctx.rank && ctx.rank->origin == Origin::prefix) {
    p.rank = ctx.rank->value;
  }
  if (ctx.local_rank && ctx.local_rank->origin == Origin::prefix) {
    p.local_rank = ctx.local_rank->value;
  }
  return p;
}

bool logged_below_error(std::string_view prefix) {
  for (const std::string_view word : {"WARNING", "WARN", "INFO", "DEBUG"}) {
    for (auto at = prefix.find(word); at != std::string_view::npos; at = prefix.find(word, at + 1)) {
      const std::size_t end = at + word.size();
      const bool starts = at == 0 || !is_alpha(prefix[at - 1]);
      const bool ends = end == prefix.size() || !is_alpha(prefix[end]);
      if (starts && ends) {
        return true;
      }
    }
  }
  // glog: "W1201 06:22:31.450123 ..." at the start of the message.
  const auto body = prefix.substr(launcher_prefix(prefix).body);
  return body.size() >= 6 && (body[0] == 'W' || body[0] == 'I') && is_digit(body[1]) && is_digit(body[2]) &&
         is_digit(body[3]) && is_digit(body[4]) && body[5] == ' ';
}

LineContext parse_line(std::string_view line) {
  LineContext ctx;
  const std::size_t body = strip_prefixes(line, ctx);
  if (auto t = find_timestamp(line)) {
    ctx.time = *t;
  }
  scan_body(line, body, ctx);
  syslog_host(line, ctx);
  // torchelastic's Root Cause block: "  rank      : 3 (local_rank: 3)"
  if (auto at = find_by(line, "local_rank: ", 5); at != std::string_view::npos) {
    std::size_t j = at + 12;
    if (auto lr = read_int(line, j)) {
      ctx.local_rank = Field<int>{*lr, Origin::body};
    }
  }
  return ctx;
}

PathContext parse_path(std::string_view path) {
  PathContext pc;
  // Components split on '/' and ':' (archive members).
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find_first_of("/:", start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    std::string_view comp = path.substr(start, end - start);
    // Drop extensions (.log, .txt, .gz, .tar).
    while (true) {
      const auto dot = comp.rfind('.');
      if (dot == std::string_view::npos || dot == 0) {
        break;
      }
      const auto ext = comp.substr(dot + 1);
      if (ext == "log" || ext == "txt" || ext == "gz" || ext == "tar" || ext == "tgz" || ext == "zst" ||
          ext == "xz" || ext == "bz2" || ext == "zip" || ext == "out" || ext == "err" || ext == "json" ||
          ext == "jsonl") {
        comp = comp.substr(0, dot);
      } else {
        break;
      }
    }
    // rank_3, rank-3, rank3, rank.3
    for (std::size_t at = comp.find("rank"); at != std::string_view::npos; at = comp.find("rank", at + 4)) {
      if (at > 0 && is_alpha(comp[at - 1])) {
        continue;
      }
      std::size_t j = at + 4;
      if (j < comp.size() && (comp[j] == '_' || comp[j] == '-' || comp[j] == '.')) {
        ++j;
      }
      if (auto r = read_int(comp, j)) {
        pc.rank = *r;
      }
    }
    // node-017, gpu-node-3, worker-12, ip-10-0-0-1, nid001234
    if (!comp.empty() && comp.find("rank") == std::string_view::npos) {
      static const char* const k_hostish[] = {"node", "host", "gpu", "worker", "compute", "nid", "ip-", "dgx", "hgx"};
      const std::string lower = [&] {
        std::string s(comp);
        for (auto& c : s) {
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        return s;
      }();
      bool hostish = false;
      for (const char* h : k_hostish) {
        if (lower.find(h) != std::string::npos) {
          hostish = true;
        }
      }
      if (hostish && is_digit(comp.back()) && looks_like_host(comp)) {
        pc.host = std::string(comp);
      }
    }
    start = end + 1;
  }
  return pc;
}

namespace {

// torchelastic's Root Cause / Failures block ties a rank to the fields below it:
//   [0]:
//     time      : 2024-11-29_18:10:03
//     host      : node-017
//     rank      : 3 (local_rank: 3)
//     exitcode  : -6 (pid: 2339)
// A field line without its own rank takes the block's (a few lines up).
void rank_from_block(std::string_view chunk, std::size_t line_pos, std::string_view line, LineContext& ctx) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') {
    ++i;
  }
  const std::string_view field = line.substr(i);
  static const char* const k_fields[] = {"exitcode", "error_file", "traceback", "time", "host"};
  bool in_block = false;
  for (const char* f : k_fields) {
    const auto n = std::strlen(f);
    if (field.substr(0, n) == f && field.find(':') != std::string_view::npos && field.find(':') < 14) {
      in_block = i > 0;
    }
  }
  if (!in_block) {
    return;
  }
  // Look at up to 4 lines before and 4 after, within the chunk.
  auto field_rank = [&](std::string_view l) -> std::optional<int> {
    std::size_t k = 0;
    while (k < l.size() && l[k] == ' ') {
      ++k;
    }
    if (k == 0 || l.substr(k, 4) != "rank") {
      return std::nullopt;
    }
    k += 4;
    while (k < l.size() && l[k] == ' ') {
      ++k;
    }
    if (k >= l.size() || l[k] != ':') {
      return std::nullopt;
    }
    ++k;
    while (k < l.size() && l[k] == ' ') {
      ++k;
    }
    return read_int(l, k);
  };
  std::size_t start = line_pos;
  for (int n = 0; n < 4 && start > 0; ++n) {
    const auto nl = start >= 2 ? chunk.rfind('\n', start - 2) : std::string_view::npos;
    const std::size_t s = nl == std::string_view::npos ? 0 : nl + 1;
    if (auto r = field_rank(chunk.substr(s, start - 1 - s))) {
      ctx.rank = Field<int>{*r, Origin::neighbour};
      return;
    }
    start = s;
  }
  std::size_t pos = line_pos + line.size() + 1;
  for (int n = 0; n < 4 && pos < chunk.size(); ++n) {
    auto nl = chunk.find('\n', pos);
    if (nl == std::string_view::npos) {
      nl = chunk.size();
    }
    if (auto r = field_rank(chunk.substr(pos, nl - pos))) {
      ctx.rank = Field<int>{*r, Origin::neighbour};
      return;
    }
    pos = nl + 1;
  }
}

} // namespace

namespace {

// The last torchrun prefix ("[rank3]:" / "[default3]:") before a message that
// does not start the line: another rank's output was interleaved in front.
// Returns where that prefix starts, or npos.
std::size_t rank_from_interleaved_prefix(std::string_view before, LineContext& ctx) {
  for (std::size_t at = before.rfind('['); at != std::string_view::npos && at > 0;
       at = at == 0 ? std::string_view::npos : before.rfind('[', at - 1)) {
    std::size_t i = at + 1;
    while (i < before.size() && is_alpha(before[i])) {
      ++i;
    }
    const std::string_view word = before.substr(at + 1, i - at - 1);
    if (word != "rank" && word != "default") {
      continue;
    }
    std::size_t j = i;
    auto n = read_int(before, j);
    if (n && j + 1 < before.size() && before[j] == ']' && before[j + 1] == ':') {
      if (word == "rank") {
        ctx.rank = Field<int>{*n, Origin::prefix};
      } else {
        ctx.local_rank = Field<int>{*n, Origin::prefix};
      }
      return at;
    }
  }
  return std::string_view::npos;
}

} // namespace

SourceContext::SourceContext(std::string_view source_name, const FormatSet* formats)
    : m_path(parse_path(source_name)), m_formats(formats) {}

LineContext SourceContext::context_for(std::string_view chunk, std::size_t line_pos, std::string_view line,
                                       std::size_t match_pos) {
  LineContext ctx = parse_line(line);
  if (m_formats != nullptr && m_formats->has_data_formats()) {
    m_formats->apply(line, ctx);
  }
  if (match_pos > 0) {
    const auto at = rank_from_interleaved_prefix(line.substr(0, std::min(match_pos, line.size())), ctx);
    if (at != std::string_view::npos) {
      if (auto t = find_timestamp(line.substr(at))) {
        ctx.time = *t; // the interleaved message's own stamp, not the line's first
      }
    }
  }
  if (ctx.time.kind == ClockKind::none) {
    if (auto t = stamp_above(chunk, line_pos)) {
      ctx.time = *t;
      ctx.time.origin = Origin::neighbour;
    }
  }
  if (!ctx.rank) {
    rank_from_block(chunk, line_pos, line, ctx);
  }
  if (!ctx.rank && m_path.rank) {
    ctx.rank = Field<int>{*m_path.rank, Origin::file_name};
  }
  if (!ctx.host && !m_path.host.empty()) {
    ctx.host = Field<std::string>{m_path.host, Origin::file_name};
  }
  if (ctx.host && ctx.host->origin != Origin::file_name) {
    m_last_host = ctx.host->value;
  }
  return ctx;
}

// The nearest earlier stamp within k_stamp_lookback lines, through the chunk
// and on into the previous chunks' tails: the same stamp whatever the chunk
// size. Where the walk reaches the line the last walk was for, the rest of
// it is that walk's, k lines further down.
std::optional<Timestamp> SourceContext::stamp_above(std::string_view chunk, std::size_t line_pos) {
  std::optional<Timestamp> found;
  std::size_t end = line_pos;
  std::size_t k = 0;
  for (; k < k_stamp_lookback && end > 0; ++k) {
    if (m_walk.chunk == chunk.data() && end == m_walk.line_pos) {
      if (m_walk.stamp) {
        if (k + m_walk.lines <= k_stamp_lookback) {
          found = m_walk.stamp;
          k += m_walk.lines;
        } else {
          k = k_stamp_lookback;
        }
      } else if (m_walk.to_start && k + m_walk.lines < k_stamp_lookback) {
        k += m_walk.lines;
        end = 0;
      } else {
        k = k_stamp_lookback;
      }
      break;
    }
    const auto prev_end = end - 1; // the '\n' before the current line
    const auto nl = prev_end == 0 ? std::string_view::npos : chunk.rfind('\n', prev_end - 1);
    const std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    if (auto t = find_timestamp(chunk.substr(start, prev_end - start))) {
      found = *t;
      ++k;
      break;
    }
    end = start;
  }
  m_walk = Walk{chunk.data(), line_pos, found, k, !found && end == 0};
  if (found) {
    return found;
  }
  if (end == 0 && m_last_stamp && k + m_last_stamp_distance < k_stamp_lookback) {
    return m_last_stamp;
  }
  return std::nullopt;
}

void SourceContext::end_chunk(std::string_view chunk) {
  m_walk.chunk = nullptr;
  std::size_t end = chunk.size();
  if (end > 0 && chunk[end - 1] == '\n') {
    --end;
  }
  std::size_t k = 0;
  for (; k < k_stamp_lookback && end > 0; ++k) {
    const auto nl = chunk.rfind('\n', end - 1);
    const std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    if (auto t = find_timestamp(chunk.substr(start, end - start))) {
      m_last_stamp = *t;
      m_last_stamp_distance = k;
      return;
    }
    if (start == 0) {
      ++k;
      break;
    }
    end = start - 1;
  }
  // No stamp in this chunk's tail: an earlier one is that many lines further back.
  m_last_stamp_distance += k;
  if (m_last_stamp_distance >= k_stamp_lookback) {
    m_last_stamp.reset();
  }
}

} // namespace denpex::context
