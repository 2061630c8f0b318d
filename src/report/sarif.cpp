// SARIF 2.1.0 for GitHub code scanning (docs/output-formats.md).
//
// Checked against the OASIS errata01 schema (tests/schemas/sarif-2.1.0.json,
// from oasis-tcs/sarif-spec sarif-2.1/schema/) by the `schema` tests. GitHub
// reads: rules' shortDescription/fullDescription/help and
// defaultConfiguration.level, results' ruleId, level, message.text,
// locations[0].physicalLocation and partialFingerprints.
#include <denpex/report/formats.hpp>

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <denpex/correlate/describe.hpp>
#include "json_fields.hpp"
#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

using nlohmann::ordered_json;

std::string safe(std::string_view s) { return util::sanitize_utf8(s); }

std::string_view sarif_level(catalog::Severity s) {
  switch (s) {
  case catalog::Severity::critical:
  case catalog::Severity::error:
    return "error";
  case catalog::Severity::warning:
    return "warning";
  case catalog::Severity::info:
    return "note";
  }
  return "note";
}


// "nccl.nvls.cuda-700" -> "NcclNvlsCuda700": reportingDescriptor.name is an
// identifier-like, human-readable name (SARIF 3.49.7).
std::string rule_name(std::string_view id) {
  std::string out;
  bool upper = true;
  for (char c : id) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum) {
      upper = true;
      continue;
    }
    out += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return out;
}

// A log's artifactLocation: relative to SRCROOT (the working directory,
// run.originalUriBaseIds) when it was named relative or lies under it, else
// an absolute file URI.
ordered_json artifact_location(const std::string& path, std::string_view base) {
  if (!path.empty() && path.front() == '/') {
    if (!base.empty() && util::starts_with(path, base)) {
      return {{"uri", sarif_uri(std::string_view(path).substr(base.size()))}, {"uriBaseId", "SRCROOT"}};
    }
    return {{"uri", "file://" + sarif_uri(path)}};
  }
  return {{"uri", sarif_uri(path)}, {"uriBaseId", "SRCROOT"}};
}

ordered_json physical_location(const correlate::Diagnosis& d, const correlate::Evidence& e, bool snippet,
                               std::string_view base) {
  ordered_json pl;
  pl["artifactLocation"] = artifact_location(safe(d.source_name(e.source)), base);
  if (e.line_no > 0) {
    ordered_json region;
    region["startLine"] = e.line_no;
    if (snippet) {
      region["snippet"] = {{"text", safe(e.text)}};
    }
    pl["region"] = region;
  }
  return pl;
}

// An array holding one location object.
ordered_json locations(ordered_json physical) {
  ordered_json loc = ordered_json::object();
  loc["physicalLocation"] = std::move(physical);
  ordered_json arr = ordered_json::array();
  arr.push_back(std::move(loc));
  return arr;
}

