// `denpex lsp`: a Language Server over stdio (docs/editors.md). An editor
// with an LSP client opens a log; the server diagnoses the text the editor
// holds, exactly as `denpex diagnose --format json` would, and publishes:
//
//   the initiating failure    an error at its first line, the verdict as message
//   other failures            a warning at each first line
//   collateral, unexplained   information at the first line of each group
//
// Hover over a marked line shows `denpex explain` for its entry; the code
// action on it shows the fix (workspace/executeCommand denpex.showFix sends
// it back as a message). Everything comes from the JSON document the CLI
// prints, so the editor's answer is the CLI's answer.
//
// The protocol is JSON-RPC 2.0 with LSP's base framing (Content-Length
// headers). Bad input is answered, never fatal: a body that is not JSON gets
// a ParseError response, a message over k_max_message bytes is skipped
// with an InvalidRequest response; only a header the server cannot frame
// by (no Content-Length) ends it, with one line on stderr.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <denpex/core/diagnose.hpp>
#include <denpex/correlate/describe.hpp>
#include <denpex/report/report.hpp>
#include <denpex/scan/error_lines.hpp>
#include <denpex/util/strings.hpp>

#include "app.hpp"

namespace denpex::cli {

namespace {

using nlohmann::json;

// Logs of a few hundred MiB exist, but an editor does not hold them whole.
constexpr std::size_t k_max_message = 64u << 20;
constexpr std::size_t k_max_header_line = 8192;

// LSP's codes (JSON-RPC's and its own).
constexpr int k_parse_error = -32700;
constexpr int k_invalid_request = -32600;
constexpr int k_method_not_found = -32601;
constexpr int k_invalid_params = -32602;
constexpr int k_server_not_initialized = -32002;

enum class Severity { error = 1, warning = 2, information = 3 };

// --- Framing ----------------------------------------------------------------

// One message read, or why not.
struct Frame {
  enum class Kind { message, too_large, end, broken } kind = Kind::end;
  std::string body;
  std::size_t length = 0; // too_large: what the header said
  std::string problem;    // broken: what was wrong
};

class Transport {
public:
  Transport(std::FILE* in, std::FILE* out) : m_in(in), m_out(out) {}

  Frame read() {
    std::optional<std::size_t> length;
    while (true) {
      std::string line;
      int c = 0;
      while ((c = std::fgetc(m_in)) != EOF && c != '\n') {
        if (line.size() >= k_max_header_line) {
          return broken("a header line longer than 8 KiB");
        }
        line.push_back(static_cast<char>(c));
      }
      if (c == EOF) {
        return line.empty() && !length ? Frame{} : broken("the input ended inside a message's headers");
      }
      if (!line.empty() && line.back() == '\r') {
        line.pop_back();
      }
      if (line.empty()) {
        break; // the end of the headers
      }
      constexpr std::string_view k_length = "content-length:";
      if (line.size() > k_length.size() && util::to_lower(line.substr(0, k_length.size())) == k_length) {
        const auto value = util::trim(std::string_view(line).substr(k_length.size()));
        const auto parsed = util::parse_int(value);
        if (!parsed || *parsed < 0) {
          return broken("Content-Length '" + std::string(value) + "' is not a number");
        }
        length = static_cast<std::size_t>(*parsed);
      }
    }
    if (!length) {
      return broken("a message without a Content-Length header");
    }
    if (*length > k_max_message) {
      skip(*length);
      Frame f;
      f.kind = Frame::Kind::too_large;
      f.length = *length;
      return f;
    }
    Frame f;
    f.kind = Frame::Kind::message;
    f.body.resize(*length);
    if (std::fread(f.body.data(), 1, *length, m_in) != *length) {
      return broken("the input ended inside a message's body");
    }
    return f;
  }

