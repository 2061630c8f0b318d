// Every match a Matcher reports in one chunk, as plain values, so that two
// matchers (Hyperscan in front of RE2, and RE2 alone) can be compared hit for
// hit. Used by tests/prefilter and the fuzz targets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <denpex/matcher/matcher.hpp>

namespace denpex::testing {

struct FlatMatch {
  std::uint32_t signature = 0;
  std::uint32_t signal = 0;
  std::uint64_t line_no = 0;
  std::size_t match_pos = 0;
  std::string line;
  std::vector<std::pair<std::string, std::string>> captures;

  friend bool operator==(const FlatMatch& a, const FlatMatch& b) {
    return std::tie(a.signature, a.signal, a.line_no, a.match_pos, a.line, a.captures) ==
           std::tie(b.signature, b.signal, b.line_no, b.match_pos, b.line, b.captures);
  }
  friend bool operator!=(const FlatMatch& a, const FlatMatch& b) { return !(a == b); }
};

inline std::vector<FlatMatch> match_list(const matcher::Matcher& m, std::string_view text, Diagnostics& diags) {
  struct Sink : matcher::MatchSink {
    std::vector<FlatMatch> out;
    bool matched(const matcher::MatchEvent& ev) override {
      FlatMatch f{ev.signature, ev.signal, ev.line_no, ev.match_pos, std::string(ev.line), {}};
      for (const auto& c : ev.captures()) {
        f.captures.emplace_back(std::string(c.name), std::string(c.value));
      }
      out.push_back(std::move(f));
      return true;
    }
  } sink;
  m.scan(source::Chunk{text, 1, 0}, sink, diags);
  return std::move(sink.out);
}

} // namespace denpex::testing
