// --format prometheus (node_exporter's textfile collector) and --format gcc
// (editors' FILE:LINE:COLUMN convention). docs/monitoring.md, docs/editors.md.
#include <denpex/report/formats.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

// A label value in the exposition format: backslash, quote and newline escaped.
std::string label_value(std::string_view s) {
  std::string out;
  for (const char c : util::sanitize_utf8(s)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void header(std::ostream& out, std::string_view name, std::string_view type, std::string_view help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << "\n";
}

// A group's or incident's rank label: the single rank, else "" (several or none).
std::string rank_label(const std::set<int>& ranks) { return ranks.size() == 1 ? std::to_string(*ranks.begin()) : ""; }

std::string node_label(const std::set<std::string>& hosts) { return hosts.size() == 1 ? *hosts.begin() : ""; }

} // namespace

void print_prometheus(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat,
                      const RunInfo& run) {
  (void)run;
  // Label values are bounded: catalog ids and enums, host names, ranks, bus
  // ids. No log text (a headline is free text) ever becomes a label.
  header(out, "denpex_incident", "gauge",
         "A diagnosed incident (1), labelled by signature, severity, area, node, rank, GPU and whether it initiated "
         "the failure.");
  for (const auto& inc : d.incidents) {
    const auto& sig = cat.at(inc.signature);
    out << fmt::format("denpex_incident{{signature=\"{}\",severity=\"{}\",area=\"{}\",node=\"{}\",rank=\"{}\","
                       "gpu=\"{}\",initiating=\"{}\"}} 1\n",
                       label_value(sig.id), catalog::to_string(sig.severity), label_value(sig.area),
                       label_value(node_label(inc.hosts)), rank_label(inc.ranks), label_value(inc.pci),
                       inc.initiating ? "true" : "false");
  }
  // Lines per signature: incidents, their collateral, unexplained reports.
  std::map<std::uint32_t, std::uint64_t> lines;
  for (const auto& inc : d.incidents) {
    lines[inc.signature] += inc.count;
    for (const auto& g : inc.collateral) {
      lines[g.signature] += g.count;
    }
  }
  for (const auto& g : d.unexplained) {
    lines[g.signature] += g.count;
  }
  header(out, "denpex_signature_lines", "gauge", "Log lines that matched each signature in this diagnosis.");
  for (const auto& [id, n] : lines) {
    const auto& sig = cat.at(id);
    out << fmt::format("denpex_signature_lines{{signature=\"{}\",severity=\"{}\",role=\"{}\"}} {}\n",
                       label_value(sig.id), catalog::to_string(sig.severity), catalog::to_string(sig.role), n);
  }
  header(out, "denpex_initiating_failure", "gauge", "1 when the diagnosis names an initiating failure, else 0.");
  out << "denpex_initiating_failure " << (d.initiating() != nullptr ? 1 : 0) << "\n";
  // The failure's own time span, from the logs (the collector's
  // node_textfile_mtime_seconds says when denpex last wrote the file).
  std::optional<std::int64_t> start;
  std::optional<std::int64_t> end;
  for (const auto& e : d.episodes) {
    if (e.domain == 0 && e.start_us && e.end_us) {
      start = start ? std::min(*start, *e.start_us) : *e.start_us;
      end = end ? std::max(*end, *e.end_us) : *e.end_us;
    }
  }
  if (end) {
    header(out, "denpex_failure_end_timestamp_seconds", "gauge",
           "When the last failure evidence in the logs was printed (Unix time, from the logs' own stamps).");
    out << fmt::format("denpex_failure_end_timestamp_seconds {:.3f}\n", static_cast<double>(*end) / 1e6);
    header(out, "denpex_failure_duration_seconds", "gauge",
           "From the first to the last failure evidence in the logs, in seconds.");
    out << fmt::format("denpex_failure_duration_seconds {:.3f}\n", static_cast<double>(*end - *start) / 1e6);
  }
}

void print_gcc(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run) {
  (void)run;
  auto severity = [](catalog::Severity s) {
    return s >= catalog::Severity::error ? "error" : s == catalog::Severity::warning ? "warning" : "note";
  };
  // Paths below the working directory are shown relative to it (editors
  // resolve them against the project they opened).
  std::error_code ec;
  const auto cwd = std::filesystem::current_path(ec).string() + "/";
  auto path_of = [&](const std::string& name) {
    return !ec && name.size() > cwd.size() && name.compare(0, cwd.size(), cwd) == 0 ? name.substr(cwd.size()) : name;
  };
  auto line = [&](const correlate::Evidence& e, std::string_view sev, std::string_view id, std::string_view text) {
    out << util::escape_for_terminal(path_of(d.source_name(e.source))) << ':' << e.line_no << ":1: " << sev << ": [" << id
        << "] " << util::escape_for_terminal(util::clip(text, 400)) << "\n";
  };
  for (const auto& inc : d.incidents) {
    const auto& sig = cat.at(inc.signature);
    std::string title = incident_title(inc, cat);
    if (inc.initiating) {
      title = "initiating failure: " + title;
    }
    if (!inc.ranks.empty()) {
      title += fmt::format(" (rank{} {})", inc.ranks.size() == 1 ? "" : "s", format_ranks(inc.ranks));
    }
    line(inc.first, severity(sig.severity), sig.id, title + " — " + sig.fix.summary);
    for (const auto& g : inc.collateral) {
      line(g.first, "note", cat.at(g.signature).id,
           fmt::format("{} ({} line{}, collateral of {})", cat.at(g.signature).title, g.count, g.count == 1 ? "" : "s",
                       sig.id));
    }
  }
  for (const auto& g : d.unexplained) {
    line(g.first, "note", cat.at(g.signature).id,
         fmt::format("{} ({} line{}; no diagnosed cause in these logs)", cat.at(g.signature).title, g.count,
                     g.count == 1 ? "" : "s"));
  }
}

} // namespace denpex::report
