// `denpex completion bash|zsh`: shell completion scripts.
#pragma once

#include <string_view>

namespace denpex::cli {

// The script for `shell` ("bash" or "zsh"), or empty.
std::string_view completion_script(std::string_view shell);

} // namespace denpex::cli
