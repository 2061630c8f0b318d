// Shell completion scripts generated from the command line's own definition
// (the CLI11 app), so that they cannot drift from it: every subcommand, every
// option with its description, and what each value is, read from the
// option's type name:
//   TEXT:{a,b,c}  a choice (CLI::IsMember)     DIR    a directory
//   PATH          a file or directory          ID     a signature id (asked of denpex itself)
//   FORMAT=PATH   an output format, then '='   other  free text (no completion)
#include "completion.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace denpex::cli {

namespace {

enum class Kind { none, choice, dir, path, id, output };

struct Value {
  Kind kind = Kind::none;
  std::vector<std::string> choices; // Kind::choice, Kind::output (the formats)
};

struct Opt {
  std::vector<std::string> longs;  // without "--"
  std::vector<std::string> shorts; // without "-"
  std::string description;
  bool takes_value = false;
  bool repeatable = false;
  Value value;
};

struct Positional {
  std::string name;
  bool many = false;
  Value value;
};

struct Command {
  std::string name;
  std::string description;
  std::vector<Opt> options;
  std::vector<Positional> positionals;
};

std::vector<std::string> split_choices(const std::string& type) {
  std::vector<std::string> out;
  const auto open = type.find('{');
  const auto close = type.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return out;
  }
  std::stringstream in(type.substr(open + 1, close - open - 1));
  for (std::string item; std::getline(in, item, ',');) {
    out.push_back(item);
  }
  return out;
}

Value value_of(const std::string& type, const std::vector<std::string>& formats) {
  if (type.find(":{") != std::string::npos || (!type.empty() && type.front() == '{')) {
    return {Kind::choice, split_choices(type)};
  }
  if (type.rfind("DIR", 0) == 0) {
    return {Kind::dir, {}};
  }
  if (type.rfind("PATH", 0) == 0) {
    return {Kind::path, {}};
  }
  if (type.rfind("ID", 0) == 0) {
    return {Kind::id, {}};
  }
  if (type.rfind("FORMAT=PATH", 0) == 0) {
    return {Kind::output, formats};
  }
  return {};
}