  void write(const json& message) {
    const auto body = message.dump(-1, ' ', false, json::error_handler_t::replace);
    std::fprintf(m_out, "Content-Length: %zu\r\n\r\n", body.size());
    std::fwrite(body.data(), 1, body.size(), m_out);
    std::fflush(m_out);
  }

private:
  static Frame broken(std::string problem) {
    Frame f;
    f.kind = Frame::Kind::broken;
    f.problem = std::move(problem);
    return f;
  }

  void skip(std::size_t n) {
    char buf[65536];
    while (n > 0) {
      const auto got = std::fread(buf, 1, std::min(n, sizeof buf), m_in);
      if (got == 0) {
        return;
      }
      n -= got;
    }
  }

  std::FILE* m_in;
  std::FILE* m_out;
};

// --- Documents --------------------------------------------------------------

// file:///a/b%20c.log -> /a/b c.log; anything else is named as it is.
std::string path_of_uri(const std::string& uri) {
  constexpr std::string_view k_file = "file://";
  if (uri.compare(0, k_file.size(), k_file) != 0) {
    return uri;
  }
  std::string out;
  for (std::size_t i = k_file.size(); i < uri.size(); ++i) {
    const auto hex = [](char h) {
      return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
    };
    if (uri[i] == '%' && i + 2 < uri.size() && hex(uri[i + 1]) >= 0 && hex(uri[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(uri[i + 1]) * 16 + hex(uri[i + 2])));
      i += 2;
    } else {
      out.push_back(uri[i]);
    }
  }
  return out;
}

// UTF-16 code units of `s` (LSP's default position encoding).
std::size_t utf16_length(std::string_view s) {
  std::size_t n = 0;
  for (const char ch : s) {
    const auto b = static_cast<unsigned char>(ch);
    if ((b & 0xC0) != 0x80) {
      n += b >= 0xF0 ? 2 : 1;
    }
  }
  return n;
}

// Where denpex's line N (it counts '\n' only: a tqdm bar's '\r' redraws
// do not add lines) is in the editor, which also breaks lines at a lone
// '\r': the editor's line of the segment that holds `text`, and its length.
class LineMap {
public:
  explicit LineMap(std::string_view doc) : m_doc(doc) {
    m_starts.push_back(0);
    for (std::size_t i = 0; i < doc.size(); ++i) {
      if (doc[i] == '\n') {
        m_starts.push_back(i + 1);
      }
    }
  }

  struct Place {
    std::size_t line = 0;
    std::size_t length = 0;
  };

  Place place(std::uint64_t line_no, std::string_view text) const {
    if (line_no == 0 || line_no > m_starts.size()) {
      return {};
    }
    // Editor lines before this one: '\n's, plus lone '\r's (cached scan).
    std::size_t editor_line = line_no - 1 + lone_returns_before(m_starts[line_no - 1]);
    const auto begin = m_starts[line_no - 1];
    auto end = line_no < m_starts.size() ? m_starts[line_no] - 1 : m_doc.size();
    if (end > begin && m_doc[end - 1] == '\r') {
      --end;
    }
    auto line = m_doc.substr(begin, end - begin);
    // The segment that holds the matched text (its first 40 bytes).
    const auto at = text.empty() ? std::string_view::npos : line.find(text.substr(0, 40));
    std::size_t seg_begin = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\r' && (at == std::string_view::npos || i < at)) {
        ++editor_line;
        seg_begin = i + 1;
      }
    }
    auto seg = line.substr(seg_begin);
    seg = seg.substr(0, seg.find('\r'));
    return {editor_line, utf16_length(seg)};
  }

private:
  std::size_t lone_returns_before(std::size_t offset) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < offset; ++i) {
      if (m_doc[i] == '\r' && (i + 1 >= m_doc.size() || m_doc[i + 1] != '\n')) {
        ++n;
      }
    }
    return n;
  }

  std::string_view m_doc;
  std::vector<std::size_t> m_starts;
};

// A marked line, kept for hover and code actions.
struct Mark {
  std::size_t line = 0;
  std::string signature;
  std::string message;
  std::vector<std::string> fix; // the fix commands, in the form the logs' stack takes
};

