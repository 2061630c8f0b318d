#include <denpex/catalog/condition.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace denpex::catalog {

namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The bytes of one size unit, or 0 when `u` is not one.
double unit_bytes(std::string_view u) {
  struct Unit {
    std::string_view name;
    double bytes;
  };
  static constexpr Unit k_units[] = {
      {"B", 1},           {"bytes", 1},    {"byte", 1},        {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"KB", 1e3},        {"kB", 1e3},     {"MB", 1e6},        {"GB", 1e9},           {"TB", 1e12},
  };
  for (const auto& unit : k_units) {
    if (u == unit.name) {
      return unit.bytes;
    }
  }
  return 0;
}

// A little recursive-descent reader over the text of a `when`.
class Reader {
public:
  explicit Reader(std::string_view text) : m_text(text) {}

  Expected<std::vector<Condition::Comparison>> conditions(std::vector<std::string>& names) {
    std::vector<Condition::Comparison> all;
    while (true) {
      TRY_ASSIGN(auto c, comparison(names));
      all.push_back(std::move(c));
      skip_spaces();
      if (m_at == m_text.size()) {
        return all;
      }
      if (m_text.substr(m_at, 3) != "and") {
        return fail("expected 'and' or the end");
      }
      m_at += 3;
    }
  }

private:
  tl::unexpected<Error> fail(const std::string& what) const {
    return make_error(ErrorKind::invalid, "", what + " at offset " + std::to_string(m_at) + " of '" +
                                                  std::string(m_text) + "'");
  }

  void skip_spaces() {
    while (m_at < m_text.size() && m_text[m_at] == ' ') {
      ++m_at;
    }
  }

  Expected<Condition::Comparison> comparison(std::vector<std::string>& names) {
    Condition::Comparison c;
    TRY_ASSIGN(c.left, sum(names));
    skip_spaces();
    for (std::string_view op : {">=", "<=", ">", "<"}) {
      if (m_text.substr(m_at, op.size()) == op) {
        c.op = std::string(op);
        m_at += op.size();
        break;
      }
    }
    if (c.op.empty()) {
      return fail("expected >, >=, < or <=");
    }
    TRY_ASSIGN(c.right, sum(names));
    return c;
  }

  Expected<Condition::Sum> sum(std::vector<std::string>& names) {
    Condition::Sum s;
    int sign = 1;
    while (true) {
      TRY_ASSIGN(auto t, term(names));
      s.terms.emplace_back(sign, std::move(t));
      skip_spaces();
      if (m_at < m_text.size() && (m_text[m_at] == '+' || m_text[m_at] == '-')) {
        sign = m_text[m_at] == '+' ? 1 : -1;
        ++m_at;
        continue;
      }
      return s;
    }
  }

  Expected<Condition::Term> term(std::vector<std::string>& names) {
    Condition::Term t;
    while (true) {
      skip_spaces();
      if (m_at < m_text.size() && (std::isdigit(static_cast<unsigned char>(m_text[m_at])) != 0)) {
        TRY_ASSIGN(const auto n, number());
        t.factor *= n;
      } else if (m_at < m_text.size() && is_name_char(m_text[m_at])) {
        std::size_t end = m_at;
        while (end < m_text.size() && is_name_char(m_text[end])) {
          ++end;
        }
        const std::string name(m_text.substr(m_at, end - m_at));
        if (name == "and") {
          return fail("expected a capture name or a number");
        }
        m_at = end;
        auto it = std::find(names.begin(), names.end(), name);
        if (it == names.end()) {
          names.push_back(name);
          it = names.end() - 1;
        }
        t.names.push_back(static_cast<std::size_t>(it - names.begin()));
      } else {
        return fail("expected a capture name or a number");
      }
      skip_spaces();
      if (m_at < m_text.size() && m_text[m_at] == '*') {
        ++m_at;
        continue;
      }
      return t;
    }
  }

  // "2", "0.5", "1 GiB", "512MiB".
  Expected<double> number() {
    std::size_t end = m_at;
    while (end < m_text.size() && (std::isdigit(static_cast<unsigned char>(m_text[end])) != 0 || m_text[end] == '.')) {
      ++end;
    }
    double v = std::strtod(std::string(m_text.substr(m_at, end - m_at)).c_str(), nullptr);
    m_at = end;
    std::size_t unit_end = m_at;
    while (unit_end < m_text.size() && m_text[unit_end] == ' ') {
      ++unit_end;
    }
    std::size_t u = unit_end;
    while (u < m_text.size() && std::isalpha(static_cast<unsigned char>(m_text[u])) != 0) {
      ++u;
    }
    if (const double bytes = unit_bytes(m_text.substr(unit_end, u - unit_end)); bytes > 0) {
      v *= bytes;
      m_at = u;
    }
    return v;
  }

  std::string_view m_text;
  std::size_t m_at = 0;
};

double evaluate(const Condition::Sum& s, const std::vector<double>& values) {
  double total = 0;
  for (const auto& [sign, term] : s.terms) {
    double v = term.factor;
    for (const auto i : term.names) {
      v *= values[i];
    }
    total += sign * v;
  }
  return total;
}

} // namespace

Expected<Condition> Condition::parse(std::string_view text) {
  Condition c;
  c.m_text = std::string(text);
  Reader r(text);
  TRY_ASSIGN(c.m_all, r.conditions(c.m_names));
  return c;
}

std::optional<double> Condition::value_of(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] == ' ') {
    ++i;
  }
  std::size_t end = i;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) != 0 || s[end] == '.')) {
    ++end;
  }
  if (end == i || s.substr(i, end - i).find_first_of("0123456789") == std::string_view::npos) {
    return std::nullopt;
  }
  char* stop = nullptr;
  const std::string digits(s.substr(i, end - i));
  const double v = std::strtod(digits.c_str(), &stop);
  if (stop != digits.c_str() + digits.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  std::size_t u = end;
  while (u < s.size() && s[u] == ' ') {
    ++u;
  }
  const auto unit = s.substr(u);
  if (unit.empty()) {
    return v;
  }
  const double bytes = unit_bytes(unit);
  return bytes > 0 ? std::optional<double>(v * bytes) : std::nullopt;
}

bool Condition::holds(const std::vector<std::pair<std::string_view, std::string_view>>& captures) const {
  std::vector<double> values(m_names.size());
  for (std::size_t i = 0; i < m_names.size(); ++i) {
    const auto it = std::find_if(captures.begin(), captures.end(), [&](const auto& c) { return c.first == m_names[i]; });
    if (it == captures.end()) {
      return false;
    }
    const auto v = value_of(it->second);
    if (!v) {
      return false;
    }
    values[i] = *v;
  }
  for (const auto& c : m_all) {
    const double l = evaluate(c.left, values);
    const double r = evaluate(c.right, values);
    const bool ok = c.op == ">" ? l > r : c.op == ">=" ? l >= r : c.op == "<" ? l < r : l <= r;
    if (!ok) {
      return false;
    }
  }
  return true;
}

} // namespace denpex::catalog
