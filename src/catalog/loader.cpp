#include <denpex/catalog/catalog.hpp>
#include <denpex/catalog/serialize.hpp>
#include <denpex/util/files.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>
#include <re2/re2.h>

namespace denpex::catalog {

namespace {

using nlohmann::json;

bool valid_id(std::string_view id) {
  // [a-z0-9]+([.-][a-z0-9]+)*
  if (id.empty()) {
    return false;
  }
  bool prev_sep = true;
  for (char c : id) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    const bool sep = c == '.' || c == '-';
    if (!alnum && !sep) {
      return false;
    }
    if (sep && prev_sep) {
      return false;
    }
    prev_sep = sep;
  }
  return !prev_sep;
}

std::string type_name(const json& j) { return j.type_name(); }

// Reads the fields of one JSON object, reporting each problem with the file
// name and the field's JSON Pointer.
class Fields {
public:
  Fields(const json& obj, std::string pointer, const CatalogFile& file, Diagnostics& diags, bool& ok)
      : m_obj(obj), m_pointer(std::move(pointer)), m_file(file), m_diags(diags), m_ok(ok) {}

  void fail(const std::string& pointer, const std::string& what, const std::string& help = {}) {
    m_ok = false;
    m_diags.error(Error{ErrorKind::invalid, m_file.name + ": " + (pointer.empty() ? "/" : pointer), what, help});
  }

  std::string at(std::string_view key) const { return m_pointer + "/" + std::string(key); }

  const json* get(std::string_view key, bool required) {
    m_seen.insert(std::string(key));
    auto it = m_obj.find(std::string(key));
    if (it == m_obj.end()) {
      if (required) {
        fail(at(key), "missing required field");
      }
      return nullptr;
    }
    return &*it;
  }

  std::string string(std::string_view key, bool required) {
    const json* v = get(key, required);
    if (v == nullptr) {
      return {};
    }
    if (!v->is_string()) {
      fail(at(key), "expected a string, found " + type_name(*v));
      return {};
    }
    auto s = v->get<std::string>();
    if (required && s.empty()) {
      fail(at(key), "must not be empty");
    }
    return s;
  }

  std::vector<std::string> strings(std::string_view key, bool required, bool non_empty = false) {
    std::vector<std::string> out;
    const json* v = get(key, required);
    if (v == nullptr) {
      return out;
    }
    if (!v->is_array()) {
      fail(at(key), "expected an array of strings, found " + type_name(*v));
      return out;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      const auto& e = (*v)[i];
      if (!e.is_string()) {
        fail(at(key) + "/" + std::to_string(i), "expected a string, found " + type_name(e));
        continue;
      }
      out.push_back(e.get<std::string>());
    }
    if (non_empty && out.empty()) {
      fail(at(key), "needs at least one entry");
    }
    return out;
  }

  std::optional<bool> boolean(std::string_view key) {
    const json* v = get(key, false);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_boolean()) {
      fail(at(key), "expected true or false, found " + type_name(*v));
      return std::nullopt;
    }
    return v->get<bool>();
  }

  // Reports keys that were never asked for.
  void reject_unknown() {
    for (auto it = m_obj.begin(); it != m_obj.end(); ++it) {
      if (m_seen.count(it.key()) == 0) {
        fail(at(it.key()), "unknown field", "see docs/signature-format.md for the fields an entry may have");
      }
    }
  }

private:
  const json& m_obj;
  std::string m_pointer;
  const CatalogFile& m_file;
  Diagnostics& m_diags;
  bool& m_ok;
  std::set<std::string> m_seen;
};

std::string regex_help(const std::string& what) {
  if (what.find("invalid named capture group") != std::string::npos ||
      what.find("invalid perl operator: (?<") != std::string::npos) {
    return "this RE2 needs named groups written as (?P<name>...); lookaround and backreferences are not supported";
  }
  if (what.find("invalid perl operator") != std::string::npos || what.find("invalid escape") != std::string::npos) {
    return "RE2 has no lookaround ((?=, (?!, (?<=), backreferences or \\Z";
  }
  return {};
}

