// Private to the report module: the JSON objects that --format json and
// --format jsonl share (a location, a group of reports), so both formats
// describe a line the same way.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>

namespace denpex::report::detail {

using nlohmann::ordered_json;

// Log-derived text made valid UTF-8 (invalid bytes become U+FFFD).
std::string safe(std::string_view s);

// Where a line was seen: file, line, rank, host, GPU, pid, time (as printed,
// and as microseconds on its clock), where each field came from, the text.
ordered_json where_json(const correlate::Diagnosis& d, const correlate::Evidence& e);

ordered_json hosts_json(const std::set<std::string>& hosts);

// A problem reading inputs or the catalog: level, kind (io, format, invalid,
// usage), where, message.
void put_diagnostic(ordered_json& j, const Diagnostic& dg);

// The fields an incident opens with in both formats: signature, title,
// headline, area, severity, priority, initiating, rule, rule_id, confidence.
void put_incident_head(ordered_json& j, const correlate::Diagnosis& d, const catalog::Catalog& cat,
                       const correlate::Incident& inc);
// ... and where it was seen: where, count, ranks, hosts, pci.
void put_incident_reach(ordered_json& j, const correlate::Diagnosis& d, const correlate::Incident& inc);

// A group of reports of one signature: count, ranks, hosts, first line.
ordered_json group_json(const correlate::Diagnosis& d, const catalog::Catalog& cat, const correlate::Group& g);

ordered_json groups_json(const correlate::Diagnosis& d, const catalog::Catalog& cat,
                         const std::vector<correlate::Group>& groups);

// An incident's signals: id, anchor, seen, count, first line.
ordered_json signals_json(const correlate::Diagnosis& d, const catalog::Signature& sig, const correlate::Incident& inc);

// The traceback above an exception: frames, where it was raised, the
// innermost frame outside libraries, and the chain it ends (null without one).
ordered_json traceback_json(const correlate::Diagnosis& d, const correlate::Incident& inc);
// The exceptions raised from the incident's own (a direct-cause chain whose root it is).
ordered_json later_json(const correlate::Diagnosis& d, const correlate::Incident& inc);
// A first report's `said_above` line (file, line, text), or null.
ordered_json said_above_json(const correlate::Diagnosis& d, const correlate::Incident& inc);

} // namespace denpex::report::detail
