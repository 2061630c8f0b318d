// denpex::util — errors that are expected to happen.
//
// An operation that can fail in a way the user should hear about (an
// unreadable file, bad JSON, a regex RE2 rejects, a bad option) returns
// Expected<T>; the command line prints the Error in one place
// (src/cli/log.cpp) and exits 2. Bad data that must not stop the run goes to
// a Diagnostics sink (diagnostics.hpp). Bugs are DENPEX_ASSERTs: always on,
// also in release builds, because a broken invariant must not print a
// confident wrong diagnosis. Exceptions never cross a module boundary.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

#define DENPEX_ASSERT(cond) ((cond) ? static_cast<void>(0) : ::denpex::assert_failed(#cond, __FILE__, __LINE__))

// Error propagation (ccache's pattern), in a function that returns some
// Expected<U>:
//   TRY(write_all(out));                     // returns its error, if any
//   TRY_ASSIGN(auto cat, load_catalog(...)); // ... else declares the value
// The value is moved out of the Expected; `decl` may be any declaration or
// an existing variable.
#define TRY(expr)                                                                                                      \
  do {                                                                                                                 \
    auto denpex_try_result_ = (expr);                                                                                  \
    if (!denpex_try_result_) {                                                                                         \
      return tl::unexpected<::denpex::Error>(std::move(denpex_try_result_).error());                                   \
    }                                                                                                                  \
  } while (false)
#define TRY_ASSIGN(decl, expr) DENPEX_TRY_ASSIGN_(DENPEX_TRY_CONCAT_(denpex_try_, __LINE__), decl, expr)
#define DENPEX_TRY_CONCAT2_(a, b) a##b
#define DENPEX_TRY_CONCAT_(a, b) DENPEX_TRY_CONCAT2_(a, b)
#define DENPEX_TRY_ASSIGN_(tmp, decl, expr)                                                                            \
  auto tmp = (expr);                                                                                                   \
  if (!tmp) {                                                                                                          \
    return tl::unexpected<::denpex::Error>(std::move(tmp).error());                                                    \
  }                                                                                                                    \
  decl = std::move(*tmp)

namespace denpex {

// Prints "denpex: internal error: FILE:LINE: COND does not hold" and aborts.
[[noreturn]] void assert_failed(const char* cond, const char* file, int line);

enum class ErrorKind {
  io,       // open/read failed
  format,   // input is not what it claims (corrupt archive, bad JSON)
  invalid,  // well-formed but semantically wrong (bad field value, bad regex)
  usage,    // the command line asked for something impossible
};

// "io", "format", "invalid", "usage": the `kind` of a diagnostic in JSON.
std::string_view to_string(ErrorKind kind);

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
