// denpex::util — errors that are expected to happen.
//
// An operation that can fail in a way the user should hear about (an
// unreadable file, bad JSON, a regex RE2 rejects) returns Expected<T>. Bugs are
// DENPEX_ASSERTs; bad data that must not stop the run goes to a Diagnostics
// sink (diagnostics.hpp). Exceptions never cross a module boundary.
#pragma once

#include <cassert>
#include <string>
#include <utility>

#include <tl/expected.hpp>

#define DENPEX_ASSERT(cond) assert(cond)

namespace denpex {

enum class ErrorKind {
  io,       // open/read failed
  format,   // input is not what it claims (corrupt archive, bad JSON)
  invalid,  // well-formed but semantically wrong (bad field value, bad regex)
  usage,    // the command line asked for something impossible
};

// One error: `where` names the file (plus a JSON Pointer or line where known),
// `what` says what is wrong, `help` optionally says what to do about it.
struct Error {
  ErrorKind kind = ErrorKind::invalid;
  std::string where;
  std::string what;
  std::string help;
};

template <typename T> using Expected = tl::expected<T, Error>;

inline tl::unexpected<Error> make_error(ErrorKind kind, std::string where, std::string what,
                                        std::string help = {}) {
  return tl::unexpected<Error>(Error{kind, std::move(where), std::move(what), std::move(help)});
}

} // namespace denpex
