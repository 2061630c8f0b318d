#include <denpex/report/report.hpp>

#include <nlohmann/json.hpp>

#include "json_fields.hpp"

#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

using nlohmann::ordered_json;

using detail::group_json;
using detail::groups_json;
using detail::safe;
using detail::signals_json;
using detail::where_json;

} // namespace

void print_json(std::ostream& out, const correlate::Diagnosis& d, const catalog::Catalog& cat, const RunInfo& run) {
  ordered_json root;
  root["schema_version"] = k_json_schema_version;
  root["tool"] = {{"name", "denpex"}, {"version", run.version}, {"catalog_size", cat.size()}};
  ordered_json summary;
  summary["failures"] = d.incidents.size();
  summary["initiating"] = d.incidents.empty() ? ordered_json(nullptr) : ordered_json(cat.at(d.incidents[0].signature).id);
  summary["sources"] = run.sources;
  summary["bytes"] = run.bytes;
  summary["lines"] = run.lines;
  summary["matches"] = d.hits;
  summary["long_lines_cut"] = run.long_lines_cut;
  summary["clock_note"] = d.clock_note;
  root["summary"] = summary;

  ordered_json incidents = ordered_json::array();
  for (const auto& inc : d.incidents) {
    const auto& sig = cat.at(inc.signature);
    ordered_json j;
    j["signature"] = sig.id;
    j["title"] = sig.title;
    j["area"] = sig.area;
    j["severity"] = std::string(catalog::to_string(sig.severity));
    j["priority"] = sig.priority;
    j["initiating"] = inc.initiating;
    j["rule"] = inc.initiating ? ordered_json(inc.rule) : ordered_json(nullptr);
    j["confidence"] = inc.initiating ? ordered_json(std::string(correlate::to_string(inc.confidence))) : ordered_json(nullptr);
    j["where"] = where_json(d, inc.first);
    j["count"] = inc.count;
    j["ranks"] = std::vector<int>(inc.ranks.begin(), inc.ranks.end());
    std::vector<std::string> hosts;
    for (const auto& h : inc.hosts) {
      hosts.push_back(safe(h));
    }
    j["hosts"] = hosts;
    j["pci"] = inc.pci.empty() ? ordered_json(nullptr) : ordered_json(inc.pci);
    j["recovered"] = inc.recovered.empty() ? ordered_json(nullptr) : ordered_json(safe(inc.recovered));
    j["inferred"] = inc.inferred.empty() ? ordered_json(nullptr) : ordered_json(inc.inferred);
    j["caused_by"] = inc.caused_by.empty() ? ordered_json(nullptr) : ordered_json("xid." + inc.caused_by);
    j["root_cause"] = sig.root_cause;
    ordered_json fix;
    fix["summary"] = sig.fix.summary;
    ordered_json env = ordered_json::object();
    for (const auto& [k, v] : sig.fix.env) {
      env[k] = v;
    }
    fix["env"] = env;
    fix["steps"] = sig.fix.steps;
    fix["commands"] = sig.fix.commands;
    j["fix"] = fix;
    j["verify"] = {{"summary", sig.verify.summary}, {"commands", sig.verify.commands}};
    j["signals"] = signals_json(d, sig, inc);
    j["missing"] = inc.missing;
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
  root["unexplained"] = groups_json(d, cat, d.unexplained);
  if (d.inference) {
    const auto& inf = *d.inference;
    root["inference"] = {{"summary", inf.summary},
                         {"world_size", inf.world_size},
                         {"world_size_from", inf.world_size_from},
                         {"missing_ranks", inf.missing_ranks},
                         {"lagging_ranks", inf.lagging_ranks},
                         {"mismatches", inf.mismatches},
                         {"next_steps", inf.next_steps}};
  } else {
    root["inference"] = nullptr;
  }
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
    diags.push_back({{"level", dg.level == Level::error ? "error" : "warning"},
                     {"where", safe(dg.error.where)},
                     {"message", safe(dg.error.what)}});
  }
  root["diagnostics"] = diags;
  out << root.dump(2, ' ', false, ordered_json::error_handler_t::replace) << "\n";
}

} // namespace denpex::report
