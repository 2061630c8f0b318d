#include <denpex/report/report.hpp>
#include <denpex/report/verdict.hpp>

#include <nlohmann/json.hpp>

#include "json_fields.hpp"

#include <denpex/correlate/describe.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

using nlohmann::ordered_json;

using detail::group_json;
using detail::groups_json;
using detail::safe;
using detail::signals_json;
using detail::where_json;

// The facts the choice of the initiating incident used (null otherwise).
ordered_json decision_json(const correlate::Diagnosis& d, const catalog::Catalog& cat, const correlate::Incident& inc) {
  if (!inc.decision) {
    return nullptr;
  }
  const auto& dec = *inc.decision;
  ordered_json j;
  j["rule_id"] = std::string(correlate::to_string(dec.rule));
  j["candidates"] = dec.candidates;
  j["priority"] = dec.priority;
  j["skew_s"] = static_cast<double>(dec.skew_us) / 1e6;
  j["clock_skew_s"] = static_cast<double>(dec.node_skew_us) / 1e6;
  if (const auto& r = dec.clock_risk) {
    j["clock_risk"] = {{"signature", cat.at(r->signature).id},
                       {"host", safe(r->host)},
                       {"delta_s", static_cast<double>(r->delta_us) / 1e6},
                       {"where", where_json(d, r->first)}};
  } else {
    j["clock_risk"] = nullptr;
  }
  j["episode"] = dec.episode ? ordered_json(*dec.episode) : ordered_json(nullptr);
  j["fell_back"] = dec.fell_back;
  j["skipped"] = {{"generic", dec.generic_skipped},
                  {"recovered", dec.recovered_skipped},
                  {"earlier_episode", dec.earlier_skipped},
                  {"nonfatal", dec.nonfatal_skipped}};
  return j;
}

ordered_json episodes_json(const correlate::Diagnosis& d) {
  ordered_json out = ordered_json::array();
  for (std::size_t i = 0; i < d.episodes.size(); ++i) {
    const auto& e = d.episodes[i];
    ordered_json j;
    j["index"] = i;
    j["clock"] = e.domain == 0 ? ordered_json("wall")
                               : ordered_json(safe(d.source_name(e.domain - 1)));
    j["started_by"] = std::string(correlate::to_string(e.started_by));
    j["start_us"] = e.start_us ? ordered_json(*e.start_us) : ordered_json(nullptr);
    j["end_us"] = e.end_us ? ordered_json(*e.end_us) : ordered_json(nullptr);
    j["gap_s"] = e.started_by == correlate::Episode::Start::quiet_gap ? ordered_json(e.gap_us / 1'000'000)
                                                                     : ordered_json(nullptr);
    j["progress"] = e.started_by == correlate::Episode::Start::progress
                        ? ordered_json({{"source", safe(d.source_name(e.progress_source))}, {"line", e.progress_line}})
                        : ordered_json(nullptr);
    j["terminal"] = e.terminal;
    j["incidents"] = e.incidents;
    j["description"] = correlate::describe(e, i, d);
    out.push_back(std::move(j));
  }
  return out;
}

ordered_json identities_json(const correlate::Diagnosis& d) {
  ordered_json a = ordered_json::array();
  for (const auto& l : d.identities) {
    ordered_json j;
    j["host"] = safe(l.host);
    j["pid"] = l.pid ? ordered_json(*l.pid) : ordered_json(nullptr);
    j["pci"] = l.pci.empty() ? ordered_json(nullptr) : ordered_json(l.pci);
    j["rank"] = l.rank;
    j["nranks"] = l.nranks;
    j["file"] = safe(d.source_name(l.source));
    j["line"] = l.line_no;
    a.push_back(j);
  }
  return a;
}

// The separate runs the logs hold (only called with two or more).
ordered_json runs_json(const correlate::Diagnosis& d) {
  ordered_json a = ordered_json::array();
  const auto* init = d.initiating();
  for (const auto& r : d.runs) {
    ordered_json j;
    j["job"] = r.job.empty() ? ordered_json(nullptr) : ordered_json(r.job);
    ordered_json files = ordered_json::array();
    for (const auto src : r.sources) {
      files.push_back(safe(d.source_name(src)));
    }
    j["files"] = std::move(files);
    j["start_us"] = r.start_us ? ordered_json(*r.start_us) : ordered_json(nullptr);
    j["end_us"] = r.end_us ? ordered_json(*r.end_us) : ordered_json(nullptr);
    j["initiating"] = init != nullptr && std::binary_search(r.sources.begin(), r.sources.end(), init->first.source);
    a.push_back(std::move(j));
  }
  return a;
}

// The verdict: the line the text report opens with, and its parts.
ordered_json verdict_json(const correlate::Diagnosis& d, const catalog::Catalog& cat) {
  const auto v = verdict(d, cat);
  const auto or_null = [](const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(safe(s)); };
  ordered_json j;
  j["line"] = safe(verdict_line(v, false));
  j["failure"] = v.failure;
  j["no_cause"] = v.no_cause;
  j["hang"] = v.hang;
  j["who"] = or_null(v.who);
  j["signature"] = or_null(v.id);
  j["what"] = or_null(v.what);
  j["fix"] = v.fix;
  j["status"] = v.failure ? ordered_json(nullptr) : ordered_json(v.status);
  return j;
}