// --- The server ---------------------------------------------------------------

class Server {
public:
  Server(Transport& t, const core::Engine& engine, int now_year)
      : m_t(t), m_engine(engine), m_cat(engine.catalog), m_now_year(now_year) {}

  // Serves until `exit`; returns the process's exit code.
  int run() {
    while (true) {
      auto frame = m_t.read();
      switch (frame.kind) {
      case Frame::Kind::end:
        return m_shutdown ? 0 : 1;
      case Frame::Kind::broken:
        std::fprintf(stderr, "denpex: error: lsp: %s; cannot continue\n", frame.problem.c_str());
        return 1;
      case Frame::Kind::too_large:
        respond_error(nullptr, k_invalid_request,
                      fmt::format("a message of {} bytes is over the {} MiB limit; skipped", frame.length,
                                  k_max_message >> 20));
        continue;
      case Frame::Kind::message:
        break;
      }
      const auto message = json::parse(frame.body, nullptr, false);
      if (message.is_discarded() || !message.is_object()) {
        respond_error(nullptr, k_parse_error, "the message is not a JSON object");
        continue;
      }
      try {
        if (handle(message)) {
          return m_shutdown ? 0 : 1;
        }
      } catch (const json::exception& e) {
        respond_error(message.contains("id") ? message["id"] : json(nullptr), k_invalid_params,
                      std::string("bad parameters: ") + e.what());
      }
    }
  }

private:
  // True at `exit`.
  bool handle(const json& msg) {
    const auto method = msg.value("method", std::string());
    const bool request = msg.contains("id");
    const json id = request ? msg["id"] : json(nullptr);
    const json params = msg.contains("params") ? msg["params"] : json::object();
    if (method == "exit") {
      return true;
    }
    if (method == "initialize") {
      m_initialized = true;
      respond(id, initialize_result());
      return false;
    }
    if (!m_initialized) {
      if (request) {
        respond_error(id, k_server_not_initialized, "initialize first");
      }
      return false;
    }
    if (method == "shutdown") {
      m_shutdown = true;
      respond(id, nullptr);
    } else if (method == "textDocument/didOpen") {
      const auto& doc = params.at("textDocument");
      update(doc.at("uri").get<std::string>(), doc.at("text").get<std::string>());
    } else if (method == "textDocument/didChange") {
      const auto& changes = params.at("contentChanges");
      if (!changes.empty()) {
        update(params.at("textDocument").at("uri").get<std::string>(), changes.back().at("text").get<std::string>());
      }
    } else if (method == "textDocument/didClose") {
      const auto uri = params.at("textDocument").at("uri").get<std::string>();
      m_marks.erase(uri);
      publish(uri, json::array());
    } else if (method == "textDocument/hover") {
      respond(id, hover(params));
    } else if (method == "textDocument/codeAction") {
      respond(id, code_actions(params));
    } else if (method == "workspace/executeCommand") {
      respond(id, execute(params));
    } else if (request) {
      respond_error(id, k_method_not_found, "denpex lsp does not serve " + method);
    }
    return false; // notifications it does not serve ("initialized", "$/...") need no answer
  }

  json initialize_result() const {
    return {{"capabilities",
             {{"textDocumentSync", {{"openClose", true}, {"change", 1}}},
              {"hoverProvider", true},
              {"codeActionProvider", {{"codeActionKinds", {"quickfix"}}}},
              {"executeCommandProvider", {{"commands", {"denpex.showFix"}}}}}},
            {"serverInfo", {{"name", "denpex"}, {"version", DENPEX_VERSION}}}};
  }

  // The CLI's JSON document for one file's text (core/diagnose.hpp).
  json diagnose(const std::string& name, const std::string& text) const {
    core::Options options;
    options.now_year = m_now_year;
    return json::parse(core::diagnose(m_engine, {core::Document{name, text}}, options).output);
  }

