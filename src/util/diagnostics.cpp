#include <denpex/util/diagnostics.hpp>

namespace denpex {

void Diagnostics::add(Level level, Error error) {
  std::lock_guard lock(m_mutex);
  m_items.push_back(Diagnostic{level, std::move(error)});
}

std::vector<Diagnostic> Diagnostics::items() const {
  std::lock_guard lock(m_mutex);
  return m_items;
}

bool Diagnostics::has_errors() const {
  std::lock_guard lock(m_mutex);
  for (const auto& d : m_items) {
    if (d.level == Level::error) {
      return true;
    }
  }
  return false;
}

std::size_t Diagnostics::size() const {
  std::lock_guard lock(m_mutex);
  return m_items.size();
}

std::string format_diagnostic(const Diagnostic& d) {
  std::string out = d.level == Level::error ? "denpex: error: " : "denpex: warning: ";
  if (!d.error.where.empty()) {
    out += d.error.where;
    out += ": ";
  }
  out += d.error.what;
  if (!d.error.help.empty()) {
    out += "\n  help: ";
    out += d.error.help;
  }
  return out;
}

} // namespace denpex
