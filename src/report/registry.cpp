// The list of diagnose's output formats (report.hpp).
#include <denpex/report/formats.hpp>
#include <denpex/report/report.hpp>

namespace denpex::report {

namespace {

// The printers that take no text options, as OutputFormat::print.
template <void (*Print)(std::ostream&, const correlate::Diagnosis&, const catalog::Catalog&, const RunInfo&)>
void plain(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run,
           const TextOptions& /*text*/) {
  Print(out, d, cat, run);
}

} // namespace

const std::vector<OutputFormat>& output_formats() {
  static const std::vector<OutputFormat> formats = {
      {"text", "for people, wrapped to the terminal (the default)", print_text},
      {"json", "one document (schemas/denpex-diagnosis.schema.json)", plain<print_json>},
      {"jsonl", "one finding per line, the form `denpex diagnose` merges across nodes", plain<print_jsonl>},
      {"sarif", "SARIF 2.1.0 for code scanning", plain<print_sarif>},
      {"github", "GitHub Actions workflow annotations", plain<print_github>},
      {"markdown", "a ticket or a pull-request comment", plain<print_markdown>},
      {"prometheus", "node_exporter's textfile collector", plain<print_prometheus>},
      {"gcc", "FILE:LINE:COL for editors", plain<print_gcc>},
      {"html", "a self-contained page with a timeline", plain<print_html>},
  };
  return formats;
}

const OutputFormat* find_output_format(std::string_view name) {
  for (const auto& f : output_formats()) {
    if (f.name == name) {
      return &f;
    }
  }
  return nullptr;
}

std::string output_format_names() {
  std::string out;
  for (const auto& f : output_formats()) {
    out += out.empty() ? "" : ", ";
    out += f.name;
  }
  return out;
}

} // namespace denpex::report