  void update(const std::string& uri, const std::string& text) {
    const auto name = path_of_uri(uri);
    const auto doc = diagnose(name, text);
    const LineMap lines(text);
    json diagnostics = json::array();
    std::vector<Mark> marks;
    auto mark = [&](const json& where, Severity severity, const std::string& signature, std::string message,
                    std::vector<std::string> fix, const json& related) {
      if (!where.is_object() || where.value("file", std::string()) != name) {
        return; // another file's line (a findings file names its own sources)
      }
      const auto place = lines.place(where.value("line", std::uint64_t{0}), where.value("text", std::string()));
      json dg = {{"range", {{"start", {{"line", place.line}, {"character", 0}}},
                            {"end", {{"line", place.line}, {"character", place.length}}}}},
                 {"severity", static_cast<int>(severity)},
                 {"code", signature},
                 {"source", "denpex"},
                 {"message", message}};
      if (!related.is_null()) {
        dg["relatedInformation"] = related;
      }
      diagnostics.push_back(std::move(dg));
      marks.push_back(Mark{place.line, signature, std::move(message), std::move(fix)});
    };
    for (const auto& inc : doc.at("incidents")) {
      const auto sig = inc.at("signature").get<std::string>();
      const bool initiating = inc.value("initiating", false);
      std::vector<std::string> fix;
      if (inc.contains("fix") && inc["fix"].contains("commands")) {
        fix = inc["fix"]["commands"].get<std::vector<std::string>>();
      }
      const auto verdict = doc.at("verdict").value("line", std::string());
      mark(inc.at("where"), initiating ? Severity::error : Severity::warning, sig,
           initiating ? std::string(util::starts_with(verdict, "denpex: ") ? verdict.substr(8) : verdict)
                      : fmt::format("also failed: {}: {}", sig, inc.value("title", std::string())),
           fix, nullptr);
      const json back = json::array({{{"location", location(uri, inc.at("where"), lines)},
                                      {"message", fmt::format("the failure it follows from: {}", sig)}}});
      for (const auto& g : inc.at("collateral")) {
        const auto n = g.value("count", std::uint64_t{1});
        mark(g.at("first"), Severity::information, g.at("signature").get<std::string>(),
             fmt::format("collateral of {}: {} ({} report{}{})", sig, g.value("title", std::string()), n,
                         n == 1 ? "" : "s", ranks_text(g)),
             fix, back);
      }
    }
    for (const auto& g : doc.at("unexplained")) {
      const auto n = g.value("count", std::uint64_t{1});
      mark(g.at("where"), Severity::information, g.at("signature").get<std::string>(),
           fmt::format("not explained by a failure found: {} ({} report{}{})", g.value("title", std::string()), n,
                       n == 1 ? "" : "s", ranks_text(g)),
           {}, nullptr);
    }
    m_marks[uri] = std::move(marks);
    publish(uri, diagnostics);
  }

  static std::string ranks_text(const json& group) {
    if (!group.contains("ranks") || group["ranks"].empty()) {
      return {};
    }
    std::vector<int> ranks = group["ranks"].get<std::vector<int>>();
    return fmt::format(", rank{} {}", ranks.size() == 1 ? "" : "s", correlate::format_ranks(ranks));
  }

  static json location(const std::string& uri, const json& where, const LineMap& lines) {
    const auto place = lines.place(where.value("line", std::uint64_t{0}), where.value("text", std::string()));
    return {{"uri", uri},
            {"range", {{"start", {{"line", place.line}, {"character", 0}}},
                       {"end", {{"line", place.line}, {"character", place.length}}}}}};
  }

  std::vector<const Mark*> marks_on(const std::string& uri, std::size_t first, std::size_t last) const {
    std::vector<const Mark*> out;
    const auto it = m_marks.find(uri);
    if (it != m_marks.end()) {
      for (const auto& m : it->second) {
        if (m.line >= first && m.line <= last) {
          out.push_back(&m);
        }
      }
    }
    return out;
  }