void parse_signals(Fields& top, const json& root, Signature& sig, const CatalogFile& file, Diagnostics& diags,
                   bool& ok) {
  const json* v = top.get("signals", true);
  if (v == nullptr) {
    return;
  }
  if (!v->is_array() || v->empty()) {
    top.fail(top.at("signals"), "expected a non-empty array of signals");
    return;
  }
  std::set<std::string> ids;
  bool any_anchor = false;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const auto& s = (*v)[i];
    const std::string ptr = "/signals/" + std::to_string(i);
    if (!s.is_object()) {
      top.fail(ptr, "expected an object, found " + type_name(s));
      continue;
    }
    Fields f(s, ptr, file, diags, ok);
    Signal sigl;
    sigl.id = f.string("id", true);
    sigl.pattern = f.string("pattern", true);
    sigl.description = f.string("description", false);
    sigl.if_missing = f.string("if_missing", false);
    if (auto a = f.boolean("anchor")) {
      sigl.anchor = *a;
    }
    if (auto a = f.boolean("presence")) {
      sigl.presence = *a;
    }
    if (const auto lb = f.string("lookback", false); lb == "python-traceback") {
      sigl.lookback = Signal::Lookback::python_traceback;
    } else if (lb == "cxx-terminate") {
      sigl.lookback = Signal::Lookback::cxx_terminate;
    } else if (!lb.empty()) {
      f.fail(ptr + "/lookback", "'" + lb + "' is not a look-back; expected python-traceback or cxx-terminate");
    }
    if (const auto when = f.string("when", false); !when.empty()) {
      if (auto c = Condition::parse(when)) {
        sigl.when = std::move(*c);
      } else {
        f.fail(ptr + "/when", c.error().what);
      }
    }
    // A cause or symptom needs every match: each one is a rank and a time.
    // And a presence signal's first match is the only one looked at: a
    // `when` failing there would hide the rest.
    if (sigl.presence && sig.role != Role::context) {
      f.fail(ptr + "/presence", "only a context entry's signal may be a presence signal");
    } else if (sigl.presence && sigl.when) {
      f.fail(ptr + "/presence", "a presence signal cannot have a 'when'");
    }
    f.reject_unknown();
    if (!sigl.id.empty() && !valid_id(sigl.id)) {
      f.fail(ptr + "/id", "'" + sigl.id + "' is not a kebab-case id");
    }
    if (!sigl.id.empty() && !ids.insert(sigl.id).second) {
      f.fail(ptr + "/id", "duplicate signal id '" + sigl.id + "'");
    }
    if (!sigl.pattern.empty()) {
      if (sigl.pattern.size() > 4096) {
        f.fail(ptr + "/pattern", "pattern is " + std::to_string(sigl.pattern.size()) + " bytes; the limit is 4096");
      } else {
        RE2::Options opts;
        opts.set_log_errors(false);
        // "(?m)": the matcher searches whole chunks, where ^ and $ must keep
        // their per-line meaning.
        // The built-in catalog was checked when it was built (its examples
        // run through the matcher in the test suite): its patterns are
        // compiled lazily by the matcher, which keeps start-up short.
        // Entries from --signatures directories are checked here.
        // (An invalid built-in pattern is still reported, by the matcher.)
        auto re = file.builtin ? nullptr : std::make_shared<const RE2>("(?m)" + sigl.pattern, opts);
        if (re && !re->ok()) {
          RE2 plain(sigl.pattern, opts); // the error message without our "(?m)"
          const std::string& error = plain.ok() ? re->error() : plain.error();
          f.fail(ptr + "/pattern", "invalid regex: " + error, regex_help(error));
        } else {
          sigl.compiled = std::move(re);
        }
      }
    }
    if (sigl.when) {
      // Every name a `when` reads is a named group of the pattern (as
      // written: the built-in catalog compiles its patterns lazily).
      for (const auto& name : sigl.when->names()) {
        if (sigl.pattern.find("(?P<" + name + ">") == std::string::npos) {
          f.fail(ptr + "/when", "'" + name + "' is not a named capture of the pattern");
        }
      }
    }
    any_anchor = any_anchor || sigl.anchor;
    sig.signals.push_back(std::move(sigl));
  }
  if (!sig.signals.empty() && !any_anchor) {
    top.fail("/signals", "at least one signal must be an anchor (anchor: true)");
  }
  (void)root;
}

