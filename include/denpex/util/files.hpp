// denpex::util — reading a directory of data files (signature entries, line
// formats) the same way everywhere.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <denpex/util/diagnostics.hpp>

namespace denpex::util {

// Every *.json under `dir` (recursively, sorted by path) as (path, text).
// `what` names the files in errors ("signature files"): a path that is not a
// directory, a listing or a read that fails is reported to `diags` and the
// rest are still read.
std::vector<std::pair<std::string, std::string>> read_json_directory(const std::string& dir, std::string_view what,
                                                                     Diagnostics& diags);

} // namespace denpex::util
