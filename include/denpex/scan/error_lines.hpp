// denpex::scan — the error-line sampler's patterns: what an error-looking
// line is when no entry names it (the starting points a diagnosis with no
// incident offers; the correlator's pass starting_points). Header-only, so that the
// build-time prefilter tool (tools/prefilter/make_blob.cpp) compiles them
// into the built-in pattern database without linking the scanner: pass them
// as MatcherOptions::extra_patterns and the sampler costs no second pass.
#pragma once

#include <string>
#include <vector>

namespace denpex::scan {

inline const std::vector<std::string>& error_line_patterns() {
  static const std::vector<std::string> k_patterns = {
      R"(\b[A-Z]\w*(?:Error|Exception)\b: )",
      R"(\b(?:FATAL|CRITICAL|ERROR)\b)",
      R"(\b(?:Fatal error|Segmentation fault|core dumped|Aborted)\b)",
      R"(NCCL WARN)",
      R"((?:^|\]:|\[)E\d{3,4} \d\d:\d\d:\d\d)",
      R"(\berror: )",
      // absl::Status codes that mean failure (XLA, JAX, TensorFlow, gRPC):
      // "INTERNAL: ... NCCL operation ... failed", "RESOURCE_EXHAUSTED: ...".
      // Not OUT_OF_RANGE or CANCELLED: tf.data ends every epoch with them.
      R"((?:^|: )(?:INTERNAL|UNKNOWN|RESOURCE_EXHAUSTED|UNAVAILABLE|FAILED_PRECONDITION|DEADLINE_EXCEEDED|ABORTED|DATA_LOSS|INVALID_ARGUMENT|PERMISSION_DENIED|UNIMPLEMENTED): \S)",
  };
  return k_patterns;
}

} // namespace denpex::scan
