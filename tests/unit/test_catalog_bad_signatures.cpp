// Golden tests for catalog load errors (lnav's test/bad-config): each
// directory under testdata/bad-signatures/ holds one or more bad entries and
// the diagnostics the loader must print for them, in expected.stderr.
//
// The fixture path is made relative to testdata/ so the files do not depend
// on where the tree is checked out. DENPEX_UPDATE_GOLDEN=1 rewrites
// expected.stderr; review the diff.
#include <catch2/catch.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/util/diagnostics.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string k_testdata = std::string(DENPEX_SOURCE_DIR) + "/testdata/";

std::vector<std::string> fixture_dirs() {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(k_testdata + "bad-signatures", ec)) {
    if (e.is_directory()) {
      dirs.push_back(e.path().filename().string());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST_CASE("catalog::load_catalog: bad-signature fixtures match expected.stderr", "[catalog][golden]") {
  const auto dirs = fixture_dirs();
  // A glob that finds nothing must fail, not pass (style guide §7).
  REQUIRE(dirs.size() >= 7);
  const bool update = std::getenv("DENPEX_UPDATE_GOLDEN") != nullptr &&
                      std::string(std::getenv("DENPEX_UPDATE_GOLDEN")) == "1";
  for (const auto& name : dirs) {
    DYNAMIC_SECTION(name) {
      const fs::path dir = k_testdata + "bad-signatures/" + name;
      denpex::Diagnostics diags;
      const auto catalog =
          denpex::catalog::load_catalog(denpex::catalog::LoadOptions{false, {dir.string()}}, diags);
      std::string got;
      for (const auto& d : diags.items()) {
        got += replace_all(denpex::format_diagnostic(d), k_testdata, "");
        got += '\n';
      }
      const fs::path golden = dir / "expected.stderr";
      if (update) {
        std::ofstream(golden, std::ios::binary) << got;
      }
      REQUIRE(fs::exists(golden));
      CHECK(got == read_file(golden));

      // Every fixture is rejected, each error names its file (under this
      // fixture) and, except for unparsable JSON, a JSON Pointer.
      CHECK(diags.has_errors());
      for (const auto& d : diags.items()) {
        const auto where = replace_all(d.error.where, k_testdata, "");
        INFO(where);
        CHECK_THAT(where, Catch::StartsWith("bad-signatures/" + name + "/"));
        if (name != "malformed-json") {
          CHECK_THAT(where, Catch::Contains(".json: /"));
        }
      }
      // A bad entry is left out; an entry with only a broken reference stays.
      for (const auto& sig : catalog.entries()) {
        CHECK(sig.explains.empty());
      }
    }
  }
}
