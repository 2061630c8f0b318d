// denpex::catalog — loads, validates and indexes signature entries.
//
// Entries come from the catalog embedded at build time (signatures/ of the
// source tree) and from directories given with --signatures. Every problem is
// reported with the file and a JSON Pointer, e.g.
//   signatures/nccl/x.json: /signals/0/pattern: invalid regex: missing )
// and loading goes on so that all problems are reported at once. A bad entry
// is left out; the rest of the catalog still loads.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <denpex/catalog/signature.hpp>
#include <denpex/util/diagnostics.hpp>

namespace denpex::catalog {

// A JSON file's text with the name to report it under.
struct CatalogFile {
  std::string name;
  std::string text;
  bool builtin = false;
};

class Catalog {
public:
  Catalog() = default;

  [[nodiscard]] const std::vector<Signature>& entries() const { return m_entries; }
  [[nodiscard]] std::size_t size() const { return m_entries.size(); }
  [[nodiscard]] const Signature& at(std::size_t i) const {
    DENPEX_ASSERT(i < m_entries.size());
    return m_entries[i];
  }
  // Index of the entry with this id, or nullopt.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view id) const;
  // True if cause `cause` lists symptom `symptom` in `explains`.
  [[nodiscard]] bool explains(std::size_t cause, std::size_t symptom) const;
  // True if context entry `ctx` lists `cause` in `refines`.
  [[nodiscard]] bool refines(std::size_t ctx, std::size_t cause) const;

  // Adds an entry; returns false (and reports) on a duplicate id.
  bool add(Signature sig, Diagnostics& diags);
  // Checks cross-references (explains/refines/related name known ids) and
  // builds the relation index. Entries with broken references are reported.
  void finalize(Diagnostics& diags);

private:
  std::vector<Signature> m_entries;
  std::unordered_map<std::string, std::size_t> m_index;
  std::vector<std::vector<std::size_t>> m_explains; // per entry: sorted explained ids
  std::vector<std::vector<std::size_t>> m_refines;
};

// Parses one entry. Problems go to `diags` (all of them); returns nullopt if
// the entry is unusable.
// `with_examples` false leaves a built-in entry's examples out (they are only
// for `signatures test`, `explain` and the docs); other files are always
// read whole.
std::optional<Signature> parse_signature(const CatalogFile& file, Diagnostics& diags, bool with_examples = true);

// The catalog files embedded in the binary at build time.
std::vector<CatalogFile> builtin_files();

// Reads every *.json under `dir` (recursively, sorted). I/O errors go to diags.
std::vector<CatalogFile> read_directory(const std::string& dir, Diagnostics& diags);

struct LoadOptions {
  bool builtin = true;
  std::vector<std::string> dirs;
  bool examples = true; // false: built-in entries without their examples (parse_signature)
  // The built-in entries serialized at build time (serialize.hpp:
  // builtin_catalog_blob()): read instead of parsing the embedded JSON.
  // Empty, or a blob that does not read: the JSON is parsed.
  std::string_view prebuilt;
};

// Loads the built-in catalog (unless disabled) plus `dirs`, validates and
// finalizes it.
Catalog load_catalog(const LoadOptions& options, Diagnostics& diags);

// The catalog's own version (from signatures/VERSION at build time).
std::string_view builtin_version();

} // namespace denpex::catalog
