// JSON Lines: one finding per line (docs/output-formats.md, "jsonl").
//
// Every line is a complete object that names its own source file and host,
// so the outputs of per-node runs can be concatenated (`cat node-*.jsonl`)
// and read back line by line. Record order: the header (format and
// version), incidents (initiating first), unexplained groups, inference,
// starting points, diagnostics, evidence, progress, then one summary. The "where" objects are those of `--format
// json` plus time_us/mono_us, the normalised clock values. Evidence and
// progress records are the hits and progress marks the diagnosis was made
// from: a merge of per-node findings reads those back and decides as one run
// over all the logs would (docs/cluster.md). The findings module writes
// those, the header, and reads them all back (findings/findings.hpp).
#include <denpex/report/formats.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "json_fields.hpp"

#include <denpex/correlate/describe.hpp>
#include <denpex/findings/findings.hpp>
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
  j[findings::key::type] = std::string(type);
  j[findings::key::schema_version] = findings::k_schema_version;
  if (e != nullptr) {
    j[findings::key::file] = safe(d.source_name(e->source));
    j[findings::key::host] = host_of(d, *e);
  }
  return j;
}

void emit(std::ostream& out, const ordered_json& j) {
  out << j.dump(-1, ' ', false, ordered_json::error_handler_t::replace) << "\n";
}

} // namespace

void print_jsonl(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run) {
  findings::write_header(out, run.version);
  for (const auto& inc : d.incidents) {
    const auto& sig = cat.at(inc.signature);
    auto j = header(findings::type::incident, d, &inc.first);
    detail::put_incident_head(j, d, cat, inc);
    j["fingerprint"] = finding_fingerprint(sig.id, safe(d.source_name(inc.first.source)), inc.first.line_no);
    detail::put_incident_reach(j, d, inc);
    j["caused_by"] = inc.caused_by.empty() ? ordered_json(nullptr) : ordered_json("xid." + inc.caused_by);
    j["fix"] = sig.fix.summary;
    j[findings::key::signals] = signals_json(d, sig, inc);
    ordered_json missing = ordered_json::array();
    for (const auto& m : correlate::describe_missing(inc, cat)) {
      missing.push_back(safe(m));
    }
    j["missing"] = missing;
    j[findings::key::collateral] = groups_json(d, cat, inc.collateral);
    j[findings::key::context] = groups_json(d, cat, inc.context);
    emit(out, j);
  }
  for (const auto& g : d.unexplained) {
    const auto& sig = cat.at(g.signature);
    auto j = header(findings::type::unexplained, d, &g.first);
    j[findings::key::signature] = sig.id;
    j["title"] = sig.title;
    j["role"] = std::string(catalog::to_string(sig.role));
    j["severity"] = std::string(catalog::to_string(sig.severity));
    j["fingerprint"] = finding_fingerprint(sig.id, safe(d.source_name(g.first.source)), g.first.line_no);
    j[findings::key::count] = g.count;
    j[findings::key::ranks] = std::vector<int>(g.ranks.begin(), g.ranks.end());
    j["hosts"] = hosts_json(g.hosts);
    j[findings::key::where] = where_json(d, g.first);
    emit(out, j);
  }
  if (d.inference) {
    const auto& inf = *d.inference;
    auto j = header(findings::type::inference, d, nullptr);
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
    auto j = header(findings::type::starting_point, d, &sp.first);
    j["template"] = safe(sp.template_text);
    j[findings::key::count] = sp.count;
    j[findings::key::ranks] = std::vector<int>(sp.ranks.begin(), sp.ranks.end());
    j[findings::key::where] = where_json(d, sp.first);
    emit(out, j);
  }
  for (const auto& dg : run.diagnostics) {
    auto j = header(findings::type::diagnostic, d, nullptr);
    detail::put_diagnostic(j, dg);
    emit(out, j);
  }
  const auto evidence = findings::write_evidence(out, d, cat);
  findings::write_progress(out, d);
  auto j = header(findings::type::summary, d, nullptr);
  j["tool"] = {{"name", "denpex"}, {"version", run.version}, {"catalog_size", cat.size()}};
  j["failures"] = d.incidents.size();
  j["initiating"] = d.initiating() != nullptr ? ordered_json(cat.at(d.initiating()->signature).id) : ordered_json(nullptr);
  j["unexplained"] = d.unexplained.size();
  j[findings::key::sources] = run.sources;
  j[findings::key::bytes] = run.bytes;
  j[findings::key::lines] = run.lines;
  j[findings::key::matches] = d.hits;
  j[findings::key::long_lines_cut] = run.long_lines_cut;
  j["clock_note"] = d.clock_note;
  ordered_json files = ordered_json::array();
  std::set<std::string_view> findings;
  for (const auto& s : d.sources) {
    const auto p = context::parse_path(s.name);
    ordered_json f = {{"file", safe(s.name)}, {"host", p.host.empty() ? ordered_json(nullptr) : ordered_json(safe(p.host))}};
    if (!s.findings.empty()) {
      f["findings"] = safe(s.findings);
      findings.insert(s.findings);
    }
    files.push_back(std::move(f));
  }
  j["findings_files"] = findings.size();
  j["evidence"] = evidence;
  j["files"] = files;
  emit(out, j);
}

} // namespace denpex::report
