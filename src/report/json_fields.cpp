#include "json_fields.hpp"

#include <denpex/correlate/describe.hpp>
#include <denpex/findings/record.hpp>
#include <denpex/report/report.hpp>
#include <denpex/util/strings.hpp>

namespace denpex::report::detail {

namespace {

// The fields a merge reads back are named as the findings reader names them.
namespace key = findings::key;

ordered_json field_origin(context::Origin o) { return std::string(context::to_string(o)); }

} // namespace

std::string safe(std::string_view s) { return util::sanitize_utf8(s); }

ordered_json where_json(const correlate::Diagnosis& d, const correlate::Evidence& e) {
  ordered_json w;
  w[key::file] = safe(d.source_name(e.source));
  w[key::line] = e.line_no;
  w[key::rank] = e.ctx.rank ? ordered_json(e.ctx.rank->value) : ordered_json(nullptr);
  w["local_rank"] = e.ctx.local_rank ? ordered_json(e.ctx.local_rank->value) : ordered_json(nullptr);
  w[key::host] = e.ctx.host ? ordered_json(safe(e.ctx.host->value)) : ordered_json(nullptr);
  w[key::gpu] = e.ctx.gpu ? ordered_json(e.ctx.gpu->value) : ordered_json(nullptr);
  w[key::pci] = e.ctx.pci ? ordered_json(e.ctx.pci->value) : ordered_json(nullptr);
  w["pid"] = e.ctx.pid ? ordered_json(e.ctx.pid->value) : ordered_json(nullptr);
  const auto t = format_time(e);
  w["time"] = t.empty() ? ordered_json(nullptr) : ordered_json(t);
  w["clock"] = std::string(context::to_string(e.ctx.time.kind));
  w[key::time_us] = e.time_us ? ordered_json(*e.time_us) : ordered_json(nullptr);
  w[key::mono_us] = e.ctx.time.kind == context::ClockKind::monotonic ? ordered_json(e.ctx.time.mono_micros)
                                                                   : ordered_json(nullptr);
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
  w[key::text] = safe(e.text);
  return w;
}

ordered_json hosts_json(const std::set<std::string>& hosts) {
  ordered_json a = ordered_json::array();
  for (const auto& h : hosts) {
    a.push_back(safe(h));
  }
  return a;
}

ordered_json group_json(const correlate::Diagnosis& d, const catalog::Catalog& cat, const correlate::Group& g) {
  ordered_json j;
  j[key::signature] = cat.at(g.signature).id;
  j["title"] = cat.at(g.signature).title;
  j["role"] = std::string(catalog::to_string(cat.at(g.signature).role));
  j[key::count] = g.count;
  j[key::ranks] = std::vector<int>(g.ranks.begin(), g.ranks.end());
  j["hosts"] = hosts_json(g.hosts);
  j[key::first] = where_json(d, g.first);
  return j;
}

ordered_json groups_json(const correlate::Diagnosis& d, const catalog::Catalog& cat,
                         const std::vector<correlate::Group>& groups) {
  ordered_json a = ordered_json::array();
  for (const auto& g : groups) {
    a.push_back(group_json(d, cat, g));
  }
  return a;
}

ordered_json signals_json(const correlate::Diagnosis& d, const catalog::Signature& sig, const correlate::Incident& inc) {
  ordered_json signals = ordered_json::array();
  for (const auto& s : inc.signals) {
    ordered_json sj;
    sj[key::id] = sig.signals[s.signal].id;
    sj["anchor"] = sig.signals[s.signal].anchor;
    sj[key::seen] = s.count > 0;
    sj[key::count] = s.count;
    sj[key::first] = s.first ? where_json(d, *s.first) : ordered_json(nullptr);
    signals.push_back(sj);
  }
  return signals;
}

namespace {

ordered_json frame_json(const context::Frame* f) {
  if (f == nullptr) {
    return nullptr;
  }
  ordered_json j;
  j["file"] = safe(f->file);
  j["line"] = f->line;
  j["function"] = f->function.empty() ? ordered_json(nullptr) : ordered_json(safe(f->function));
  j["code"] = f->code.empty() ? ordered_json(nullptr) : ordered_json(safe(f->code));
  return j;
}

// Exceptions of a chain (in the incident's own file): text, file, line, and
// how the next one follows it when `with_link`.
ordered_json chained_json(const correlate::Diagnosis& d, const correlate::Incident& inc,
                          const std::vector<context::ChainedException>& chain, bool with_link) {
  ordered_json a = ordered_json::array();
  for (const auto& c : chain) {
    ordered_json cj;
    cj["text"] = safe(c.text);
    cj["file"] = safe(d.source_name(inc.first.source));
    cj["line"] = c.line_no;
    if (with_link) {
      cj["link"] = std::string(context::to_string(c.link));
    }
    a.push_back(cj);
  }
  return a;
}

} // namespace

ordered_json traceback_json(const correlate::Diagnosis& d, const correlate::Incident& inc) {
  if (!inc.traceback) {
    return nullptr;
  }
  const auto& tb = *inc.traceback;
  ordered_json j;
  j["frame_count"] = tb.frame_count;
  ordered_json frames = ordered_json::array();
  for (const auto& f : tb.frames) {
    frames.push_back(frame_json(&f));
  }
  j["frames"] = frames;
  j["raising"] = frame_json(tb.raising());
  j["user_frame"] = frame_json(tb.user_frame());
  j["chain"] = chained_json(d, inc, tb.chain, true);
  return j;
}

ordered_json later_json(const correlate::Diagnosis& d, const correlate::Incident& inc) {
  return chained_json(d, inc, inc.later, false);
}

ordered_json said_above_json(const correlate::Diagnosis& d, const correlate::Incident& inc) {
  if (!inc.said_above) {
    return nullptr;
  }
  return ordered_json({{"file", safe(d.source_name(inc.said_above->source))},
                       {"line", inc.said_above->line_no},
                       {"text", safe(inc.said_above->text)}});
}

void put_incident_head(ordered_json& j, const correlate::Diagnosis& d, const catalog::Catalog& cat,
                       const correlate::Incident& inc) {
  const auto& sig = cat.at(inc.signature);
  j[key::signature] = sig.id;
  j["title"] = sig.title;
  j["headline"] = inc.headline.empty() ? ordered_json(nullptr) : ordered_json(safe(inc.headline));
  j["area"] = sig.area;
  j["severity"] = std::string(catalog::to_string(sig.severity));
  j["priority"] = sig.priority;
  j["initiating"] = inc.initiating;
  j["rule"] = inc.decision ? ordered_json(correlate::describe(*inc.decision, d)) : ordered_json(nullptr);
  j["rule_id"] = inc.decision ? ordered_json(std::string(correlate::to_string(inc.decision->rule))) : ordered_json(nullptr);
  j["confidence"] = inc.initiating ? ordered_json(std::string(correlate::to_string(inc.confidence))) : ordered_json(nullptr);
}

void put_incident_reach(ordered_json& j, const correlate::Diagnosis& d, const correlate::Incident& inc) {
  j["where"] = where_json(d, inc.first);
  j[key::count] = inc.count;
  j[key::ranks] = std::vector<int>(inc.ranks.begin(), inc.ranks.end());
  j["hosts"] = hosts_json(inc.hosts);
  j["pci"] = inc.pci.empty() ? ordered_json(nullptr) : ordered_json(inc.pci);
}

void put_diagnostic(ordered_json& j, const Diagnostic& dg) {
  j["level"] = dg.level == Level::error ? "error" : "warning";
  j["kind"] = std::string(to_string(dg.error.kind));
  j["where"] = safe(dg.error.where);
  j["message"] = safe(dg.error.what);
}

} // namespace denpex::report::detail