std::vector<Command> model(const CLI::App& app) {
  std::vector<Command> out;
  std::vector<std::string> formats; // diagnose --format's choices, for --output FORMAT=PATH
  for (const auto* sub : app.get_subcommands({})) {
    for (const auto* o : sub->get_options()) {
      if (sub->get_name() == "diagnose" && !o->get_lnames().empty() && o->get_lnames().front() == "format") {
        formats = split_choices(o->get_type_name());
      }
    }
  }
  for (const auto* sub : app.get_subcommands({})) {
    if (sub->get_group().empty()) {
      continue; // hidden (the man page generator)
    }
    Command c;
    c.name = sub->get_name();
    c.description = sub->get_description();
    for (const auto* o : sub->get_options()) {
      if (o->get_group().empty()) {
        continue; // hidden (testing) options
      }
      if (o->get_positional()) {
        c.positionals.push_back({o->get_name(), o->get_expected_max() > 1, value_of(o->get_type_name(), formats)});
        continue;
      }
      Opt opt;
      opt.longs = o->get_lnames();
      opt.shorts = o->get_snames();
      opt.description = o->get_description();
      opt.takes_value = o->get_expected_max() > 0; // flags expect none
      opt.repeatable = o->get_items_expected_max() > 1;
      opt.value = value_of(o->get_type_name(), formats);
      c.options.push_back(std::move(opt));
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& prefix = "", const char* sep = " ") {
  std::string out;
  for (const auto& s : items) {
    out += (out.empty() ? "" : sep) + prefix + s;
  }
  return out;
}

// Single-quoted for a shell: ' becomes '\''.
std::string sq(const std::string& s) {
  std::string out = "'";
  for (const char ch : s) {
    out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  }
  return out + "'";
}

std::vector<std::string> flags_of(const Opt& o) {
  std::vector<std::string> out;
  for (const auto& l : o.longs) {
    out.push_back("--" + l);
  }
  for (const auto& s : o.shorts) {
    out.push_back("-" + s);
  }
  return out;
}

// --- bash ---

std::string bash_value(const Value& v) {
  switch (v.kind) {
  case Kind::choice:
    return "COMPREPLY=($(compgen -W " + sq(join(v.choices)) + " -- \"$cur\"))";
  case Kind::output:
    return "compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -W " + sq(join(v.choices, "", "= ") + "=") +
           " -- \"$cur\"))";
  case Kind::dir:
    return "compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- \"$cur\")";
  case Kind::path:
    return "compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")";
  case Kind::id:
    return "COMPREPLY=($(compgen -W \"$(denpex signatures export --format ids 2>/dev/null)\" -- \"$cur\"))";
  case Kind::none:
    break;
  }
  return "COMPREPLY=()";
}

std::string bash(const std::vector<Command>& cmds) {
  std::string s = "# bash completion for denpex, generated from its command line: eval \"$(denpex completion bash)\"\n"
                  "_denpex() {\n"
                  "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
                  "  local cmd=\"${COMP_WORDS[1]}\" takes=\"\" i n=0\n"
                  "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
                  "    COMPREPLY=($(compgen -W " +
                  sq([&] {
                    std::vector<std::string> names;
                    for (const auto& c : cmds) {
                      names.push_back(c.name);
                    }
                    names.emplace_back("--help");
                    names.emplace_back("--version");
                    return join(names);
                  }()) +
                  " -- \"$cur\"))\n    return\n  fi\n  case \"$cmd\" in\n";
  for (const auto& c : cmds) {
    std::vector<std::string> all;
    std::vector<std::string> valued;
    for (const auto& o : c.options) {
      for (const auto& f : flags_of(o)) {
        all.push_back(f);
        if (o.takes_value) {
          valued.push_back(f);
        }
      }
    }
    s += "    " + c.name + ")\n      takes=" + sq(" " + join(valued) + " ") + "\n      case \"$prev\" in\n";
    for (const auto& o : c.options) {
      if (o.takes_value) {
        s += "        " + join(flags_of(o), "", "|") + ") " + bash_value(o.value) + "; return ;;\n";
      }
    }
    s += "      esac\n      if [[ \"$cur\" == -* ]]; then\n        COMPREPLY=($(compgen -W " + sq(join(all)) +
         " -- \"$cur\"))\n        return\n      fi\n";
    if (!c.positionals.empty()) {
      // Which positional the cursor is on: words after the command that are
      // neither options nor their values.
      s += "      for ((i = 2; i < COMP_CWORD; i++)); do\n"
           "        case \"${COMP_WORDS[i]}\" in\n"
           "          -*) [[ \"$takes\" == *\" ${COMP_WORDS[i]} \"* ]] && ((i++)) ;;\n"
           "          *) ((n++)) ;;\n"
           "        esac\n"
           "      done\n";
      for (std::size_t k = 0; k < c.positionals.size(); ++k) {
        const auto& p = c.positionals[k];
        const bool last = k + 1 == c.positionals.size();
        s += "      " + std::string(k == 0 ? "if" : "elif") + " [ \"$n\" -" + (last ? "ge" : "eq") + " " +
             std::to_string(k) + " ]; then " + bash_value(p.value) + "\n";
      }
      s += "      fi\n";
    }
    s += "      ;;\n";
  }
  s += "  esac\n}\ncomplete -F _denpex denpex\n";
  return s;
}

// --- zsh ---

// Text inside an _arguments spec's [description] or (choices).
std::string zsh_text(const std::string& t) {
  std::string out;
  for (const char ch : t) {
    if (ch == '[' || ch == ']' || ch == ':' || ch == '\\') {
      out += '\\';
    }
    out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  }
  return out;
}

std::string zsh_action(const Value& v) {
  switch (v.kind) {
  case Kind::choice:
    return "(" + zsh_text(join(v.choices)) + ")";
  case Kind::output:
    return "_denpex_outputs";
  case Kind::dir:
    return "_files -/";
  case Kind::path:
    return "_files";
  case Kind::id:
    return "_denpex_ids";
  case Kind::none:
    break;
  }
  return " ";
}

std::string zsh(const std::vector<Command>& cmds) {
  std::string formats;
  for (const auto& c : cmds) {
    for (const auto& o : c.options) {
      if (o.value.kind == Kind::output) {
        formats = join(o.value.choices, "", "= ") + "=";
      }
    }
  }
  std::string s = "#compdef denpex\n"
                  "# zsh completion for denpex, generated from its command line:\n"
                  "#   denpex completion zsh > \"${fpath[1]}/_denpex\"\n"
                  "_denpex_ids() {\n"
                  "  local -a ids\n"
                  "  ids=(${(f)\"$(denpex signatures export --format ids 2>/dev/null)\"})\n"
                  "  compadd -a ids\n"
                  "}\n"
                  "_denpex_outputs() { compadd -S '' " + formats + "; }\n"
                  "_denpex() {\n"
                  "  if (( CURRENT == 2 )); then\n"
                  "    local -a cmds\n"
                  "    cmds=(\n";
  for (const auto& c : cmds) {
    s += "      " + sq(c.name + ":" + c.description) + "\n";
  }
  s += "    )\n    _describe 'command' cmds\n    return\n  fi\n"
       "  local -a spec\n"
       "  case $words[2] in\n";
  for (const auto& c : cmds) {
    s += "    " + c.name + ")\n      spec=(\n";
    for (const auto& o : c.options) {
      const auto flags = flags_of(o);
      std::string names = flags.size() > 1 ? "'(" + join(flags) + ")'{" + join(flags, "", ",") + "}"
                                           : flags.front();
      std::string spec = (o.repeatable ? "'*'" : "") + names + "'[" + zsh_text(o.description) + "]";
      if (o.takes_value) {
        spec += ":" + zsh_text(o.longs.empty() ? "value" : o.longs.front()) + ":" + zsh_action(o.value);
      }
      s += "        " + spec + "'\n";
    }
    for (std::size_t k = 0; k < c.positionals.size(); ++k) {
      const auto& p = c.positionals[k];
      const std::string pos = p.many ? "*" : std::to_string(k + 1);
      s += "        '" + pos + ":" + zsh_text(p.name) + ":" + zsh_action(p.value) + "'\n";
    }
    s += "      ) ;;\n";
  }
  s += "  esac\n  shift words\n  (( CURRENT-- ))\n  _arguments -s $spec\n}\n_denpex \"$@\"\n";
  return s;
}

// --- fish ---

std::string fish(const std::vector<Command>& cmds) {
  std::string s = "# fish completion for denpex, generated from its command line:\n"
                  "#   denpex completion fish > ~/.config/fish/completions/denpex.fish\n"
                  "complete -c denpex -f\n";
  for (const auto& c : cmds) {
    s += "complete -c denpex -n __fish_use_subcommand -a " + c.name + " -d " + sq(c.description) + "\n";
  }
  auto value_args = [](const Value& v) -> std::string {
    switch (v.kind) {
    case Kind::choice:
      return " -x -a " + sq(join(v.choices));
    case Kind::output:
      return " -x -a " + sq(join(v.choices, "", "= ") + "=");
    case Kind::dir:
      return " -x -a '(__fish_complete_directories)'";
    case Kind::path:
      return " -r -F";
    case Kind::id:
      return " -x -a '(denpex signatures export --format ids 2>/dev/null)'";
    case Kind::none:
      break;
    }
    return " -x";
  };
  for (const auto& c : cmds) {
    const std::string when = " -n " + sq("__fish_seen_subcommand_from " + c.name);
    for (const auto& o : c.options) {
      std::string line = "complete -c denpex" + when;
      for (const auto& l : o.longs) {
        line += " -l " + l;
      }
      for (const auto& sh : o.shorts) {
        line += " -s " + sh;
      }
      if (o.takes_value) {
        line += value_args(o.value);
      }
      s += line + " -d " + sq(o.description) + "\n";
    }
    for (const auto& p : c.positionals) {
      if (p.value.kind == Kind::path) {
        s += "complete -c denpex" + when + " -F\n";
      } else if (p.value.kind != Kind::none) {
        s += "complete -c denpex" + when + value_args(p.value) + "\n";
      }
    }
  }
  return s;
}

// --- man page ---

// troff-safe text: backslashes escaped, hyphens as \\-, a leading . or '
// protected.
std::string roff(const std::string& t) {
  std::string out;
  for (const char ch : t) {
    if (ch == '\\') {
      out += "\\e";
    } else if (ch == '-') {
      out += "\\-";
    } else {
      out += ch;
    }
  }
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) {
    out.insert(0, "\\&");
  }
  return out;
}

