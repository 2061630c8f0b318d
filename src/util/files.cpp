#include <denpex/util/files.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace denpex::util {

std::vector<std::pair<std::string, std::string>> read_json_directory(const std::string& dir, std::string_view what,
                                                                     Diagnostics& diags) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    diags.error(Error{ErrorKind::io, dir, "not a directory of " + std::string(what)});
    return files;
  }
  std::vector<std::string> paths;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".json") {
      paths.push_back(it->path().string());
    }
  }
  if (ec) {
    diags.error(Error{ErrorKind::io, dir, "cannot list directory: " + ec.message()});
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
      diags.error(Error{ErrorKind::io, p, "cannot read file"});
      continue;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    files.emplace_back(p, ss.str());
  }
  return files;
}

} // namespace denpex::util
