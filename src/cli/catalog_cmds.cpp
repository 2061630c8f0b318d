// `denpex explain` and `denpex signatures`: the catalog, for people and for
// the catalog's own tests.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <unistd.h>

#include <denpex/report/report.hpp>
#include <denpex/selftest/selftest.hpp>
#include <denpex/util/strings.hpp>

#include "app.hpp"
#include "catalog_doc.hpp"
#include "exit_code.hpp"

namespace denpex::cli {

namespace {

// The entries a query names: an exact id; else ids starting with it; else
// entries whose title, cause or examples contain it.
std::vector<std::size_t> find_entries(const catalog::Catalog& cat, std::string q) {
  if (util::starts_with(util::to_lower(q), "xid-") || util::starts_with(util::to_lower(q), "xid ")) {
    q = "xid." + q.substr(4);
  }
  if (auto exact = cat.find(q)) {
    return {*exact};
  }
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < cat.size(); ++i) {
    if (util::starts_with(cat.at(i).id, q)) {
      found.push_back(i);
    }
  }
  if (!found.empty()) {
    return found;
  }
  for (std::size_t i = 0; i < cat.size(); ++i) {
    const auto& s = cat.at(i);
    const bool hit = util::contains_icase(s.title, q) || util::contains_icase(s.root_cause, q) ||
                     std::any_of(s.match_examples.begin(), s.match_examples.end(),
                                 [&](const auto& ex) { return util::contains_icase(ex.line, q); });
    if (hit) {
      found.push_back(i);
    }
  }
  return found;
}

// The entries `ids` names (all of them when it names none).
std::vector<const catalog::Signature*> selected(const catalog::Catalog& cat, const std::vector<std::string>& ids) {
  std::vector<const catalog::Signature*> out;
  for (const auto& s : cat.entries()) {
    if (ids.empty() || std::find(ids.begin(), ids.end(), s.id) != ids.end()) {
      out.push_back(&s);
    }
  }
  return out;
}

Status export_catalog(const catalog::Catalog& cat, const SignaturesArgs& args) {
  const auto& format = args.format;
  if (format == "patterns") {
    for (const auto* s : selected(cat, args.ids)) {
      for (const auto& sg : s->signals) {
        std::cout << sg.pattern << "\n";
      }
    }
  } else if (format == "markdown") {
    if (!args.ids.empty()) {
      return usage_error("--format markdown", "exports the whole catalog (docs/signatures.md); it takes no ids");
    }
    print_catalog_markdown(std::cout, cat);
  } else if (format == "ids") {
    for (const auto* s : selected(cat, args.ids)) {
      std::cout << s->id << "\n";
    }
  } else {
    return usage_error("--format", "'" + format + "' is not one of patterns, ids, markdown");
  }
  return k_exit_ok;
}

// `test` runs every example; `lint` finds what makes an entry wrong or weak.
// Failures are errors (exit 2), the rest warnings.
Status check_catalog(const CommonArgs& common, const SignaturesArgs& args, const catalog::Catalog& cat,
                     Diagnostics& diags) {
  TRY_ASSIGN(auto m, compile_matcher(cat, {}, common));
  const bool test = args.action == "test";
  const auto rep = test ? selftest::test_examples(cat, m, args.ids) : selftest::lint(cat, m);
  for (const auto& f : rep.failures) {
    diags.error(Error{ErrorKind::invalid, f.where, f.what});
  }
  for (const auto& f : rep.warnings) {
    diags.warning(Error{ErrorKind::invalid, f.where, f.what});
  }
  if (!common.quiet) {
    std::cout << fmt::format("{}: {} entries, {} examples, {} failures, {} warnings\n", args.action, rep.entries,
                             rep.examples, rep.failures.size(), rep.warnings.size());
  }
  return k_exit_ok;
}

} // namespace

Status run_explain(const CommonArgs& common, const std::string& query, Diagnostics& diags) {
  TRY_ASSIGN(auto cat, load_catalog(common, diags, true));
  const auto found = find_entries(cat, query);
  if (found.empty()) {
    return make_error(ErrorKind::usage, "", "no signature matches '" + query + "'",
                      "`denpex signatures list` shows every id");
  }
  report::TextOptions to;
  to.color = use_color(common.color, STDOUT_FILENO);
  to.width = text_width();
  if (found.size() == 1) {
    report::print_entry(std::cout, cat.at(found[0]), cat, to);
    return k_exit_ok;
  }
  std::cout << found.size() << " signatures match '" << util::escape_for_terminal(query) << "':\n";
  for (auto i : found) {
    std::cout << fmt::format("  {:<48} {}\n", cat.at(i).id, cat.at(i).title);
  }
  return k_exit_ok;
}

Status run_signatures(const CommonArgs& common, const SignaturesArgs& args, Diagnostics& diags) {
  const auto& areas = catalog::known_areas();
  if (!args.area.empty() && std::find(areas.begin(), areas.end(), args.area) == areas.end()) {
    std::string valid;
    for (const auto a : areas) {
      valid += (valid.empty() ? "" : ", ") + std::string(a);
    }
    return usage_error("--area", "'" + args.area + "' is not an area; one of " + valid);
  }
  TRY_ASSIGN(auto cat, load_catalog(common, diags, true));
  // An id that names no entry is an error, not an empty answer (`signatures
  // test nosuch` once tested 0 entries and exited 0).
  for (const auto& id : args.ids) {
    if (!cat.find(id)) {
      return make_error(ErrorKind::usage, id, "no such signature", "`denpex signatures list` shows every id");
    }
  }
  if (args.action == "list" && args.stats) {
    print_catalog_stats(std::cout, cat);
    return k_exit_ok;
  }
  if (args.action == "list") {
    for (const auto& s : cat.entries()) {
      if ((!args.area.empty() && s.area != args.area) ||
          (!args.role.empty() && catalog::to_string(s.role) != args.role)) {
        continue;
      }
      std::cout << fmt::format("{:<52} {:<9} {:<8} {:<8} {}\n", s.id, s.area, catalog::to_string(s.role),
                               catalog::to_string(s.severity), s.title);
    }
    return k_exit_ok;
  }
  if (args.action == "show") {
    for (const auto& id : args.ids) {
      report::print_entry(std::cout, cat.at(*cat.find(id)), cat, report::TextOptions{});
    }
    return k_exit_ok;
  }
  if (args.action == "test" || args.action == "lint") {
    return check_catalog(common, args, cat, diags);
  }
  DENPEX_ASSERT(args.action == "export"); // CLI11 checked the action
  return export_catalog(cat, args);
}

} // namespace denpex::cli
