// Line formats as data (include/denpex/context/formats.hpp; docs/formats.md).
#include <denpex/context/formats.hpp>
#include <denpex/util/files.hpp>

#include <algorithm>
#include <cstdlib>

#include <nlohmann/json.hpp>
#include <re2/re2.h>

namespace denpex::context {

namespace {

using nlohmann::json;

// The fields a format may provide (its named captures).
constexpr std::string_view k_fields[] = {"rank", "local_rank", "host", "pid",    "gpu",    "year",
                                         "month", "day",       "hour", "minute", "second", "frac"};

bool known_field(std::string_view f) { return std::find(std::begin(k_fields), std::end(k_fields), f) != std::end(k_fields); }

// What parse_line() (the hand-written scanners) gives for `line`.
std::map<std::string, std::string> scanned_fields(std::string_view line) {
  const auto ctx = parse_line(line);
  std::map<std::string, std::string> out;
  if (ctx.rank) {
    out["rank"] = std::to_string(ctx.rank->value);
  }
  if (ctx.local_rank) {
    out["local_rank"] = std::to_string(ctx.local_rank->value);
  }
  if (ctx.host) {
    out["host"] = ctx.host->value;
  }
  if (ctx.pid) {
    out["pid"] = std::to_string(ctx.pid->value);
  }
  if (ctx.gpu) {
    out["gpu"] = std::to_string(ctx.gpu->value);
  }
  if (ctx.time.kind == ClockKind::wall) {
    const auto& w = ctx.time.wall;
    if (w.year != 0) {
      out["year"] = std::to_string(w.year);
    }
    out["month"] = std::to_string(w.month);
    out["day"] = std::to_string(w.day);
    out["hour"] = std::to_string(w.hour);
    out["minute"] = std::to_string(w.minute);
    out["second"] = std::to_string(w.second);
  }
  return out;
}

int to_int(const std::string& s) { return std::atoi(s.c_str()); }

// "Jan".."Dec" or a number.
int month_of(const std::string& s) {
  static const char* const k_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i) {
    if (s.size() >= 3 && s.compare(0, 3, k_months[i]) == 0) {
      return i + 1;
    }
  }
  return to_int(s);
}

// Reports a problem at a JSON pointer inside one format file.
struct FormatErrors {
  const FormatFile& file;
  Diagnostics& diags;
  void operator()(const std::string& ptr, const std::string& what) const {
    diags.error(Error{ErrorKind::format, file.name + ": " + ptr, what});
  }
};

// One entry of "samples": {"line": string, "fields": {field: string}}.
std::optional<FormatSample> read_sample(const json& s, const std::string& ptr, const FormatErrors& fail) {
  if (!s.is_object() || !s.contains("line") || !s["line"].is_string() || !s.contains("fields") ||
      !s["fields"].is_object()) {
    fail(ptr, "expected {\"line\": string, \"fields\": {field: string}}");
    return std::nullopt;
  }
  FormatSample sample;
  sample.line = s["line"].get<std::string>();
  bool ok = true;
  for (const auto& [k, v] : s["fields"].items()) {
    if (!v.is_string() || !known_field(k)) {
      fail(ptr + "/fields/" + k, "unknown field or not a string");
      ok = false;
      continue;
    }
    sample.fields[k] = v.get<std::string>();
  }
  return ok ? std::optional<FormatSample>(std::move(sample)) : std::nullopt;
}

// The keys of a format file, as written; false if one is unknown or wrong.
bool read_keys(const json& root, LineFormat& f, const FormatErrors& fail) {
  bool ok = true;
  for (const auto& [key, value] : root.items()) {
    if (key == "id" && value.is_string()) {
      f.id = value.get<std::string>();
    } else if (key == "description" && value.is_string()) {
      f.description = value.get<std::string>();
    } else if (key == "pattern" && value.is_string()) {
      f.pattern = value.get<std::string>();
    } else if (key == "scanner" && value.is_boolean()) {
      f.scanner = value.get<bool>();
    } else if (key == "references" && value.is_array()) {
      continue;
    } else if ((key == "$schema" || key == "$comment") && value.is_string()) {
      continue; // for editors (schemas/denpex-format.schema.json) and people
    } else if (key == "samples" && value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        auto sample = read_sample(value[i], "/samples/" + std::to_string(i), fail);
        if (sample) {
          f.samples.push_back(std::move(*sample));
        } else {
          ok = false;
        }
      }
    } else {
      fail("/" + key, "unknown key or wrong type (id, description, pattern, scanner, samples, references, $schema, $comment)");
      ok = false;
    }
  }
  return ok;
}

// Compiles the pattern; every named capture must be a field.
bool compile_pattern(LineFormat& f, const FormatErrors& fail) {
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_shared<const re2::RE2>(f.pattern, opts);
  if (!re->ok()) {
    fail("/pattern", "invalid regex: " + re->error());
    return false;
  }
  bool ok = true;
  for (const auto& [name, index] : re->NamedCapturingGroups()) {
    (void)index;
    if (!known_field(name)) {
      fail("/pattern", "capture '" + name + "' is not a field (rank, local_rank, host, pid, gpu, year, month, day, "
                       "hour, minute, second, frac)");
      ok = false;
    }
  }
  f.compiled = std::move(re);
  return ok;
}