// The identity fields an example's "context" may name.
constexpr std::array<std::string_view, 6> k_context_fields{"rank", "nranks", "host", "pid", "gpu", "pci"};

// An example's "captures" or "context": an object of name: string.
void read_example_map(Fields& ef, const std::string& ptr, const char* key, std::map<std::string, std::string>& out) {
  const json* c = ef.get(key, false);
  if (c == nullptr) {
    return;
  }
  if (!c->is_object()) {
    ef.fail(ptr + "/" + key, "expected an object of name: value");
    return;
  }
  for (auto it = c->begin(); it != c->end(); ++it) {
    if (!it.value().is_string()) {
      ef.fail(ptr + "/" + key + "/" + it.key(), "expected a string");
      continue;
    }
    out[it.key()] = it.value().get<std::string>();
  }
}

void parse_examples(Fields& top, Signature& sig, const CatalogFile& file, Diagnostics& diags, bool& ok) {
  const json* v = top.get("examples", true);
  if (v == nullptr) {
    return;
  }
  if (!v->is_object()) {
    top.fail("/examples", "expected an object with 'match' and 'no_match', found " + type_name(*v));
    return;
  }
  Fields f(*v, "/examples", file, diags, ok);
  const json* m = f.get("match", true);
  if (m != nullptr) {
    if (!m->is_array() || m->empty()) {
      f.fail("/examples/match", "expected a non-empty array of example lines");
    } else {
      for (std::size_t i = 0; i < m->size(); ++i) {
        const auto& e = (*m)[i];
        const std::string ptr = "/examples/match/" + std::to_string(i);
        Example ex;
        if (e.is_string()) {
          ex.line = e.get<std::string>();
        } else if (e.is_object()) {
          Fields ef(e, ptr, file, diags, ok);
          ex.line = ef.string("line", true);
          ex.signal = ef.string("signal", false);
          ex.origin = ef.string("origin", false);
          read_example_map(ef, ptr, "captures", ex.captures);
          read_example_map(ef, ptr, "context", ex.context);
          for (const auto& [name, value] : ex.context) {
            if (std::find(k_context_fields.begin(), k_context_fields.end(), name) == k_context_fields.end()) {
              ef.fail(ptr + "/context/" + name, "'" + name + "' is not one of rank, nranks, host, pid, gpu, pci");
            }
          }
          ef.reject_unknown();
          if (!ex.origin.empty() && ex.origin != "log" && ex.origin != "source" && ex.origin != "doc" &&
              ex.origin != "synthetic") {
            ef.fail(ptr + "/origin", "'" + ex.origin + "' is not one of log, source, doc, synthetic");
          }
          if (!ex.signal.empty() &&
              std::none_of(sig.signals.begin(), sig.signals.end(), [&](const Signal& s) { return s.id == ex.signal; })) {
            ef.fail(ptr + "/signal", "no signal named '" + ex.signal + "' in this entry");
          }
        } else {
          f.fail(ptr, "expected a string or an object, found " + type_name(e));
          continue;
        }
        sig.match_examples.push_back(std::move(ex));
      }
    }
  }
  sig.no_match_examples = f.strings("no_match", true, true);
  f.reject_unknown();
}

} // namespace

std::string_view to_string(Role r) {
  switch (r) {
  case Role::cause:
    return "cause";
  case Role::symptom:
    return "symptom";
  case Role::context:
    return "context";
  }
  return "?";
}

