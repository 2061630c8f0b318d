// Timestamp formats found in training logs. Hand-written scanners, not
// regexes: this runs only for matched lines, but it must not allocate and
// must never read past the line.
#include <algorithm>
#include <denpex/context/context.hpp>

#include <array>
#include <cctype>
#include <cstring>

namespace denpex::context {

namespace {

class Cursor {
public:
  explicit Cursor(std::string_view s, std::size_t pos = 0) : m_s(s), m_pos(pos) {}
  [[nodiscard]] bool done() const { return m_pos >= m_s.size(); }
  [[nodiscard]] char peek(std::size_t k = 0) const { return m_pos + k < m_s.size() ? m_s[m_pos + k] : '\0'; }
  [[nodiscard]] std::size_t pos() const { return m_pos; }
  bool eat(char c) {
    if (peek() == c) {
      ++m_pos;
      return true;
    }
    return false;
  }
  // Exactly n digits.
  std::optional<int> digits(std::size_t n) {
    int v = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const char c = peek(i);
      if (c < '0' || c > '9') {
        return std::nullopt;
      }
      v = v * 10 + (c - '0');
    }
    m_pos += n;
    return v;
  }
  // 1..max digits.
  std::optional<std::int64_t> number(std::size_t max, std::size_t* count = nullptr) {
    std::int64_t v = 0;
    std::size_t i = 0;
    while (i < max && peek(i) >= '0' && peek(i) <= '9') {
      v = v * 10 + (peek(i) - '0');
      ++i;
    }
    if (i == 0) {
      return std::nullopt;
    }
    m_pos += i;
    if (count != nullptr) {
      *count = i;
    }
    return v;
  }
  void skip_spaces() {
    while (peek() == ' ') {
      ++m_pos;
    }
  }

private:
  std::string_view m_s;
  std::size_t m_pos;
};

constexpr std::array<std::string_view, 12> k_months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> k_days = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};

std::optional<int> month_at(std::string_view s, std::size_t pos) {
  if (pos + 3 > s.size() || std::string_view("JFMASOND").find(s[pos]) == std::string_view::npos) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < k_months.size(); ++i) {
    if (s.substr(pos, 3) == k_months[i]) {
      return static_cast<int>(i) + 1;
    }
  }
  return std::nullopt;
}

bool valid(const WallTime& t) {
  return t.month >= 1 && t.month <= 12 && t.day >= 1 && t.day <= 31 && t.hour <= 23 && t.minute <= 59 &&
         t.second <= 60 && (t.year == 0 || (t.year >= 1990 && t.year <= 2200));
}

// HH:MM:SS[.,fraction]
bool parse_clock(Cursor& c, WallTime& t) {
  auto h = c.digits(2);
  if (!h || !c.eat(':')) {
    return false;
  }
  auto m = c.digits(2);
  if (!m || !c.eat(':')) {
    return false;
  }
  auto s = c.digits(2);
  if (!s) {
    return false;
  }
  t.hour = *h;
  t.minute = *m;
  t.second = *s;
  if (c.peek() == '.' || c.peek() == ',') {
    if (c.peek(1) >= '0' && c.peek(1) <= '9') {
      c.eat(c.peek());
      std::size_t n = 0;
      auto frac = c.number(9, &n);
      std::int64_t us = *frac;
      for (std::size_t i = n; i < 6; ++i) {
        us *= 10;
      }
      for (std::size_t i = 6; i < n; ++i) {
        us /= 10;
      }
      t.micros = static_cast<int>(us);
    }
  }
  return true;
}

// A wall-clock stamp as parsed, in `format`.
Timestamp wall_timestamp(const WallTime& t, std::string_view format) {
  Timestamp ts;
  ts.kind = ClockKind::wall;
  ts.wall = t;
  ts.format = format;
  return ts;
}

// YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|+HH:MM|+HHMM]
std::optional<Timestamp> parse_iso(std::string_view s, std::size_t pos) {
  Cursor c(s, pos);
  WallTime t;
  auto y = c.digits(4);
  if (!y || !c.eat('-')) {
    return std::nullopt;
  }
  auto mo = c.digits(2);
  if (!mo || !c.eat('-')) {
    return std::nullopt;
  }
  auto d = c.digits(2);
  if (!d || !(c.eat('T') || c.eat(' ') || c.eat('_') || c.eat('-'))) {
    return std::nullopt;
  }
  t.year = *y;
  t.month = *mo;
  t.day = *d;
  if (!parse_clock(c, t)) {
    return std::nullopt;
  }
  std::string_view format = "iso8601";
  if (c.eat('Z')) {
    t.tz_minutes = 0;
  } else if (c.peek() == '+' || c.peek() == '-') {
    const int sign = c.peek() == '-' ? -1 : 1;
    Cursor save = c;
    c.eat(c.peek());
    auto hh = c.digits(2);
    if (hh) {
      c.eat(':');
      auto mm = c.digits(2);
      if (mm) {
        t.tz_minutes = sign * (*hh * 60 + *mm);
      } else {
        c = save;
      }
    } else {
      c = save;
    }
  }
  if (s.substr(pos, 1) != "[" && pos > 0 && s[pos - 1] != '[' && s.find(',', pos) == pos + 19) {
    format = "python";
  }
  if (!valid(t)) {
    return std::nullopt;
  }
  return wall_timestamp(t, format);
}