std::string value_name(const Opt& o) {
  switch (o.value.kind) {
  case Kind::choice:
    return join(o.value.choices, "", "|");
  case Kind::output:
    return "FORMAT=PATH";
  case Kind::dir:
    return "DIR";
  case Kind::path:
    return "PATH";
  case Kind::id:
    return "ID";
  case Kind::none:
    break;
  }
  return "VALUE";
}

struct ManText {
  const char* synopsis;
  const char* description;
  const char* exit_status;
};

ManText man_text(const std::string& cmd) {
  if (cmd == "diagnose") {
    return {"[\\fIOPTIONS\\fR] [\\fIPATH\\fR|\\-]...",
            "Reads the logs (files, directories walked recursively, .gz/.zst/.xz/.bz2 files, tar and zip archives, "
            "or stdin), recognises known failure signatures, separates the initiating failure from its collateral "
            "by rank and time, and prints the root cause, the fix and how to verify it. Without a catalogued cause "
            "it names the run's own exception or process death, else the earliest downstream report.",
            "0: nothing at or above \\-\\-fail\\-on. 1: a failure at or above it was diagnosed. 2: a usage "
            "or input error (a file that cannot be read is reported and the rest are diagnosed). 130 or 143: "
            "\\-\\-follow was interrupted by SIGINT or SIGTERM, after the report."};
  }
  if (cmd == "grep") {
    return {"[\\fIOPTIONS\\fR] [\\fIPATH\\fR|\\-]...",
            "Prints every line a signature matches, with the signature, rank and time, like grep with the catalog "
            "as its patterns.",
            "0: something matched. 1: nothing matched. 2: an error."};
  }
  if (cmd == "explain") {
    return {"\\fIID\\fR|\\fIxid\\-NN\\fR|\\fIwords\\fR",
            "Shows one catalog entry: what the failure means, its fix, how to verify it, its evidence and sources.",
            "0: an entry was shown. 2: no entry matches."};
  }
  if (cmd == "signatures") {
    return {"list|show|test|lint|export [\\fIID\\fR]...",
            "Lists, shows, tests (every entry's real example lines must match and its near\\-misses must not), "
            "lints or exports the signature catalog.",
            "0: success. 2: a test or lint failure, or an error."};
  }
  if (cmd == "completion") {
    return {"bash|zsh|fish", "Prints a shell completion script generated from this command line.", "0: success."};
  }
  return {"[\\fIOPTIONS\\fR]", "", "0: success."};
}