std::string_view to_string(Severity s) {
  switch (s) {
  case Severity::info:
    return "info";
  case Severity::warning:
    return "warning";
  case Severity::error:
    return "error";
  case Severity::critical:
    return "critical";
  }
  return "?";
}

std::optional<Role> parse_role(std::string_view s) {
  if (s == "cause") {
    return Role::cause;
  }
  if (s == "symptom") {
    return Role::symptom;
  }
  if (s == "context") {
    return Role::context;
  }
  return std::nullopt;
}

std::optional<Severity> parse_severity(std::string_view s) {
  if (s == "info") {
    return Severity::info;
  }
  if (s == "warning") {
    return Severity::warning;
  }
  if (s == "error") {
    return Severity::error;
  }
  if (s == "critical") {
    return Severity::critical;
  }
  return std::nullopt;
}

// "headline": "{type}: {message}" names the incident from the first line's
// captures (generic evidence such as an exception); every {name} must be a
// named capture of some signal.
// "fix" (summary, steps, commands, env) and "verify" (summary, commands).
static void parse_fix_verify(Fields& f, const CatalogFile& file, Diagnostics& diags, bool& ok, Signature& sig) {
  if (const json* fix = f.get("fix", true)) {
    if (!fix->is_object()) {
      f.fail("/fix", "expected an object with at least 'summary', found " + type_name(*fix));
    } else {
      Fields ff(*fix, "/fix", file, diags, ok);
      sig.fix.summary = ff.string("summary", true);
      sig.fix.steps = ff.strings("steps", false);
      sig.fix.commands = ff.strings("commands", false);
      if (const json* env = ff.get("env", false)) {
        if (!env->is_object()) {
          ff.fail("/fix/env", "expected an object of VARIABLE: value");
        } else {
          for (auto it = env->begin(); it != env->end(); ++it) {
            if (!it.value().is_string()) {
              ff.fail("/fix/env/" + it.key(), "expected a string value");
              continue;
            }
            sig.fix.env.emplace_back(it.key(), it.value().get<std::string>());
          }
        }
      }
      if (const json* stacks = ff.get("stacks", false)) {
        if (!stacks->is_object()) {
          ff.fail("/fix/stacks", "expected an object of STACK: what to set");
        } else {
          for (auto it = stacks->begin(); it != stacks->end(); ++it) {
            const auto& known = known_stacks();
            if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
              ff.fail("/fix/stacks/" + it.key(), "'" + it.key() + "' is not a stack; expected one of torchrun, accelerate, "
                                                 "deepspeed, megatron, vllm, sglang, slurm, kubernetes");
            } else if (!it.value().is_string() || it.value().get<std::string>().empty()) {
              ff.fail("/fix/stacks/" + it.key(), "expected a non-empty string");
            } else {
              sig.fix.stacks.emplace_back(it.key(), it.value().get<std::string>());
            }
          }
        }
      }
      ff.reject_unknown();
    }
  }
  if (const json* ver = f.get("verify", true)) {
    if (!ver->is_object()) {
      f.fail("/verify", "expected an object with at least 'summary', found " + type_name(*ver));
    } else {
      Fields vf(*ver, "/verify", file, diags, ok);
      sig.verify.summary = vf.string("summary", true);
      sig.verify.commands = vf.strings("commands", false);
      vf.reject_unknown();
    }
  }
}

