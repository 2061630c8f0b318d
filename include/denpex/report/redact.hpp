// denpex::report — --redact: masks what a shared report should not leak.
//
// Two layers, one table. A Redaction learns every host name the diagnosis
// names (in any field: lines, incidents, identity links, sources), then
//  1. rewrites every log-derived string of the Diagnosis (apply), so the
//     printers see masked data, and
//  2. rewrites the bytes of each printed report once more (output), so a
//     field a printer shows that step 1 does not know about still leaks
//     nothing (issue 32: JSON's identity links and HTML leaked hosts).
// The same host is the same <host-N> in every format and in `grep`.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <denpex/correlate/correlate.hpp>

namespace denpex::report {

class Redaction {
public:
  Redaction() = default;
  // Learns every host name `d` holds.
  explicit Redaction(const correlate::Diagnosis& d);

  // Adds a host name to the table (ignored when empty or already a token).
  void learn_host(std::string_view host);
  // Learns the host names a line spells out where no field names them
  // (c10d's "[host]:port", cloud-internal FQDNs, NCCL's "host:pid:tid [d]").
  void learn_from_text(std::string_view line);

  // Masks, in one string: secrets -> <secret> (Hugging Face, GitHub, AWS,
  // Slack, OpenAI-style tokens, bearer/"token=" values, long hex or base64
  // runs), e-mail addresses -> <email>, IPv4 and IPv6 addresses -> <ip>,
  // user home directories (/home/NAME/, /Users/NAME/) -> /home/<user>/, and
  // every learned host -> <host-N> (numbered in the order learned).
  std::string text(std::string s) const;

  // Rewrites every log-derived string of `d` (lines, file names, hosts,
  // identity links, captures, tracebacks). Ids, titles and advice are kept.
  void apply(correlate::Diagnosis& d) const;

  // The last pass over a report printed in `format` ("html" spells the
  // tokens as &lt;host-1&gt; so they show as text; every other format as
  // <host-1>). Idempotent: a masked report passes through unchanged.
  std::string output(std::string_view format, std::string printed) const;

private:
  std::map<std::string, std::string, std::less<>> m_hosts;
};

// Learns and applies in one step (the form `denpex diagnose --redact` uses
// before printing); returns the table for the output pass.
Redaction redact(correlate::Diagnosis& d);

// The same masking for one string, with an empty host table (tests).
std::string redact_text(const std::string& s);

} // namespace denpex::report
