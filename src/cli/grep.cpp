// `denpex grep`: every matched line with its signature, rank and time.
#include <algorithm>
#include <functional>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include <denpex/report/formats.hpp>
#include <denpex/report/redact.hpp>
#include <denpex/scan/scan.hpp>
#include <denpex/source/input.hpp>
#include <denpex/util/strings.hpp>

#include "app.hpp"
#include "exit_code.hpp"

namespace denpex::cli {

namespace {

std::optional<Error> pattern_mistaken_for_path(const catalog::Catalog& cat, const std::vector<std::string>& paths) {
  if (paths.empty() || paths.front() == "-") {
    return std::nullopt;
  }
  const auto& word = paths.front();
  std::error_code ec;
  if (std::filesystem::exists(word, ec)) {
    return std::nullopt;
  }
  const auto& areas = catalog::known_areas();
  const bool area = std::find(areas.begin(), areas.end(), word) != areas.end();
  const bool id = std::any_of(cat.entries().begin(), cat.entries().end(), [&](const catalog::Signature& s) {
    return s.id == word || util::starts_with(s.id, word + ".");
  });
  if (!area && !id) {
    return std::nullopt;
  }
  return Error{ErrorKind::usage, word,
               "not a file: denpex grep takes no pattern (it matches the catalog's signatures)",
               area ? "to keep only this area's entries: denpex grep --area " + word + " PATH..."
                    : "to keep only these entries: denpex grep --signature " + word + " PATH..."};
}

// The entries --signature (an id or a prefix of ids), --area and --role
// leave in the matcher.
std::function<bool(const catalog::Signature&)> selection(const GrepArgs& args, std::optional<catalog::Role> role) {
  return [&args, role](const catalog::Signature& s) {
    if (!args.signature.empty() && std::none_of(args.signature.begin(), args.signature.end(), [&](const std::string& p) {
          return s.id == p || util::starts_with(s.id, p + ".");
        })) {
      return false;
    }
    if (!args.area.empty() && std::find(args.area.begin(), args.area.end(), s.area) == args.area.end()) {
      return false;
    }
    return !role || s.role == *role;
  };
}

} // namespace

Status run_grep(const CommonArgs& common, const GrepArgs& args, Diagnostics& diags) {
  std::optional<catalog::Role> role;
  if (!args.role.empty()) {
    role = catalog::parse_role(args.role);
    if (!role) {
      return usage_error("--role", "'" + args.role + "' is not one of cause, symptom, context");
    }
  }
  TRY_ASSIGN(auto cat, load_catalog(common, diags, false));
  // `denpex grep xid logs/`: grep's habit of a pattern first. A first path
  // that does not exist but names entries is taken for one, and said so.
  if (auto hint = pattern_mistaken_for_path(cat, args.paths)) {
    return tl::unexpected(*hint);
  }
  matcher::MatcherOptions mo;
  mo.include = selection(args, role);
  TRY_ASSIGN(auto m, compile_matcher(cat, mo, common));
  auto opener = source::make_filesystem_opener(input_options(args.walk));
  const auto formats = load_formats(args.walk.formats, diags);
  scan::ScanOptions so;
  so.formats = &formats;
  so.jobs = 1;
  if (common.chunk_size != 0) {
    so.reader.buffer_size = common.chunk_size;
  }
  so.error_samples = 0; // grep reports matches only: no starting points to sample
  std::uint64_t matched = 0;
  std::map<std::string, std::uint64_t> counts;
  report::Redaction redaction;
  constexpr std::size_t k_redact_buffer = 256u << 20;
  std::vector<std::string> held;
  std::size_t held_bytes = 0;
  bool warned = false;
  const auto flush_held = [&] {
    for (const auto& l : held) {
      std::cout << redaction.output(args.json ? "json" : "text", l);
    }
    held.clear();
  };
  auto on_hit = [&](const scan::Hit& hit, const scan::SourceRef& src) {
    ++matched;
    const auto& sig = cat.at(hit.signature);
    if (common.quiet) {
      return;
    }
    if (args.count) {
      ++counts[sig.id];
      return;
    }
    if (!args.redact) {
      args.json ? report::print_grep_json(std::cout, hit, src, sig) : report::print_grep_line(std::cout, hit, src, sig);
      return;
    }
    // --redact: the hosts learned so far keep their <host-N> for the rest of
    // the output; the whole printed line is masked, file name included.
    if (hit.ctx.host) {
      redaction.learn_host(hit.ctx.host->value);
    }
    redaction.learn_from_text(hit.text);
    for (const auto& [name, value] : hit.captures) {
      if (name == "host") {
        redaction.learn_host(value);
      }
    }
    std::ostringstream line;
    args.json ? report::print_grep_json(line, hit, src, sig) : report::print_grep_line(line, hit, src, sig);
    // A host may first be named by a later line (pdsh's "-w a,b" before any
    // line of host a): lines are held and masked with the whole table at
    // the end, up to k_redact_buffer bytes; past that they are masked as
    // they come, and stderr says so.
    if (held_bytes < k_redact_buffer) {
      held_bytes += line.str().size();
      held.push_back(line.str());
      return;
    }
    if (!warned) {
      warned = true;
      diags.warning(Error{ErrorKind::usage, "--redact", "more than 256 MiB of matched lines: the rest are masked as they come, so a host first "
                                "named after this point may show on lines printed before it was learned", {}});
      flush_held();
    }
    std::cout << redaction.output(args.json ? "json" : "text", line.str());
  };
  scan::run(*opener, paths_or_stdin(args.paths), m, so, diags, on_hit);
  flush_held();
  for (const auto& [id, n] : counts) {
    std::cout << n << " " << id << "\n";
  }
  std::cout.flush();
  if (common.quiet && matched > 0) {
    return Outcome::answered(k_exit_ok); // grep -q: a match answers the question, whatever else went wrong
  }
  return matched > 0 ? k_exit_ok : k_exit_found;
}

} // namespace denpex::cli