std::string man(const std::vector<Command>& cmds, std::string_view version) {
  std::string s = ".TH DENPEX 1 \"\" \"denpex " + std::string(version) + "\" \"User Commands\"\n";
  s += ".SH NAME\ndenpex \\- diagnose failed ML training runs from their logs\n.SH SYNOPSIS\n";
  for (const auto& c : cmds) {
    s += ".B denpex " + c.name + "\n" + man_text(c.name).synopsis + "\n.br\n";
  }
  s += ".SH DESCRIPTION\n"
       "When a distributed training job dies, its first real failure (a GPU that fell off the bus, an NCCL "
       "illegal memory access, a host OOM kill, an InfiniBand link down) is buried under the reports of every "
       "other rank. denpex reads the logs, recognises known failure signatures, tells the initiating failure from "
       "its collateral by rank and time, and says what to do: the root cause, the exact fix, how to verify it, and "
       "where evidence is missing, the fact that would settle it.\n"
       ".SH COMMANDS\n";
  for (const auto& c : cmds) {
    const auto text = man_text(c.name);
    s += ".SS denpex " + c.name + "\n" + roff(c.description) + ".\n";
    if (*text.description != '\0') {
      s += ".PP\n" + std::string(text.description) + "\n";
    }
    for (const auto& o : c.options) {
      std::string names;
      for (const auto& f : flags_of(o)) {
        names += (names.empty() ? "" : ", ") + std::string("\\fB") + roff(f) + "\\fR";
      }
      if (o.takes_value) {
        names += " \\fI" + roff(value_name(o)) + "\\fR";
      }
      s += ".TP\n" + names + "\n" + roff(o.description) + "\n";
    }
    s += ".PP\nExit status: " + std::string(text.exit_status) + "\n";
  }
  s += ".SH EXIT STATUS\n"
       "Each command's exit status is given with it above; 2 always means a usage or input error, reported on "
       "stderr as a line naming the file and what is wrong.\n"
       ".SH ENVIRONMENT\n"
       ".TP\n.B NO_COLOR\nWhen set and not empty, no colour (as \\-\\-color never).\n"
       ".TP\n.B TERM\n\\fBdumb\\fR: no colour.\n"
       ".TP\n.B COLUMNS\nThe width the text report is wrapped to (40 to 1000); else the terminal's, else 100.\n"
       ".SH FILES\n"
       ".TP\n.I .denpex.json\nTeam defaults (signatures, ignore, fail_on), looked up from the current directory "
       "upward; \\-\\-no\\-config ignores it.\n"
       ".TP\n.I /usr/share/denpex/denpex\\-diagnosis.schema.json\nThe JSON Schema of \\-\\-format json.\n"
       ".SH PRIVACY\ndenpex never sends data anywhere; \\-\\-redact masks addresses, host names and tokens in "
       "its output.\n"
       ".SH SEE ALSO\n"
       ".BR grep (1),\n.BR dmesg (1),\n.BR journalctl (1),\n.BR nvidia\\-smi (1);\n"
       "the documentation in /usr/share/doc/denpex (cli.md, correlator.md, cluster.md, output\\-formats.md).\n";
  return s;
}

} // namespace

std::string man_page(const CLI::App& app, std::string_view version) { return man(model(app), version); }

const std::vector<std::string>& completion_shells() {
  static const std::vector<std::string> k_shells = {"bash", "zsh", "fish"};
  return k_shells;
}

std::string completion_script(const CLI::App& app, std::string_view shell) {
  const auto cmds = model(app);
  if (shell == "bash") {
    return bash(cmds);
  }
  if (shell == "zsh") {
    return zsh(cmds);
  }
  if (shell == "fish") {
    return fish(cmds);
  }
  return {};
}

} // namespace denpex::cli