ordered_json rule_json(const catalog::Signature& sig) {
  ordered_json r;
  r["id"] = sig.id;
  r["name"] = rule_name(sig.id);
  r["shortDescription"] = {{"text", sig.title}};
  r["fullDescription"] = {{"text", sig.root_cause.empty() ? sig.title : sig.root_cause}};

  std::string text = "Fix: " + sig.fix.summary + "\n";
  std::string md = "**Fix.** " + sig.fix.summary + "\n\n";
  for (std::size_t i = 0; i < sig.fix.steps.size(); ++i) {
    text += fmt::format("  {}. {}\n", i + 1, sig.fix.steps[i]);
    md += fmt::format("{}. {}\n", i + 1, sig.fix.steps[i]);
  }
  if (!sig.fix.steps.empty()) {
    md += "\n";
  }
  std::string cmds;
  for (const auto& c : fix_commands(sig)) {
    cmds += c + "\n";
  }
  if (!cmds.empty()) {
    for (const auto& l : util::split(std::string_view(cmds).substr(0, cmds.size() - 1), '\n')) {
      text += fmt::format("  $ {}\n", l);
    }
    const auto fence = markdown_fence_for(cmds);
    md += fence + "sh\n" + cmds + fence + "\n\n";
  }
  text += "Verify: " + sig.verify.summary + "\n";
  md += "**Verify.** " + sig.verify.summary + "\n\n";
  std::string vcmds;
  for (const auto& c : sig.verify.commands) {
    text += fmt::format("  $ {}\n", c);
    vcmds += c + "\n";
  }
  if (!vcmds.empty()) {
    const auto fence = markdown_fence_for(vcmds);
    md += fence + "sh\n" + vcmds + fence + "\n\n";
  }
  if (!sig.references.empty()) {
    md += "**References**\n\n";
    for (const auto& ref : sig.references) {
      md += fmt::format("- [{}]({})\n", ref.title.empty() ? ref.url : ref.title, ref.url);
    }
  }
  r["help"] = {{"text", text}, {"markdown", md}};
  if (!sig.references.empty()) {
    r["helpUri"] = sig.references.front().url;
  }
  r["defaultConfiguration"] = {{"level", sarif_level(sig.severity)}};
  // `tags` must hold unique strings (SARIF 3.8.4); the area and role come first
  // so GitHub's rule filter can use them.
  std::vector<std::string> tags{"denpex", sig.area, std::string(catalog::to_string(sig.role))};
  for (const auto& t : sig.tags) {
    if (std::find(tags.begin(), tags.end(), t) == tags.end()) {
      tags.push_back(t);
    }
  }
  ordered_json props;
  props["area"] = sig.area;
  props["role"] = std::string(catalog::to_string(sig.role));
  props["severity"] = std::string(catalog::to_string(sig.severity));
  props["priority"] = sig.priority;
  props["tags"] = tags;
  r["properties"] = props;
  return r;
}

ordered_json opt_int(const std::optional<context::Field<int>>& f) {
  return f ? ordered_json(f->value) : ordered_json(nullptr);
}

ordered_json group_location(const correlate::Diagnosis& d, const catalog::Catalog& cat, const correlate::Group& g,
                            int id, std::string_view kind, std::string_view base) {
  ordered_json loc;
  loc["id"] = id;
  loc["physicalLocation"] = physical_location(d, g.first, false, base);
  loc["message"] = {{"text", fmt::format("{} {}: {} — {} report{}, ranks {}", kind, cat.at(g.signature).id,
                                         cat.at(g.signature).title, g.count, g.count == 1 ? "" : "s",
                                         format_ranks(g.ranks))}};
  return loc;
}

} // namespace

std::string sarif_uri(std::string_view path) {
  if (path.empty()) {
    return "unknown";
  }
  std::string out;
  out.reserve(path.size());
  for (unsigned char c : path) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~' || c == '/';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string finding_fingerprint(std::string_view signature_id, std::string_view file, std::uint64_t line) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
    h ^= 0xff; // field separator that cannot occur in UTF-8 text
    h *= 0x100000001b3ull;
  };
  mix(signature_id);
  mix(file);
  mix(std::to_string(line));
  return fmt::format("{:016x}", h);
}

