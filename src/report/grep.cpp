// `denpex grep`'s printers (formats.hpp).
#include <denpex/report/formats.hpp>

#include <nlohmann/json.hpp>

#include <denpex/util/strings.hpp>

namespace denpex::report {

void print_grep_line(std::ostream& out, const scan::Hit& h, const scan::SourceRef& src,
                     const catalog::Signature& sig) {
  const std::string rank = h.ctx.rank ? std::to_string(h.ctx.rank->value) : "-";
  const std::string when = format_stamp(h.ctx.time);
  out << util::escape_for_terminal(src.name) << ":" << h.line_no << ": " << sig.id << " rank=" << rank
      << (when.empty() ? "" : " time=" + when) << ": " << util::escape_for_terminal(h.text) << "\n";
}

void print_grep_json(std::ostream& out, const scan::Hit& h, const scan::SourceRef& src,
                     const catalog::Signature& sig) {
  using nlohmann::ordered_json;
  auto or_null = [](const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); };
  ordered_json j;
  j["file"] = util::sanitize_utf8(src.name);
  j["line"] = h.line_no;
  j["signature"] = sig.id;
  j["signal"] = sig.signals[h.signal].id;
  j["role"] = std::string(catalog::to_string(sig.role));
  j["severity"] = std::string(catalog::to_string(sig.severity));
  j["rank"] = h.ctx.rank ? ordered_json(h.ctx.rank->value) : ordered_json(nullptr);
  j["time"] = or_null(format_stamp(h.ctx.time));
  j["host"] = h.ctx.host ? ordered_json(util::sanitize_utf8(h.ctx.host->value)) : ordered_json(nullptr);
  ordered_json caps = ordered_json::object();
  for (const auto& [k, v] : h.captures) {
    caps[k] = util::sanitize_utf8(v);
  }
  j["captures"] = caps;
  j["text"] = util::sanitize_utf8(h.text);
  out << j.dump(-1, ' ', false, ordered_json::error_handler_t::replace) << "\n";
}

} // namespace denpex::report
