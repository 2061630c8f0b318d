#include <denpex/util/diagnostics.hpp>

#include <cstdio>
#include <cstdlib>

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

std::string describe(const Error& e) {
  std::string out;
  if (!e.where.empty()) {
    out += e.where;
    out += ": ";
  }
  out += e.what;
  if (!e.help.empty()) {
    out += "\n  help: ";
    out += e.help;
  }
  return out;
}

std::string format_diagnostic(const Diagnostic& d) {
  return (d.level == Level::error ? "denpex: error: " : "denpex: warning: ") + describe(d.error);
}

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::io:
    return "io";
  case ErrorKind::format:
    return "format";
  case ErrorKind::invalid:
    return "invalid";
  case ErrorKind::usage:
    return "usage";
  }
  return "invalid";
}

void assert_failed(const char* cond, const char* file, int line) {
  std::fprintf(stderr, "denpex: internal error: %s:%d: %s does not hold; please report this with the command line\n",
               file, line, cond);
  std::abort();
}

} // namespace denpex