  // `denpex explain` for the entries marked on the line.
  json hover(const json& params) const {
    const auto uri = params.at("textDocument").at("uri").get<std::string>();
    const auto line = params.at("position").at("line").get<std::size_t>();
    std::string text;
    std::vector<std::string> shown;
    for (const auto* m : marks_on(uri, line, line)) {
      if (std::find(shown.begin(), shown.end(), m->signature) != shown.end()) {
        continue;
      }
      shown.push_back(m->signature);
      const auto idx = m_cat.find(m->signature);
      if (!idx) {
        continue;
      }
      std::ostringstream entry;
      report::TextOptions to;
      to.color = false;
      to.width = 80;
      report::print_entry(entry, m_cat.at(*idx), m_cat, to);
      text += (text.empty() ? "" : "\n---\n\n") + m->message + "\n\n```text\n" + entry.str() + "```\n";
    }
    if (text.empty()) {
      return nullptr;
    }
    return {{"contents", {{"kind", "markdown"}, {"value", text}}}};
  }

  json code_actions(const json& params) const {
    const auto uri = params.at("textDocument").at("uri").get<std::string>();
    const auto& range = params.at("range");
    const auto first = range.at("start").at("line").get<std::size_t>();
    const auto last = range.at("end").at("line").get<std::size_t>();
    json actions = json::array();
    std::vector<std::string> offered;
    for (const auto* m : marks_on(uri, first, last)) {
      if (m->fix.empty() || std::find(offered.begin(), offered.end(), m->signature) != offered.end()) {
        continue;
      }
      offered.push_back(m->signature);
      const auto title = fmt::format("denpex: show the fix for {}: {}", m->signature, m->fix.front());
      actions.push_back({{"title", title},
                         {"kind", "quickfix"},
                         {"command", {{"title", title}, {"command", "denpex.showFix"}, {"arguments", {m->fix}}}}});
    }
    return actions;
  }

  // denpex.showFix: the fix commands, as a message the user can copy.
  json execute(const json& params) {
    if (params.value("command", std::string()) != "denpex.showFix") {
      return nullptr;
    }
    std::string text;
    for (const auto& arg : params.value("arguments", json::array())) {
      for (const auto& c : arg) {
        if (c.is_string()) {
          text += (text.empty() ? "" : "\n") + c.get<std::string>();
        }
      }
    }
    m_t.write({{"jsonrpc", "2.0"},
               {"method", "window/showMessage"},
               {"params", {{"type", 3}, {"message", "denpex fix:\n" + text}}}});
    return text;
  }

  void publish(const std::string& uri, json diagnostics) {
    m_t.write({{"jsonrpc", "2.0"},
               {"method", "textDocument/publishDiagnostics"},
               {"params", {{"uri", uri}, {"diagnostics", std::move(diagnostics)}}}});
  }

  void respond(const json& id, json result) {
    m_t.write({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
  }

  void respond_error(const json& id, int code, const std::string& message) {
    m_t.write({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
  }

  Transport& m_t;
  const core::Engine& m_engine;
  const catalog::Catalog& m_cat;
  int m_now_year;
  bool m_initialized = false;
  bool m_shutdown = false;
  std::map<std::string, std::vector<Mark>> m_marks; // by document URI
};

} // namespace

Status run_lsp(const CommonArgs& common, const LspArgs& args, Diagnostics& diags) {
  TRY_ASSIGN(auto cat, load_catalog(common, diags, true)); // with examples: hover is `explain`
  matcher::MatcherOptions mo;
  mo.extra_patterns = scan::error_line_patterns();
  TRY_ASSIGN(auto m, compile_matcher(cat, mo, common));
  const auto formats = load_formats(args.formats, diags);
  const core::Engine engine{cat, m, formats, DENPEX_VERSION};
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  Transport transport(stdin, stdout);
  Server server(transport, engine, tm.tm_year + 1900);
  return server.run() == 0 ? k_exit_ok : k_exit_error;
}

} // namespace denpex::cli