namespace {

// The Python traceback as a SARIF stack, innermost frame first; frame files
// are the program's own paths, not the log's.
ordered_json stacks(const context::Traceback& tb) {
  ordered_json frames = ordered_json::array();
  for (auto it = tb.frames.rbegin(); it != tb.frames.rend(); ++it) {
    ordered_json loc;
    loc["physicalLocation"] = {{"artifactLocation", {{"uri", safe(it->file)}}},
                               {"region", {{"startLine", std::max(it->line, 1)}}}};
    if (!it->function.empty()) {
      loc["message"] = {{"text", safe(it->function)}};
    }
    frames.push_back({{"location", loc}});
  }
  ordered_json stack;
  stack["message"] = {{"text", fmt::format("Python traceback ({} frames, {} shown)", tb.frame_count, tb.frames.size())}};
  stack["frames"] = frames;
  return ordered_json::array({stack});
}

// The result properties of one incident: who, how sure, how often, and where
// in the code.
ordered_json incident_properties(const correlate::Diagnosis& d, const catalog::Catalog& cat, const correlate::Incident& inc) {
  const auto& sig = cat.at(inc.signature);
  ordered_json props;
  props["initiating"] = inc.initiating;
  props["rank"] = opt_int(inc.first.ctx.rank);
  props["host"] = inc.first.ctx.host ? ordered_json(safe(inc.first.ctx.host->value)) : ordered_json(nullptr);
  props["confidence"] =
      inc.initiating ? ordered_json(std::string(correlate::to_string(inc.confidence))) : ordered_json(nullptr);
  props["rule"] = inc.decision ? ordered_json(correlate::describe(*inc.decision, d)) : ordered_json(nullptr);
  props["rule_id"] = inc.decision ? ordered_json(std::string(correlate::to_string(inc.decision->rule))) : ordered_json(nullptr);
  props["severity"] = std::string(catalog::to_string(sig.severity));
  props["count"] = inc.count;
  props["ranks"] = std::vector<int>(inc.ranks.begin(), inc.ranks.end());
  std::vector<std::string> hosts;
  for (const auto& h : inc.hosts) {
    hosts.push_back(safe(h));
  }
  props["hosts"] = hosts;
  props["gpu"] = opt_int(inc.first.ctx.gpu);
  props["pci"] = inc.pci.empty() ? ordered_json(nullptr) : ordered_json(inc.pci);
  const auto t = format_time(inc.first);
  props["time"] = t.empty() ? ordered_json(nullptr) : ordered_json(t);
  props["missing"] = correlate::describe_missing(inc, cat);
  props["simultaneous"] = inc.simultaneous;
  std::vector<std::string> notes;
  for (const auto& n : code_notes(d, inc)) {
    notes.push_back(safe(n));
  }
  props["code"] = notes;
  return props;
}

// Rules: each entry that appears in a result, in order of first appearance.
class Rules {
public:
  explicit Rules(const catalog::Catalog& cat) : m_cat(cat) {}
  std::size_t index_of(std::uint32_t sig) {
    auto [it, inserted] = m_index.emplace(sig, m_index.size());
    if (inserted) {
      m_rules.push_back(rule_json(m_cat.at(sig)));
    }
    return it->second;
  }
  [[nodiscard]] const ordered_json& json() const { return m_rules; }

private:
  const catalog::Catalog& m_cat;
  std::map<std::uint32_t, std::size_t> m_index;
  ordered_json m_rules = ordered_json::array();
};

// An incident: one result at its level, collateral and context as related
// locations, the traceback as a stack.
ordered_json incident_result(const correlate::Diagnosis& d, const catalog::Catalog& cat, const correlate::Incident& inc,
                             Rules& rules, const RunInfo& run) {
  const auto& sig = cat.at(inc.signature);
  ordered_json r;
  r["ruleId"] = sig.id;
  r["ruleIndex"] = rules.index_of(inc.signature);
  r["level"] = sarif_level(sig.severity);
  r["message"] = {{"text", fmt::format("{} — {}", safe(incident_title(inc, cat)), sig.fix.summary)}};
  r["locations"] = locations(physical_location(d, inc.first, true, run.working_dir));
  if (inc.traceback && !inc.traceback->frames.empty()) {
    r["stacks"] = stacks(*inc.traceback);
  }
  ordered_json related = ordered_json::array();
  int next_id = 1;
  for (const auto& g : inc.collateral) {
    related.push_back(group_location(d, cat, g, next_id++, "collateral", run.working_dir));
  }
  for (const auto& g : inc.context) {
    related.push_back(group_location(d, cat, g, next_id++, "context", run.working_dir));
  }
  if (!related.empty()) {
    r["relatedLocations"] = related;
  }
  const auto& file = d.source_name(inc.first.source);
  r["partialFingerprints"] = {{"denpexFinding/v1", finding_fingerprint(sig.id, safe(file), inc.first.line_no)}};
  r["properties"] = incident_properties(d, cat, inc);
  return r;
}

// A group of reports no incident explains: a `note` result.
ordered_json unexplained_result(const correlate::Diagnosis& d, const catalog::Catalog& cat, const correlate::Group& g,
                                Rules& rules, const RunInfo& run) {
  const auto& sig = cat.at(g.signature);
  ordered_json r;
  r["ruleId"] = sig.id;
  r["ruleIndex"] = rules.index_of(g.signature);
  r["level"] = "note";
  r["message"] = {{"text", fmt::format("{} — {} report{} with no diagnosed cause in these logs", sig.title, g.count,
                                       g.count == 1 ? "" : "s")}};
  r["locations"] = locations(physical_location(d, g.first, true, run.working_dir));
  r["partialFingerprints"] = {
      {"denpexFinding/v1", finding_fingerprint(sig.id, safe(d.source_name(g.first.source)), g.first.line_no)}};
  ordered_json props;
  props["unexplained"] = true;
  props["rank"] = opt_int(g.first.ctx.rank);
  props["host"] = g.first.ctx.host ? ordered_json(safe(g.first.ctx.host->value)) : ordered_json(nullptr);
  props["count"] = g.count;
  props["ranks"] = std::vector<int>(g.ranks.begin(), g.ranks.end());
  props["hosts"] = detail::hosts_json(g.hosts);
  r["properties"] = props;
  return r;
}

// The run's diagnostics as tool execution notifications.
ordered_json invocation_json(const RunInfo& run) {
  ordered_json invocation;
  bool ok = true;
  ordered_json notes = ordered_json::array();
  for (const auto& dg : run.diagnostics) {
    ok = ok && dg.level != Level::error;
    notes.push_back({{"level", dg.level == Level::error ? "error" : "warning"},
                     {"message", {{"text", safe(dg.error.where) + ": " + safe(dg.error.what)}}}});
  }
  invocation["executionSuccessful"] = ok;
  if (!notes.empty()) {
    invocation["toolExecutionNotifications"] = notes;
  }
  return invocation;
}

// The run's property bag: counts, the inference, and the starting points
// (they have no rule, so they cannot be results: GitHub requires a ruleId).
ordered_json run_properties(const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run) {
  ordered_json props;
  props["schema_version"] = k_json_schema_version;
  props["catalog_size"] = cat.size();
  props["initiating"] =
      d.initiating() != nullptr ? ordered_json(cat.at(d.initiating()->signature).id) : ordered_json(nullptr);
  props["sources"] = run.sources;
  props["bytes"] = run.bytes;
  props["lines"] = run.lines;
  props["matches"] = d.hits;
  props["long_lines_cut"] = run.long_lines_cut;
  props["clock_note"] = d.clock_note;
  if (d.inference) {
    const auto& inf = *d.inference;
    props["inference"] = {{"summary", safe(correlate::summary(inf))},
                          {"world_size", inf.world_size},
                          {"missing_ranks", inf.missing_ranks},
                          {"lagging_ranks", inf.lagging_ranks},
                          {"mismatches", inf.mismatches},
                          {"next_steps", correlate::next_steps(inf)}};
  }
  ordered_json starts = ordered_json::array();
  for (const auto& sp : d.starting_points) {
    ordered_json loc;
    loc["physicalLocation"] = physical_location(d, sp.first, true, run.working_dir);
    starts.push_back({{"template", safe(sp.template_text)},
                      {"count", sp.count},
                      {"ranks", std::vector<int>(sp.ranks.begin(), sp.ranks.end())},
                      {"location", loc}});
  }
  props["starting_points"] = starts;
  return props;
}

} // namespace

