// denpex::catalog — loads, validates and indexes signature entries.
//
// Entries come from the catalog embedded at build time (signatures/ of the
// source tree) and from directories given with --signatures. Every problem is
// reported with the file and a JSON Pointer, e.g.
//   signatures/nccl/x.json: /signals/0/pattern: invalid regex: missing )
// and loading goes on so that all problems are reported at once. A bad entry
// is left out; the rest of the catalog still loads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
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

  // Every entry. In a catalog loaded with LoadOptions::details_on_demand, an
  // entry read here may lack its details (root cause, fix, verify,
  // prevention, affected, references) until at(i) has been called for it.
  [[nodiscard]] const std::vector<Signature>& entries() const { return m_entries; }
  [[nodiscard]] std::size_t size() const { return m_entries.size(); }
  // Entry i, whole: details deferred at load are read the first time it is
  // asked for (safe from several threads).
  [[nodiscard]] const Signature& at(std::size_t i) const {
    DENPEX_ASSERT(i < m_entries.size());
    if (m_deferred && i < m_deferred->at.size() && !m_deferred->loaded[i].load(std::memory_order_acquire)) {
      load_details(i);
    }
    return m_entries[i];
  }
  // The first `details_at.size()` entries came from `blob` without their
  // details, which start there at these offsets (serialize.hpp).
  void defer_details(std::string_view blob, std::vector<std::uint32_t> details_at);
  // Adds entries in order (add(), one by one); into an empty catalog, the
  // vector itself is taken, not its entries moved one at a time.
  void add_all(std::vector<Signature> entries, Diagnostics& diags);
  // How many entries' deferred details have been read (diagnose -v).
  [[nodiscard]] std::size_t details_loaded() const;
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
  void load_details(std::size_t i) const;

  struct Deferred {
    std::string_view blob;
    std::vector<std::uint32_t> at;
    std::unique_ptr<std::atomic<bool>[]> loaded;
    std::mutex mutex;
  };
  // mutable: an entry's deferred details are filled in by the const at().
  mutable std::vector<Signature> m_entries;
  std::unique_ptr<Deferred> m_deferred;
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
// How many there are (one entry each), without copying them.
std::size_t builtin_file_count();

// Reads every *.json under `dir` (recursively, sorted). I/O errors go to diags.
std::vector<CatalogFile> read_directory(const std::string& dir, Diagnostics& diags);

struct LoadOptions {
  bool builtin = true;
  std::vector<std::string> dirs;
  bool examples = true; // false: built-in entries without their examples (parse_signature)
  // Built-in entries read from `prebuilt` get their details (Catalog::at)
  // only when first asked for: a run reads the prose of the entries its
  // report shows, not of all 400 (diagnose: 2.9 MB less to allocate at start-up).
  bool details_on_demand = false;
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