// Every sample gives exactly the fields it names (scanner formats: through
// the hand-written scanners; the others: through their own pattern).
bool check_samples(const LineFormat& f, const FormatErrors& fail) {
  bool ok = true;
  for (std::size_t i = 0; i < f.samples.size(); ++i) {
    const auto got = fields_of(f, f.samples[i].line);
    if (!got) {
      fail("/samples/" + std::to_string(i), "the pattern does not match: " + f.samples[i].line);
      ok = false;
      continue;
    }
    for (const auto& [k, want] : f.samples[i].fields) {
      auto it = got->find(k);
      const std::string have = it == got->end() ? "(none)" : it->second;
      if (have != want) {
        fail("/samples/" + std::to_string(i) + "/fields/" + k, "expected '" + want + "', got '" + have + "'");
        ok = false;
      }
    }
  }
  return ok;
}

std::optional<LineFormat> parse_format(const FormatFile& file, Diagnostics& diags, bool check) {
  const FormatErrors fail{file, diags};
  json root;
  try {
    root = json::parse(file.text);
  } catch (const json::exception& e) {
    diags.error(Error{ErrorKind::format, file.name, std::string("invalid JSON: ") + e.what()});
    return std::nullopt;
  }
  if (!root.is_object()) {
    fail("", "expected an object");
    return std::nullopt;
  }
  LineFormat f;
  f.file = file.name;
  const bool keys_ok = read_keys(root, f, fail);
  if (f.id.empty() || f.pattern.empty() || f.samples.empty()) {
    fail("", "id, pattern and at least one sample are required");
    return std::nullopt;
  }
  if (!check && f.scanner) {
    return keys_ok ? std::optional<LineFormat>(std::move(f)) : std::nullopt; // described only: the scanner implements it
  }
  if (!compile_pattern(f, fail) || !keys_ok || !check_samples(f, fail)) {
    return std::nullopt;
  }
  return f;
}

} // namespace

std::optional<std::map<std::string, std::string>> fields_of(const LineFormat& f, std::string_view line) {
  if (!f.compiled || !RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *f.compiled)) {
    return std::nullopt;
  }
  if (f.scanner) {
    return scanned_fields(line);
  }
  const auto& re = *f.compiled;
  const int n = re.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> groups(static_cast<std::size_t>(n) + 1);
  if (!re.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, groups.data(),
                n + 1)) {
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (const auto& [name, index] : re.NamedCapturingGroups()) {
    const auto& g = groups[static_cast<std::size_t>(index)];
    if (g.data() != nullptr) {
      out[name] = std::string(g.data(), g.size());
    }
  }
  return out;
}

FormatSet FormatSet::load(const std::vector<FormatFile>& files, Diagnostics& diags, bool check_builtin) {
  FormatSet set;
  for (const auto& file : files) {
    auto f = parse_format(file, diags, check_builtin || !file.builtin);
    if (!f) {
      continue;
    }
    const bool duplicate = std::any_of(set.m_formats.begin(), set.m_formats.end(),
                                       [&](const LineFormat& g) { return g.id == f->id; });
    if (duplicate) {
      diags.error(Error{ErrorKind::format, file.name + ": /id", "duplicate format id '" + f->id + "'"});
      continue;
    }
    set.m_data_formats += f->scanner ? 0 : 1;
    set.m_formats.push_back(std::move(*f));
  }
  return set;
}

void FormatSet::apply(std::string_view line, LineContext& ctx) const {
  for (const auto& f : m_formats) {
    if (f.scanner) {
      continue;
    }
    const auto got = fields_of(f, line);
    if (!got) {
      continue;
    }
    auto get = [&](const char* k) -> const std::string* {
      auto it = got->find(k);
      return it == got->end() || it->second.empty() ? nullptr : &it->second;
    };
    if (const auto* v = get("rank"); v && !ctx.rank) {
      ctx.rank = Field<int>{to_int(*v), Origin::prefix};
    }
    if (const auto* v = get("local_rank"); v && !ctx.local_rank) {
      ctx.local_rank = Field<int>{to_int(*v), Origin::prefix};
    }
    if (const auto* v = get("host"); v && !ctx.host) {
      ctx.host = Field<std::string>{*v, Origin::prefix};
    }
    if (const auto* v = get("pid"); v && !ctx.pid) {
      ctx.pid = Field<std::int64_t>{std::atoll(v->c_str()), Origin::prefix};
    }
    if (const auto* v = get("gpu"); v && !ctx.gpu) {
      ctx.gpu = Field<int>{to_int(*v), Origin::prefix};
    }
    const auto* hour = get("hour");
    const auto* minute = get("minute");
    const auto* second = get("second");
    if (hour && minute && second && ctx.time.kind == ClockKind::none) {
      WallTime w;
      w.year = get("year") ? to_int(*get("year")) : 0;
      w.month = get("month") ? month_of(*get("month")) : 1;
      w.day = get("day") ? to_int(*get("day")) : 1;
      w.hour = to_int(*hour);
      w.minute = to_int(*minute);
      w.second = to_int(*second);
      if (const auto* frac = get("frac")) {
        std::string digits = frac->substr(0, 6);
        digits.resize(6, '0');
        w.micros = to_int(digits);
      }
      ctx.time.kind = ClockKind::wall;
      ctx.time.wall = w;
      ctx.time.format = "format";
      ctx.time.origin = Origin::prefix;
    }
    return; // the first matching format speaks for the line
  }
}

std::vector<FormatFile> read_format_directory(const std::string& dir, Diagnostics& diags) {
  std::vector<FormatFile> files;
  for (auto& [path, text] : util::read_json_directory(dir, "format files", diags)) {
    files.push_back(FormatFile{std::move(path), std::move(text), false});
  }
  return files;
}

} // namespace denpex::context