static void parse_headline(Fields& f, Signature& sig) {
  sig.headline = f.string("headline", false);
  for (std::size_t at = sig.headline.find('{'); at != std::string::npos; at = sig.headline.find('{', at + 1)) {
    const auto end = sig.headline.find('}', at);
    if (end == std::string::npos) {
      f.fail("/headline", "unclosed '{'");
      return;
    }
    const auto capture = sig.headline.substr(at + 1, end - at - 1);
    const auto name = "(?P<" + capture + ">";
    // The cxx-terminate look-back adds `type` (the thrown type, read above the line).
    const bool known = std::any_of(sig.signals.begin(), sig.signals.end(), [&](const Signal& s) {
      return s.pattern.find(name) != std::string::npos ||
             (capture == "type" && s.lookback == Signal::Lookback::cxx_terminate);
    });
    if (!known) {
      f.fail("/headline", "'" + sig.headline.substr(at, end - at + 1) + "' is not a named capture of any signal");
    }
  }
}

const std::vector<std::string_view>& known_stacks() {
  static const std::vector<std::string_view> k_stacks = {"torchrun", "accelerate", "deepspeed", "megatron",
                                                         "vllm",     "sglang",     "slurm",     "kubernetes"};
  return k_stacks;
}

const std::vector<std::string_view>& known_areas() {
  static const std::vector<std::string_view> k_areas = {"hardware", "driver",  "nvlink",  "network",
                                                        "nccl",     "cuda",    "framework", "host",
                                                        "storage",  "numeric", "scheduler", "config"};
  return k_areas;
}