void print_sarif(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run) {
  Rules rules(cat);
  ordered_json results = ordered_json::array();
  for (const auto& inc : d.incidents) {
    results.push_back(incident_result(d, cat, inc, rules, run));
  }
  for (const auto& g : d.unexplained) {
    results.push_back(unexplained_result(d, cat, g, rules, run));
  }
  ordered_json driver;
  driver["name"] = "denpex";
  driver["version"] = run.version;
  driver["rules"] = rules.json();

  ordered_json the_run;
  the_run["tool"] = {{"driver", driver}};
  // One category of analysis for code scanning ("denpex/" + the run kind).
  the_run["automationDetails"] = {{"id", "denpex/diagnose/"}};
  if (!run.working_dir.empty()) {
    the_run["originalUriBaseIds"] = {{"SRCROOT", {{"uri", "file://" + sarif_uri(run.working_dir)}}}};
  }
  the_run["invocations"] = ordered_json::array({invocation_json(run)});
  the_run["results"] = results;
  the_run["properties"] = run_properties(d, cat, run);

  ordered_json root;
  root["$schema"] = std::string(k_sarif_schema_uri);
  root["version"] = "2.1.0";
  root["runs"] = ordered_json::array({the_run});
  out << root.dump(2, ' ', false, ordered_json::error_handler_t::replace) << "\n";
}

} // namespace denpex::report
