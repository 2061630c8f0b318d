// denpex::catalog — the built-in catalog in a compact binary form, written
// at build time (tools/catalog/make_catalog_blob.cpp) and read at start-up,
// so that denpex does not parse and validate 1.2 MB of JSON on every run.
// The JSON files stay the source of truth: the build validates them (a bad
// entry fails the build) and serializes what the loader made of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <denpex/catalog/signature.hpp>

namespace denpex::catalog {

// Every field of every entry (compiled patterns excepted: the matcher
// compiles those), little-endian, length-prefixed, behind a version header.
std::string serialize(const std::vector<Signature>& entries);

// The entries back, or nullopt for a blob of another version or a damaged
// one. `examples` false leaves the examples out (diagnose and grep never
// show them). With `details_at`, each entry's details (the prose only a
// report shows: root cause, fix, verify, prevention, affected, references)
// are left out too, and where they start is stored there, one offset per
// entry, for read_details.
std::optional<std::vector<Signature>> deserialize(std::string_view blob, bool examples = true,
                                                  std::vector<std::uint32_t>* details_at = nullptr);

// Reads the details deferred by deserialize into `sig`; false if the blob
// does not hold them there.
bool read_details(std::string_view blob, std::uint32_t at, Signature& sig);

// The built-in catalog as serialized at build time; defined by the generated
// library denpex_builtin_catalog.
std::string_view builtin_catalog_blob();

} // namespace denpex::catalog
