// denpex::report — --redact: masks what a shared report should not leak.
#pragma once

#include <string>

#include <denpex/correlate/correlate.hpp>

namespace denpex::report {

// Rewrites, in every log-derived string of `d` (lines, file names, hosts):
// IPv4 and IPv6 addresses -> <ip>, every host name the logs mention ->
// <host-N> (stable numbering, so ranks on the same node still line up),
// e-mail addresses -> <email>, and secrets -> <secret> (Hugging Face, GitHub,
// AWS, Slack, OpenAI-style tokens, bearer/"token=" values, long hex or
// base64 strings). The signature ids, titles and advice are untouched.
void redact(correlate::Diagnosis& d);

// The same masking for one string, with a fixed host table (tests).
std::string redact_text(const std::string& s);

} // namespace denpex::report
