#include <denpex/source/chunk.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::source {

std::uint64_t Chunk::line_at(std::size_t pos) const {
  const auto soft = static_cast<std::uint64_t>(std::lower_bound(soft_breaks.begin(), soft_breaks.end(), pos) -
                                               soft_breaks.begin());
  return first_line + util::count_newlines(text.substr(0, pos)) - soft;
}

std::uint64_t LineCounter::at(std::size_t pos) {
  if (pos > m_pos) {
    m_line += util::count_newlines(m_chunk.text.substr(m_pos, pos - m_pos));
    const auto& soft = m_chunk.soft_breaks;
    while (m_soft < soft.size() && soft[m_soft] < pos) {
      --m_line;
      ++m_soft;
    }
    m_pos = pos;
  }
  return m_line;
}

} // namespace denpex::source
