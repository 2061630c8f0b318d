// The matcher's private view of the prefilter (include/denpex/matcher/
// prefilter.hpp has the public part). Only matcher.cpp uses this.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/matcher/matcher.hpp>

namespace denpex::matcher::detail {

class Prefilter {
public:
  // One translated expression per matcher pattern (nullopt: RE2 only).
  // Expressions found in `blob` use its prebuilt database; the others are
  // compiled now. Indexes of patterns Hyperscan cannot take are appended to
  // `unfiltered`. Returns nullptr when Hyperscan is not available at all
  // (then every pattern is in `unfiltered`).
  static std::unique_ptr<Prefilter> build(const std::vector<std::optional<std::string>>& expressions,
                                          std::string_view blob, std::vector<std::uint32_t>& unfiltered);

  ~Prefilter();
  Prefilter(const Prefilter&) = delete;
  Prefilter& operator=(const Prefilter&) = delete;

  // Where patterns may match in `text`, from Hyperscan's match end offsets:
  // appends (line, pattern) for each line on which a pattern may match, in
  // no particular order and possibly twice. A pattern reported on more than
  // `max_lines` lines goes to `whole` instead (once; its lines are dropped):
  // searching the chunk once is then cheaper than line after line. False if
  // Hyperscan failed (then the output is unusable). Thread-safe.
  using Line = Candidates::Line;
  // `presence` false: the databases of presence signals alone are skipped
  // (the source has found them all).
  bool scan(std::string_view text, std::size_t max_lines, std::vector<Line>& lines, std::vector<int>& whole,
            bool presence = true) const;

  // "hyperscan 5.4.0: 517 patterns (517 prebuilt, 0 compiled at start-up)".
  [[nodiscard]] std::string describe() const;

  struct Database; // one Hyperscan database and its id -> pattern map
  struct Scratch;  // Hyperscan scratch space, sized for every database here

private:
  Prefilter();
  std::unique_ptr<Scratch> take_scratch() const;
  void give_back(std::unique_ptr<Scratch> s) const;

  std::vector<std::unique_ptr<Database>> m_dbs;
  // Scratch is per scan in progress: a pool, so that threads created per
  // batch reuse it instead of allocating their own.
  std::unique_ptr<Scratch> m_prototype;
  mutable std::mutex m_pool_mutex;
  mutable std::vector<std::unique_ptr<Scratch>> m_pool;
  std::size_t m_prebuilt = 0;
  std::size_t m_compiled = 0;
};

} // namespace denpex::matcher::detail