ordered_json fix_json(const catalog::Signature& sig, const FixContext& fix_in) {
  ordered_json fix;
  fix["summary"] = sig.fix.summary;
  ordered_json env = ordered_json::object();
  for (const auto& [k, v] : sig.fix.env) {
    env[k] = v;
  }
  fix["env"] = env;
  std::vector<std::string> steps;
  for (const auto& st : sig.fix.steps) {
    steps.push_back(with_log(st, fix_in));
  }
  fix["steps"] = steps;
  fix["commands"] = fix_commands(sig, fix_in);
  const auto own = stack_fix(sig, fix_in);
  fix["for_stack"] = own.empty() ? ordered_json(nullptr) : ordered_json(own);
  return fix;
}

ordered_json inference_json(const correlate::Inference& inf) {
  return {{"summary", correlate::summary(inf)},
          {"kind", std::string(correlate::to_string(inf.kind))},
          {"world_size", inf.world_size},
          {"world_size_from", correlate::world_size_from(inf)},
          {"missing_ranks", inf.missing_ranks},
          {"absent_ranks", inf.absent_ranks},
          {"lagging_ranks", inf.lagging_ranks},
          {"mismatches", inf.mismatches},
          {"next_steps", correlate::next_steps(inf)},
          {"collective", inf.op.empty() ? ordered_json(nullptr) : ordered_json(inf.op)},
          {"seq", inf.max_seq},
          {"timeout_ms", inf.timeout_ms < 0 ? ordered_json(nullptr) : ordered_json(inf.timeout_ms)},
          {"first_collective", inf.first_collective},
          {"transport", inf.transport}};
}

} // namespace

void print_json(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run) {
  ordered_json root;
  root["schema_version"] = k_json_schema_version;
  root["tool"] = {{"name", "denpex"}, {"version", run.version}, {"catalog_size", cat.size()}};
  root["verdict"] = verdict_json(d, cat);
  ordered_json summary;
  summary["failures"] = d.incidents.size();
  summary["initiating"] = d.initiating() != nullptr ? ordered_json(cat.at(d.initiating()->signature).id) : ordered_json(nullptr);
  summary["sources"] = run.sources;
  summary["bytes"] = run.bytes;
  summary["lines"] = run.lines;
  summary["matches"] = d.hits;
  summary["long_lines_cut"] = run.long_lines_cut;
  summary["findings_files"] = run.findings_files;
  summary["clock_note"] = d.clock_note;
  root["summary"] = summary;

  ordered_json incidents = ordered_json::array();
  for (const auto& inc : d.incidents) {
    const auto& sig = cat.at(inc.signature);
    ordered_json j;
    detail::put_incident_head(j, d, cat, inc);
    j["decision"] = decision_json(d, cat, inc);
    detail::put_incident_reach(j, d, inc);
    const auto recovered = correlate::describe_recovered(inc, d);
    const auto earlier = correlate::describe_earlier_episode(inc, d);
    j["recovered"] = recovered.empty() ? ordered_json(nullptr) : ordered_json(safe(recovered));
    j["earlier_episode"] = earlier.empty() ? ordered_json(nullptr) : ordered_json(safe(earlier));
    j["episode"] = inc.episode ? ordered_json(*inc.episode) : ordered_json(nullptr);
    const auto inferred = correlate::describe_inferred(inc);
    j["inferred"] = inferred.empty() ? ordered_json(nullptr) : ordered_json(inferred);
    j["simultaneous"] = inc.simultaneous;
    j["traceback"] = detail::traceback_json(d, inc);
    j["later"] = detail::later_json(d, inc);
    j["caused_by"] = inc.caused_by.empty() ? ordered_json(nullptr) : ordered_json("xid." + inc.caused_by);
    j["said_above"] = detail::said_above_json(d, inc);
    j["root_cause"] = sig.root_cause;
    const auto fix_in = fix_context(d, inc);
    j["fix"] = fix_json(sig, fix_in);
    j["verify"] = {{"summary", sig.verify.summary}, {"commands", verify_commands(sig, fix_in)}};
    j["signals"] = signals_json(d, sig, inc);
    j["missing"] = correlate::describe_missing(inc, cat);
    j["collateral"] = groups_json(d, cat, inc.collateral);
    j["context"] = groups_json(d, cat, inc.context);
    std::vector<std::string> refs;
    for (const auto& r : sig.references) {
      refs.push_back(r.url);
    }
    j["references"] = refs;
    incidents.push_back(j);
  }
  root["incidents"] = incidents;
  root["episodes"] = episodes_json(d);
  root["identities"] = identities_json(d);
  root["stacks"] = d.stacks;
  if (!d.runs.empty()) {
    root["runs"] = runs_json(d);
    root["runs_note"] = safe(correlate::describe_runs(d));
  }
  root["unexplained"] = groups_json(d, cat, d.unexplained);
  root["inference"] = d.inference ? inference_json(*d.inference) : ordered_json(nullptr);
  ordered_json starts = ordered_json::array();
  for (const auto& sp : d.starting_points) {
    starts.push_back({{"template", safe(sp.template_text)},
                      {"count", sp.count},
                      {"ranks", std::vector<int>(sp.ranks.begin(), sp.ranks.end())},
                      {"first", where_json(d, sp.first)}});
  }
  root["starting_points"] = starts;
  ordered_json diags = ordered_json::array();
  for (const auto& dg : run.diagnostics) {
    ordered_json j;
    detail::put_diagnostic(j, dg);
    diags.push_back(std::move(j));
  }
  root["diagnostics"] = diags;
  out << root.dump(2, ' ', false, ordered_json::error_handler_t::replace) << "\n";
}

} // namespace denpex::report