namespace {

// The file's one JSON object, or nullopt after a diagnostic. Without
// examples the "examples" key is skipped while parsing.
std::optional<json> parse_json_root(const CatalogFile& file, Diagnostics& diags, bool skip_examples) {
  json root;
  try {
    if (skip_examples) {
      root = json::parse(file.text, [](int depth, json::parse_event_t event, json& parsed) {
        return !(depth == 1 && event == json::parse_event_t::key && parsed == "examples");
      });
    } else {
      root = json::parse(file.text);
    }
  } catch (const json::exception& e) { // parse_error, and out_of_range for numbers like 1E400
    // e.what() is "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
    std::string what = e.what();
    const auto pos = what.find("] ");
    diags.error(Error{ErrorKind::format, file.name, "malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2))});
    return std::nullopt;
  }
  if (!root.is_object()) {
    diags.error(Error{ErrorKind::invalid, file.name + ": /", std::string("expected one JSON object (one entry per file), found ") + root.type_name()});
    return std::nullopt;
  }
  return root;
}

// id (matching the file name), title, area, role, severity, priority, generic.
void parse_identity(Fields& f, const CatalogFile& file, Signature& sig) {
  sig.id = f.string("id", true);
  if (!sig.id.empty() && !valid_id(sig.id)) {
    f.fail("/id", "'" + sig.id + "' is not a dotted kebab-case id like nccl.nvls.cuda-700");
  }
  if (!sig.id.empty()) {
    const auto base = std::filesystem::path(file.name).filename().string();
    if (base != sig.id + ".json") {
      f.fail("/id", "id '" + sig.id + "' does not match the file name '" + base + "'",
             "name the file " + sig.id + ".json");
    }
  }
  sig.title = f.string("title", true);
  sig.area = f.string("area", true);
  if (!sig.area.empty()) {
    const auto& areas = known_areas();
    if (std::find(areas.begin(), areas.end(), sig.area) == areas.end()) {
      f.fail("/area", "unknown area '" + sig.area + "'",
             "one of hardware, driver, nvlink, network, nccl, cuda, framework, host, storage, numeric, scheduler, config");
    }
  }
  const auto role = f.string("role", true);
  if (!role.empty()) {
    if (auto r = parse_role(role)) {
      sig.role = *r;
    } else {
      f.fail("/role", "unknown role '" + role + "'", "one of cause, symptom, context");
    }
  }
  const auto severity = f.string("severity", true);
  if (!severity.empty()) {
    if (auto s = parse_severity(severity)) {
      sig.severity = *s;
    } else {
      f.fail("/severity", "unknown severity '" + severity + "'", "one of info, warning, error, critical");
    }
  }
  if (const json* p = f.get("priority", false)) {
    if (!p->is_number_integer() || p->get<long long>() < 0 || p->get<long long>() > 100) {
      f.fail("/priority", "expected an integer from 0 to 100");
    } else {
      sig.priority = p->get<int>();
    }
  }
  if (auto g = f.boolean("generic")) {
    sig.generic = *g;
    if (sig.generic && sig.role != Role::symptom) {
      f.fail("/generic", "only symptom entries can be generic");
    }
  }
  if (auto j = f.boolean("joins_earlier")) {
    sig.joins_earlier = *j;
    if (sig.joins_earlier && sig.role != Role::cause) {
      f.fail("/joins_earlier", "only cause entries join an earlier incident (a generic symptom always does)");
    }
  }
}

// requires names supporting signals; refines is for context entries and
// explains for causes.
void check_relations(Fields& f, Signature& sig) {
  sig.explains = f.strings("explains", false);
  sig.refines = f.strings("refines", false);
  sig.requires_any = f.strings("requires", false);
  for (std::size_t i = 0; i < sig.requires_any.size(); ++i) {
    const auto& r = sig.requires_any[i];
    const auto it = std::find_if(sig.signals.begin(), sig.signals.end(), [&](const Signal& s) { return s.id == r; });
    if (it == sig.signals.end()) {
      f.fail("/requires/" + std::to_string(i), "no signal named '" + r + "' in this entry");
    } else if (it->anchor) {
      f.fail("/requires/" + std::to_string(i), "'" + r + "' is an anchor; required evidence must be a supporting signal (anchor: false)");
    }
  }
  if (!sig.refines.empty() && sig.role != Role::context) {
    f.fail("/refines", "only context entries refine causes");
  }
  if (!sig.explains.empty() && sig.role != Role::cause) {
    f.fail("/explains", "only cause entries explain symptoms");
  }
}

void parse_references(Fields& f, const CatalogFile& file, Diagnostics& diags, bool& ok, Signature& sig) {
  if (const json* refs = f.get("references", true)) {
    if (!refs->is_array() || refs->empty()) {
      f.fail("/references", "expected a non-empty array of {title, url}");
    } else {
      for (std::size_t i = 0; i < refs->size(); ++i) {
        const auto& r = (*refs)[i];
        const std::string ptr = "/references/" + std::to_string(i);
        if (!r.is_object()) {
          f.fail(ptr, "expected an object {title, url}, found " + type_name(r));
          continue;
        }
        Fields rf(r, ptr, file, diags, ok);
        Reference ref{rf.string("title", true), rf.string("url", true)};
        rf.reject_unknown();
        sig.references.push_back(std::move(ref));
      }
    }
  }
}

} // namespace

std::optional<Signature> parse_signature(const CatalogFile& file, Diagnostics& diags, bool with_examples) {
  // A built-in entry's examples were checked when it was built; skipping them
  // saves a fifth of the parse.
  const bool skip_examples = !with_examples && file.builtin;
  const auto root = parse_json_root(file, diags, skip_examples);
  if (!root) {
    return std::nullopt;
  }
  bool ok = true;
  Fields f(*root, "", file, diags, ok);
  // For editors and people, not for denpex: "$schema" names the file's JSON
  // Schema (schemas/denpex-signature.schema.json), "$comment" says where a
  // generated file comes from. Read as strings and ignored.
  (void)f.string("$schema", false);
  (void)f.string("$comment", false);
  Signature sig;
  sig.file = file.name;
  sig.builtin = file.builtin;
  parse_identity(f, file, sig);
  sig.tags = f.strings("tags", false);
  parse_signals(f, *root, sig, file, diags, ok);
  check_relations(f, sig);
  sig.root_cause = f.string("root_cause", true);
  parse_fix_verify(f, file, diags, ok, sig);
  sig.prevention = f.string("prevention", false);
  sig.affected = f.string("affected", false);
  parse_headline(f, sig);
  sig.related = f.strings("related", false);
  parse_references(f, file, diags, ok, sig);
  if (!skip_examples) {
    parse_examples(f, sig, file, diags, ok);
  }
  f.reject_unknown();
  if (!ok) {
    return std::nullopt;
  }
  return sig;
}

std::optional<std::size_t> Catalog::find(std::string_view id) const {
  auto it = m_index.find(std::string(id));
  if (it == m_index.end()) {
    return std::nullopt;
  }
  return it->second;
}

void Catalog::defer_details(std::string_view blob, std::vector<std::uint32_t> details_at) {
  DENPEX_ASSERT(details_at.size() <= m_entries.size());
  m_deferred = std::make_unique<Deferred>();
  m_deferred->blob = blob;
  m_deferred->loaded = std::make_unique<std::atomic<bool>[]>(details_at.size());
  m_deferred->at = std::move(details_at);
}

std::size_t Catalog::details_loaded() const {
  if (!m_deferred) {
    return 0;
  }
  std::size_t n = 0;
  for (std::size_t i = 0; i < m_deferred->at.size(); ++i) {
    n += m_deferred->loaded[i].load(std::memory_order_acquire) ? 1 : 0;
  }
  return n;
}

void Catalog::load_details(std::size_t i) const {
  const std::lock_guard<std::mutex> lock(m_deferred->mutex);
  if (m_deferred->loaded[i].load(std::memory_order_relaxed)) {
    return;
  }
  // The blob was read whole at load time, so its details read too.
  const bool ok = read_details(m_deferred->blob, m_deferred->at[i], m_entries[i]);
  DENPEX_ASSERT(ok);
  m_deferred->loaded[i].store(true, std::memory_order_release);
}

void Catalog::add_all(std::vector<Signature> entries, Diagnostics& diags) {
  if (!m_entries.empty()) {
    for (auto& sig : entries) {
      add(std::move(sig), diags);
    }
    return;
  }
  m_entries = std::move(entries);
  for (std::size_t i = 0; i < m_entries.size(); ++i) {
    if (!m_index.emplace(m_entries[i].id, i).second) {
      // A duplicate: reported, and left out as add() would.
      auto rest = std::vector<Signature>(std::make_move_iterator(m_entries.begin() + static_cast<std::ptrdiff_t>(i)),
                                         std::make_move_iterator(m_entries.end()));
      m_entries.resize(i);
      for (auto& sig : rest) {
        add(std::move(sig), diags);
      }
      return;
    }
  }
}

bool Catalog::add(Signature sig, Diagnostics& diags) {
  if (auto existing = find(sig.id)) {
    diags.error(Error{ErrorKind::invalid, sig.file + ": /id",
                      "duplicate id '" + sig.id + "' (already defined in " + m_entries[*existing].file + ")"});
    return false;
  }
  m_index.emplace(sig.id, m_entries.size());
  m_entries.push_back(std::move(sig));
  return true;
}

void Catalog::finalize(Diagnostics& diags) {
  // A broken reference is reported and dropped; the entry itself stays, so
  // one bad id never takes other entries down with it.
  for (auto& sig : m_entries) {
    auto check = [&](std::vector<std::string>& ids, const char* field, std::optional<Role> want, bool no_context) {
      std::vector<std::string> kept;
      kept.reserve(ids.size());
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto target = find(ids[i]);
        const auto where = [&] { return sig.file + ": /" + field + "/" + std::to_string(i); };
        if (!target) {
          diags.error(Error{ErrorKind::invalid, where(), "unknown entry id '" + ids[i] + "'"});
        } else if (want && m_entries[*target].role != *want) {
          diags.error(Error{ErrorKind::invalid, where(),
                            "'" + ids[i] + "' is a " + std::string(to_string(m_entries[*target].role)) + ", not a " +
                                std::string(to_string(*want))});
        } else if (no_context && m_entries[*target].role == Role::context) {
          diags.error(Error{ErrorKind::invalid, where(), "'" + ids[i] + "' is a context entry; context uses refines"});
        } else if (*target == static_cast<std::size_t>(&sig - m_entries.data())) {
          diags.error(Error{ErrorKind::invalid, where(), "an entry cannot refer to itself"});
        } else {
          kept.push_back(std::move(ids[i]));
        }
      }
      ids = std::move(kept);
    };
    check(sig.explains, "explains", std::nullopt, true);
    check(sig.refines, "refines", Role::cause, false);
    check(sig.related, "related", std::nullopt, false);
  }
  m_explains.assign(m_entries.size(), {});
  m_refines.assign(m_entries.size(), {});
  for (std::size_t i = 0; i < m_entries.size(); ++i) {
    // check() above kept only ids that resolve.
    for (const auto& e : m_entries[i].explains) {
      const auto target = find(e);
      DENPEX_ASSERT(target.has_value());
      m_explains[i].push_back(*target);
    }
    for (const auto& r : m_entries[i].refines) {
      const auto target = find(r);
      DENPEX_ASSERT(target.has_value());
      m_refines[i].push_back(*target);
    }
    std::sort(m_explains[i].begin(), m_explains[i].end());
    std::sort(m_refines[i].begin(), m_refines[i].end());
  }
}

bool Catalog::explains(std::size_t cause, std::size_t symptom) const {
  const auto& v = m_explains[cause];
  return std::binary_search(v.begin(), v.end(), symptom);
}

bool Catalog::refines(std::size_t ctx, std::size_t cause) const {
  const auto& v = m_refines[ctx];
  return std::binary_search(v.begin(), v.end(), cause);
}

std::vector<CatalogFile> read_directory(const std::string& dir, Diagnostics& diags) {
  std::vector<CatalogFile> files;
  for (auto& [path, text] : util::read_json_directory(dir, "signature files", diags)) {
    files.push_back(CatalogFile{std::move(path), std::move(text), false});
  }
  return files;
}

Catalog load_catalog(const LoadOptions& options, Diagnostics& diags) {
  Catalog catalog;
  auto load = [&](const std::vector<CatalogFile>& files) {
    // Parsing the JSON is most of start-up (the built-in catalog is ~1.2 MB),
    // and files are independent: parse on several threads, then add in file
    // order so that ids, diagnostics and the result do not depend on timing.
    const std::size_t n = files.size();
    std::vector<std::optional<Signature>> parsed(n);
    std::vector<Diagnostics> file_diags(n);
    const auto threads = static_cast<std::size_t>(
        std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()), 4u));
    const std::size_t workers = n < 64 ? 1 : std::min(threads, n / 32);
    auto work = [&](std::size_t first) {
      for (std::size_t k = first; k < n; k += workers) {
        parsed[k] = parse_signature(files[k], file_diags[k], options.examples);
      }
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < workers; ++t) {
      pool.emplace_back(work, t);
    }
    work(0);
    for (auto& t : pool) {
      t.join();
    }
    for (std::size_t k = 0; k < n; ++k) {
      for (auto& d : file_diags[k].items()) {
        diags.add(d.level, std::move(d.error));
      }
      if (parsed[k]) {
        catalog.add(std::move(*parsed[k]), diags);
      }
    }
  };
  if (options.builtin) {
    std::vector<std::uint32_t> details_at;
    auto prebuilt = options.prebuilt.empty() ? std::nullopt
                                             : deserialize(options.prebuilt, options.examples,
                                                           options.details_on_demand ? &details_at : nullptr);
    if (prebuilt) {
      catalog.add_all(std::move(*prebuilt), diags); // built-in ids are unique (the build checked)
      if (options.details_on_demand) {
        DENPEX_ASSERT(catalog.size() == details_at.size());
        catalog.defer_details(options.prebuilt, std::move(details_at));
      }
    } else {
      load(builtin_files());
    }
  }
  for (const auto& dir : options.dirs) {
    load(read_directory(dir, diags));
  }
  catalog.finalize(diags);
  return catalog;
}

} // namespace denpex::catalog
