// JSON Lines: one finding per line (docs/output-formats.md, "jsonl").
//
// Every line is a complete object that names its own source file and host,
// so the outputs of per-node runs can be concatenated (`cat node-*.jsonl`)
// and read back line by line. Record order: incidents (initiating first),
// unexplained groups, inference, starting points, diagnostics, then one
// summary. The "where"
// objects are those of `--format json` plus time_us/mono_us, the normalised
// clock values a later merge needs.
#include <denpex/report/formats.hpp>

#include <nlohmann/json.hpp>

#include "json_fields.hpp"

#include <denpex/correlate/describe.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

using nlohmann::ordered_json;

using detail::group_json;
using detail::groups_json;
using detail::hosts_json;
using detail::safe;
using detail::signals_json;
using detail::where_json;


// The host of an evidence line: its own context, else what its path says.
ordered_json host_of(const correlate::Diagnosis& d, const correlate::Evidence& e) {
  if (e.ctx.host) {
    return safe(e.ctx.host->value);
  }
  const auto p = context::parse_path(d.source_name(e.source));
  return p.host.empty() ? ordered_json(nullptr) : ordered_json(safe(p.host));
}

ordered_json header(std::string_view type, const correlate::Diagnosis& d, const correlate::Evidence* e) {
  ordered_json j;
  j["type"] = std::string(type);
  j["schema_version"] = k_jsonl_schema_version;
  if (e != nullptr) {
    j["file"] = safe(d.source_name(e->source));
    j["host"] = host_of(d, *e);
  }
  return j;
}

void emit(std::ostream& out, const ordered_json& j) {
  out << j.dump(-1, ' ', false, ordered_json::error_handler_t::replace) << "\n";
}

} // namespace

void print_jsonl(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run) {
  for (const auto& inc : d.incidents) {
    const auto& sig = cat.at(inc.signature);
    auto j = header("incident", d, &inc.first);
    j["signature"] = sig.id;
    j["title"] = sig.title;
    j["headline"] = inc.headline.empty() ? ordered_json(nullptr) : ordered_json(safe(inc.headline));
    j["area"] = sig.area;
    j["severity"] = std::string(catalog::to_string(sig.severity));
    j["priority"] = sig.priority;
    j["initiating"] = inc.initiating;
    j["rule"] = inc.decision ? ordered_json(correlate::describe(*inc.decision, d)) : ordered_json(nullptr);
    j["rule_id"] = inc.decision ? ordered_json(std::string(correlate::to_string(inc.decision->rule))) : ordered_json(nullptr);
    j["confidence"] =
        inc.initiating ? ordered_json(std::string(correlate::to_string(inc.confidence))) : ordered_json(nullptr);
    j["fingerprint"] = finding_fingerprint(sig.id, safe(d.source_name(inc.first.source)), inc.first.line_no);
    j["where"] = where_json(d, inc.first);
    j["count"] = inc.count;
    j["ranks"] = std::vector<int>(inc.ranks.begin(), inc.ranks.end());
    j["hosts"] = hosts_json(inc.hosts);
    j["pci"] = inc.pci.empty() ? ordered_json(nullptr) : ordered_json(inc.pci);
    j["caused_by"] = inc.caused_by.empty() ? ordered_json(nullptr) : ordered_json("xid." + inc.caused_by);
    j["fix"] = sig.fix.summary;
    j["signals"] = signals_json(d, sig, inc);
    ordered_json missing = ordered_json::array();
    for (const auto& m : inc.missing) {
      missing.push_back(safe(m));
    }
    j["missing"] = missing;
    j["collateral"] = groups_json(d, cat, inc.collateral);
    j["context"] = groups_json(d, cat, inc.context);
    emit(out, j);
  }
  for (const auto& g : d.unexplained) {
    const auto& sig = cat.at(g.signature);
    auto j = header("unexplained", d, &g.first);
    j["signature"] = sig.id;
    j["title"] = sig.title;
    j["role"] = std::string(catalog::to_string(sig.role));
    j["severity"] = std::string(catalog::to_string(sig.severity));
    j["fingerprint"] = finding_fingerprint(sig.id, safe(d.source_name(g.first.source)), g.first.line_no);
    j["count"] = g.count;
    j["ranks"] = std::vector<int>(g.ranks.begin(), g.ranks.end());
    j["hosts"] = hosts_json(g.hosts);
    j["where"] = where_json(d, g.first);
    emit(out, j);
  }
  if (d.inference) {
    const auto& inf = *d.inference;
    auto j = header("inference", d, nullptr);
    j["summary"] = safe(correlate::summary(inf));
    j["kind"] = std::string(correlate::to_string(inf.kind));
    j["world_size"] = inf.world_size;
    j["world_size_from"] = correlate::world_size_from(inf);
    j["missing_ranks"] = inf.missing_ranks;
    j["lagging_ranks"] = inf.lagging_ranks;
    ordered_json mm = ordered_json::array();
    for (const auto& m : inf.mismatches) {
      mm.push_back(safe(m));
    }
    j["mismatches"] = mm;
    j["next_steps"] = correlate::next_steps(inf);
    emit(out, j);
  }
  for (const auto& sp : d.starting_points) {
    auto j = header("starting_point", d, &sp.first);
    j["template"] = safe(sp.template_text);
    j["count"] = sp.count;
    j["ranks"] = std::vector<int>(sp.ranks.begin(), sp.ranks.end());
    j["where"] = where_json(d, sp.first);
    emit(out, j);
  }
  for (const auto& dg : run.diagnostics) {
    auto j = header("diagnostic", d, nullptr);
    j["level"] = dg.level == Level::error ? "error" : "warning";
    j["where"] = safe(dg.error.where);
    j["message"] = safe(dg.error.what);
    emit(out, j);
  }
  auto j = header("summary", d, nullptr);
  j["tool"] = {{"name", "denpex"}, {"version", run.version}, {"catalog_size", cat.size()}};
  j["failures"] = d.incidents.size();
  j["initiating"] = d.initiating() != nullptr ? ordered_json(cat.at(d.initiating()->signature).id) : ordered_json(nullptr);
  j["unexplained"] = d.unexplained.size();
  j["sources"] = run.sources;
  j["bytes"] = run.bytes;
  j["lines"] = run.lines;
  j["matches"] = d.hits;
  j["long_lines_cut"] = run.long_lines_cut;
  j["clock_note"] = d.clock_note;
  ordered_json files = ordered_json::array();
  for (const auto& s : d.sources) {
    const auto p = context::parse_path(s.name);
    files.push_back({{"file", safe(s.name)}, {"host", p.host.empty() ? ordered_json(nullptr) : ordered_json(safe(p.host))}});
  }
  j["files"] = files;
  emit(out, j);
}

} // namespace denpex::report
