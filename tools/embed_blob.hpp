// Build-time tools (tools/prefilter, tools/catalog): write a byte blob as C++
// source defining `FUNCTION()` that returns it as a std::string_view.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

namespace denpex::tools {

// Writes `path`: `comment` (each line already starting with "// "), the
// include, the bytes (8-byte aligned) and the function. False if the file
// could not be written.
inline bool write_blob_source(const std::string& path, std::string_view comment, std::string_view include,
                              std::string_view function, std::string_view blob) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << comment << "#include <" << include << ">\n\n"
      << "namespace {\nalignas(8) const unsigned char k_blob[] = {";
  char buf[8];
  for (std::size_t k = 0; k < blob.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%s%u,", k % 24 == 0 ? "\n" : "", static_cast<unsigned char>(blob[k]));
    out << buf;
  }
  out << "0};\n} // namespace\n\n"
      << "std::string_view " << function << "() {\n"
      << "  return {reinterpret_cast<const char*>(k_blob), " << blob.size() << "};\n}\n";
  out.close();
  return static_cast<bool>(out);
}

} // namespace denpex::tools