// A year-less month and day followed, at the cursor, by the time of day.
std::optional<Timestamp> wall_stamp(Cursor& c, int month, int day, std::string_view format) {
  WallTime t;
  t.month = month;
  t.day = day;
  if (!parse_clock(c, t) || !valid(t)) {
    return std::nullopt;
  }
  return wall_timestamp(t, format);
}

// glog/c10: [IWEF]MMDD HH:MM:SS.micros
std::optional<Timestamp> parse_glog(std::string_view s, std::size_t pos) {
  const char lvl = pos < s.size() ? s[pos] : '\0';
  if (lvl != 'I' && lvl != 'W' && lvl != 'E' && lvl != 'F') {
    return std::nullopt;
  }
  // c10 prints the month without zero padding: E704 is July 4th.
  Cursor c(s, pos + 1);
  std::size_t ndig = 0;
  while (ndig < 5 && c.peek(ndig) >= '0' && c.peek(ndig) <= '9') {
    ++ndig;
  }
  if (ndig != 3 && ndig != 4) {
    return std::nullopt;
  }
  auto mo = c.digits(ndig - 2);
  auto d = mo ? c.digits(2) : std::nullopt;
  if (!d || !c.eat(' ')) {
    return std::nullopt;
  }
  c.skip_spaces();
  return wall_stamp(c, *mo, *d, "glog");
}

// vLLM's logger: "INFO 12-17 23:28:01 [engine.py:135] ..." (no year): a
// month-day stamp right after a level word.
std::optional<Timestamp> parse_level_month_day(std::string_view s, std::size_t pos) {
  static constexpr std::string_view k_levels[] = {"INFO ", "WARNING ", "ERROR ", "DEBUG ", "CRITICAL ", "WARN "};
  if (pos == 0 || s[pos - 1] != ' ' || pos + 2 >= s.size() || s[pos + 2] != '-') {
    return std::nullopt; // "MM-" right after a space, or not this form
  }
  const auto before = s.substr(0, pos);
  const bool after_level = std::any_of(std::begin(k_levels), std::end(k_levels), [&](std::string_view l) {
    return before.size() >= l.size() && before.substr(before.size() - l.size()) == l;
  });
  if (!after_level) {
    return std::nullopt;
  }
  Cursor c(s, pos);
  auto mo = c.digits(2);
  auto d = mo && c.eat('-') ? c.digits(2) : std::nullopt;
  if (!d || !c.eat(' ')) {
    return std::nullopt;
  }
  return wall_stamp(c, *mo, *d, "level-month-day");
}

// syslog: Mon DD HH:MM:SS  /  dmesg -T: [Day Mon DD HH:MM:SS YYYY]
std::optional<Timestamp> parse_month_first(std::string_view s, std::size_t pos) {
  // A month or a day name: a capital, then two small letters.
  if (pos + 3 >= s.size() || s[pos + 1] < 'a' || s[pos + 1] > 'z' || s[pos + 2] < 'a' || s[pos + 2] > 'z') {
    return std::nullopt;
  }
  bool dmesg_t = false;
  std::size_t p = pos;
  if (p + 4 <= s.size()) {
    for (auto day : k_days) {
      if (s.substr(p, 3) == day && s[p + 3] == ' ') {
        dmesg_t = true;
        p += 4;
        break;
      }
    }
  }
  auto mo = month_at(s, p);
  if (!mo || p + 3 >= s.size() || s[p + 3] != ' ') {
    return std::nullopt;
  }
  Cursor c(s, p + 4);
  c.skip_spaces();
  auto d = c.number(2);
  if (!d || !c.eat(' ')) {
    return std::nullopt;
  }
  WallTime t;
  t.month = *mo;
  t.day = static_cast<int>(*d);
  if (!parse_clock(c, t)) {
    return std::nullopt;
  }
  if (c.eat(' ')) {
    if (auto y = c.digits(4)) {
      t.year = *y;
    }
  }
  if (!valid(t)) {
    return std::nullopt;
  }
  Timestamp ts;
  ts.kind = ClockKind::wall;
  ts.wall = t;
  ts.format = (dmesg_t || t.year != 0) ? "dmesg-T" : "syslog";
  return ts;
}

// [ 12345.678901] at the start of a kernel line.
std::optional<Timestamp> parse_dmesg(std::string_view s, std::size_t pos) {
  Cursor c(s, pos);
  if (!c.eat('[')) {
    return std::nullopt;
  }
  c.skip_spaces();
  auto sec = c.number(10);
  if (!sec || !c.eat('.')) {
    return std::nullopt;
  }
  std::size_t n = 0;
  auto frac = c.number(9, &n);
  if (!frac || n < 3 || !c.eat(']')) {
    return std::nullopt;
  }
  std::int64_t us = *frac;
  for (std::size_t i = n; i < 6; ++i) {
    us *= 10;
  }
  for (std::size_t i = 6; i < n; ++i) {
    us /= 10;
  }
  Timestamp ts;
  ts.kind = ClockKind::monotonic;
  ts.mono_micros = *sec * 1000000 + us;
  ts.format = "dmesg";
  return ts;
}

