// denpex::catalog — a signal's `when`: a comparison over its named captures
// that a match must also satisfy, for what a pattern cannot say ("the memory
// other processes hold is more than this process's own").
//
//   when  := cmp ("and" cmp)*
//   cmp   := sum (">" | ">=" | "<" | "<=") sum
//   sum   := term (("+" | "-") term)*
//   term  := value ("*" value)*
//   value := capture-name | number [unit]
//
// A capture's value is a number with an optional size unit ("2.00 GiB",
// "40.75 MiB", "512 B", "1.5 GB"), read as bytes, or a plain number. A
// capture that did not take part in the match, or whose value is not a
// number, makes the condition false. Parsing happens once, at load; the
// loader checks that every name is a capture of the signal's pattern.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <denpex/util/expected.hpp>

namespace denpex::catalog {

class Condition {
public:
  // Parses `text`; the error says what is wrong and where.
  static Expected<Condition> parse(std::string_view text);

  // Whether it holds for these captures (name, value); false when a name
  // it uses is missing or is not a number.
  bool holds(const std::vector<std::pair<std::string_view, std::string_view>>& captures) const;

  const std::string& text() const { return m_text; }
  // The capture names it reads, for the loader's check.
  const std::vector<std::string>& names() const { return m_names; }

  // "2.00 GiB" -> 2147483648, "7" -> 7; nullopt for anything else.
  static std::optional<double> value_of(std::string_view s);

  // The parsed form: each comparison is two sums of products.
  struct Term {
    double factor = 1;
    std::vector<std::size_t> names; // indices into m_names, multiplied
  };
  struct Sum {
    std::vector<std::pair<int, Term>> terms; // sign (+1/-1), term
  };
  struct Comparison {
    Sum left;
    std::string op;
    Sum right;
  };

private:
  std::string m_text;
  std::vector<std::string> m_names;
  std::vector<Comparison> m_all;
};

} // namespace denpex::catalog
