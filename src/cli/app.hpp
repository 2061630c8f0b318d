// What the subcommands share: their arguments as parsed (options.cpp), the
// catalog and matcher as every command builds them (common.cpp), and the
// one way a command ends: an exit status, or the Error that stopped it.
//
// A command never prints an error itself. Problems that must not stop the
// run go to its Diagnostics; the one that does stop it is returned; main()
// logs both (log.cpp) and turns them into the exit status (exit_code.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <denpex/catalog/catalog.hpp>
#include <denpex/context/formats.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/source/input.hpp>
#include <denpex/util/diagnostics.hpp>
#include <denpex/util/expected.hpp>

#include "exit_code.hpp"

namespace denpex::cli {


inline tl::unexpected<Error> usage_error(std::string where, std::string what, std::string help = {}) {
  return make_error(ErrorKind::usage, std::move(where), std::move(what), std::move(help));
}

struct CommonArgs {
  std::vector<std::string> signature_dirs;
  bool no_builtin = false;
  bool strict = false;
  bool no_config = false;
  std::string color = "auto";
  bool quiet = false;
  bool verbose = false; // -v (diagnose, grep): info lines on stderr (log.hpp)
  bool no_prefilter = false;
  std::size_t chunk_size = 0; // hidden test seam: reader buffer in bytes (0 = 1 MiB)
};

// Which files a directory walk reads, and the line formats (add_walk_options).
struct WalkArgs {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::vector<std::string> formats;
};

struct DiagnoseArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string fail_on = "error";
  std::vector<std::string> ignore;
  unsigned jobs = 0;
  int year = 0;
  double clock_skew_s = 1.0; // --clock-skew: nodes' clocks agree within this
  bool follow = false;
  int follow_idle = 30;
  bool redact = false;
  std::uint64_t max_input_gib = 64;
  WalkArgs walk;
  std::string node;
  std::vector<std::string> outputs; // FORMAT=PATH
  bool no_timeline = false;
  bool brief = false; // the verdict line alone
  bool full = false;  // every row of long tables
};

struct GrepArgs {
  std::vector<std::string> paths;
  std::vector<std::string> signature;
  std::vector<std::string> area;
  std::string role;
  bool count = false;
  bool json = false;
  bool redact = false;
  WalkArgs walk;
};

struct LspArgs {
  std::vector<std::string> formats; // --formats DIR
};

struct SignaturesArgs {
  std::string action;
  std::vector<std::string> ids;
  std::string format = "patterns";
  std::string area;
  std::string role;
  bool stats = false;
};

// The subcommands (diagnose.cpp, grep.cpp, catalog_cmds.cpp, lsp.cpp).
Status run_diagnose(const CommonArgs& common, const DiagnoseArgs& args, Diagnostics& diags);
Status run_grep(const CommonArgs& common, const GrepArgs& args, Diagnostics& diags);
Status run_explain(const CommonArgs& common, const std::string& query, Diagnostics& diags);
Status run_signatures(const CommonArgs& common, const SignaturesArgs& args, Diagnostics& diags);
// `denpex lsp` (lsp.cpp): a Language Server on stdin/stdout until the client says exit.
Status run_lsp(const CommonArgs& common, const LspArgs& args, Diagnostics& diags);

// --- common.cpp -------------------------------------------------------------

// Milliseconds since main() began (for -v's start-up and phase timings).
void mark_start();
double ms_since_start();

// The built-in catalog and --signatures DIRs; problems in a team's files go to
// `diags` and the rest still load, except under --strict. `examples`: false
// for diagnose and grep, which never show them.
Expected<catalog::Catalog> load_catalog(const CommonArgs& common, Diagnostics& diags, bool examples);

// The matcher as every command builds it: the Hyperscan prefilter with the
// built-in patterns prebuilt (unless --no-prefilter), RE2 behind it. Logs
// which path runs and how long start-up took (-v).
Expected<matcher::Matcher> compile_matcher(const catalog::Catalog& cat, matcher::MatcherOptions mo,
                                           const CommonArgs& common);

// What a directory walk reads (--include, --exclude).
source::InputOptions input_options(const WalkArgs& walk);

// The built-in line formats plus --formats DIRs (docs/formats.md).
context::FormatSet load_formats(const std::vector<std::string>& dirs, Diagnostics& diags);

// --color: always, never, or auto (a terminal, and neither NO_COLOR nor TERM=dumb).
bool use_color(const std::string& mode, int fd);
// Prose is wrapped to the terminal: $COLUMNS, else the tty's width, else 100.
std::size_t text_width();
// The paths given, or "-" (stdin) for none.
std::vector<std::string> paths_or_stdin(std::vector<std::string> paths);

// .denpex.json, found from the current directory upward: a team's defaults.
//   {"signatures": ["dir", ...], "ignore": ["id", ...], "fail_on": "warning"}
// Relative signature directories are relative to the file. Empty (no path)
// when there is none.
struct ConfigFile {
  std::string path;
  std::vector<std::string> signatures;
  std::vector<std::string> ignore;
  std::string fail_on;
};
Expected<ConfigFile> load_config();

} // namespace denpex::cli