// 1732903199[.123] at the start of a line (2001..2100 only).
std::optional<Timestamp> parse_epoch(std::string_view s, std::size_t pos) {
  Cursor c(s, pos);
  std::size_t n = 0;
  auto sec = c.number(10, &n);
  if (!sec || n != 10 || *sec < 978307200 || *sec > 4102444800) {
    return std::nullopt;
  }
  if (c.peek() >= '0' && c.peek() <= '9') {
    return std::nullopt;
  }
  std::int64_t us = 0;
  if (c.eat('.')) {
    std::size_t fn = 0;
    if (auto frac = c.number(9, &fn)) {
      us = *frac;
      for (std::size_t i = fn; i < 6; ++i) {
        us *= 10;
      }
      for (std::size_t i = 6; i < fn; ++i) {
        us /= 10;
      }
    }
  }
  const char next = c.peek();
  if (next != ' ' && next != '\t' && next != ']' && next != ':' && next != '\0') {
    return std::nullopt;
  }
  // Convert to a calendar time in UTC.
  std::int64_t days = *sec / 86400;
  std::int64_t rem = *sec % 86400;
  // civil_from_days (Howard Hinnant)
  days += 719468;
  const std::int64_t era = days / 146097;
  const std::int64_t doe = days - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t y = yoe + era * 400;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const std::int64_t m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2 ? 1 : 0;
  Timestamp ts;
  ts.kind = ClockKind::wall;
  ts.wall = WallTime{static_cast<int>(y), static_cast<int>(m), static_cast<int>(d), static_cast<int>(rem / 3600),
                     static_cast<int>(rem / 60 % 60), static_cast<int>(rem % 60), static_cast<int>(us), 0};
  ts.format = "epoch";
  return ts;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_alnum(char c) { return is_digit(c) || is_upper(c) || (c >= 'a' && c <= 'z'); }

} // namespace

std::int64_t to_epoch_micros(const WallTime& t, int assumed_year) {
  int y = t.year != 0 ? t.year : assumed_year;
  const int m = t.month;
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + t.day - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const std::int64_t days = era * 146097 + doe - 719468;
  std::int64_t secs = days * 86400 + t.hour * 3600 + t.minute * 60 + t.second;
  if (t.tz_minutes) {
    secs -= static_cast<std::int64_t>(*t.tz_minutes) * 60;
  }
  return secs * 1000000 + t.micros;
}

std::optional<Timestamp> find_timestamp(std::string_view line) {
  // Look at the first 160 bytes: stamps live in prefixes, not deep in messages.
  const std::size_t limit = std::min<std::size_t>(line.size(), 160);
  std::optional<Timestamp> mono;
  for (std::size_t pos = 0; pos < limit; ++pos) {
    const char c = line[pos];
    // Every stamp starts with a digit, '[' or a capital, after a non-word byte.
    if (!(is_digit(c) || c == '[' || is_upper(c)) || (pos > 0 && is_alnum(line[pos - 1]))) {
      continue;
    }
    if (is_digit(c)) {
      if (auto t = parse_iso(line, pos)) {
        return t;
      }
      if (auto t = parse_level_month_day(line, pos)) {
        return t;
      }
      if (pos == 0) {
        if (auto t = parse_epoch(line, pos)) {
          return t;
        }
      }
    } else if (c == '[') {
      if (!mono) {
        if (auto t = parse_dmesg(line, pos)) {
          mono = t; // keep looking: a syslog stamp before it, or none
          continue;
        }
      }
    } else if (c == 'I' || c == 'W' || c == 'E' || c == 'F') {
      if (auto t = parse_glog(line, pos)) {
        return t;
      }
      if (auto t = parse_month_first(line, pos)) {
        return t;
      }
    } else {
      if (auto t = parse_month_first(line, pos)) {
        return t;
      }
    }
  }
  return mono;
}

std::string_view to_string(ClockKind k) {
  switch (k) {
  case ClockKind::none:
    return "none";
  case ClockKind::wall:
    return "wall";
  case ClockKind::monotonic:
    return "monotonic";
  }
  return "?";
}

std::string_view to_string(Origin o) {
  switch (o) {
  case Origin::prefix:
    return "prefix";
  case Origin::body:
    return "body";
  case Origin::capture:
    return "capture";
  case Origin::file_name:
    return "file_name";
  case Origin::neighbour:
    return "neighbour";
  case Origin::identity:
    return "identity";
  case Origin::option:
    return "option";
  case Origin::incident:
    return "incident";
  case Origin::launcher:
    return "launcher";
  }
  return "?";
}

} // namespace denpex::context
