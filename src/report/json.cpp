#include <denpex/report/report.hpp>

#include <nlohmann/json.hpp>

#include <denpex/util/strings.hpp>

namespace denpex::report {

namespace {

using nlohmann::ordered_json;

std::string safe(std::string_view s) { return util::sanitize_utf8(s); }

ordered_json field_origin(context::Origin o) { return std::string(context::to_string(o)); }

ordered_json where_json(const correlate::Diagnosis& d, const correlate::Evidence& e) {
  ordered_json w;
  w["file"] = safe(e.source < d.sources.size() ? d.sources[e.source].name : "?");
  w["line"] = e.line_no;
  w["rank"] = e.ctx.rank ? ordered_json(e.ctx.rank->value) : ordered_json(nullptr);
  w["local_rank"] = e.ctx.local_rank ? ordered_json(e.ctx.local_rank->value) : ordered_json(nullptr);
  w["host"] = e.ctx.host ? ordered_json(safe(e.ctx.host->value)) : ordered_json(nullptr);
  w["gpu"] = e.ctx.gpu ? ordered_json(e.ctx.gpu->value) : ordered_json(nullptr);
  w["pci"] = e.ctx.pci ? ordered_json(e.ctx.pci->value) : ordered_json(nullptr);
  w["pid"] = e.ctx.pid ? ordered_json(e.ctx.pid->value) : ordered_json(nullptr);
  const auto t = format_time(e);
  w["time"] = t.empty() ? ordered_json(nullptr) : ordered_json(t);
  w["clock"] = std::string(context::to_string(e.ctx.time.kind));
  ordered_json from = ordered_json::object();
  if (e.ctx.rank) {
    from["rank"] = field_origin(e.ctx.rank->origin);
  }
  if (e.ctx.host) {
    from["host"] = field_origin(e.ctx.host->origin);
  }
  if (e.ctx.pci) {
    from["pci"] = field_origin(e.ctx.pci->origin);
  }
  if (e.ctx.time.kind != context::ClockKind::none) {
    from["time"] = field_origin(e.ctx.time.origin);
    w["time_format"] = std::string(e.ctx.time.format);
  }
  w["from"] = from;
  w["text"] = safe(e.text);
  return w;
}

ordered_json group_json(const correlate::Diagnosis& d, const catalog::Catalog& cat, const correlate::Group& g) {
  ordered_json j;
  j["signature"] = cat.at(g.signature).id;
  j["title"] = cat.at(g.signature).title;
  j["role"] = std::string(catalog::to_string(cat.at(g.signature).role));
  j["count"] = g.count;
  j["ranks"] = std::vector<int>(g.ranks.begin(), g.ranks.end());
  std::vector<std::string> hosts;
  for (const auto& h : g.hosts) {
    hosts.push_back(safe(h));
  }
  j["hosts"] = hosts;
  j["first"] = where_json(d, g.first);
  return j;
}

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
    ordered_json signals = ordered_json::array();
    for (const auto& s : inc.signals) {
      ordered_json sj;
      sj["id"] = sig.signals[s.signal].id;
      sj["anchor"] = sig.signals[s.signal].anchor;
      sj["seen"] = s.count > 0;
      sj["count"] = s.count;
      sj["first"] = s.first ? where_json(d, *s.first) : ordered_json(nullptr);
      signals.push_back(sj);
    }
    j["signals"] = signals;
    j["missing"] = inc.missing;
    ordered_json coll = ordered_json::array();
    for (const auto& g : inc.collateral) {
      coll.push_back(group_json(d, cat, g));
    }
    j["collateral"] = coll;
    ordered_json ctx = ordered_json::array();
    for (const auto& g : inc.context) {
      ctx.push_back(group_json(d, cat, g));
    }
    j["context"] = ctx;
    std::vector<std::string> refs;
    for (const auto& r : sig.references) {
      refs.push_back(r.url);
    }
    j["references"] = refs;
    incidents.push_back(j);
  }
  root["incidents"] = incidents;
  ordered_json unexplained = ordered_json::array();
  for (const auto& g : d.unexplained) {
    unexplained.push_back(group_json(d, cat, g));
  }
  root["unexplained"] = unexplained;
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
