#include "completion.hpp"

namespace denpex::cli {

namespace {

constexpr const char* k_bash = R"bash(# bash completion for denpex: eval "$(denpex completion bash)"
_denpex() {
  local cur prev words cword
  _init_completion 2>/dev/null || { cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"; }
  local cmd="${COMP_WORDS[1]}"
  local common="--signatures --no-builtin --strict --color --quiet -q --no-config --no-prefilter --help"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "diagnose grep explain signatures completion --version --help" -- "$cur"))
    return
  fi
  case "$prev" in
    --signatures) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
    --format)
      case "$cmd" in
        diagnose) COMPREPLY=($(compgen -W "text json jsonl sarif github markdown prometheus gcc html" -- "$cur")) ;;
        signatures) COMPREPLY=($(compgen -W "patterns ids markdown" -- "$cur")) ;;
      esac
      return ;;
    --fail-on) COMPREPLY=($(compgen -W "info warning error critical never" -- "$cur")); return ;;
    --role) COMPREPLY=($(compgen -W "cause symptom context" -- "$cur")); return ;;
    --area) COMPREPLY=($(compgen -W "hardware driver nvlink network nccl cuda framework host storage numeric scheduler config" -- "$cur")); return ;;
    --formats) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --output) COMPREPLY=($(compgen -W "text= json= jsonl= sarif= github= markdown= prometheus= gcc= html=" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
    --ignore|--signature) COMPREPLY=($(compgen -W "$(denpex signatures export --format ids 2>/dev/null)" -- "$cur")); return ;;
  esac
  case "$cmd" in
    diagnose)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$common --format --output --fail-on --ignore --jobs -j --year --clock-skew --node --no-timeline --follow --follow-idle --verbose -v --redact --include --exclude --formats --max-input-size" -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi ;;
    grep)
      if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$common --signature --area --role --count -c --json --verbose -v --redact --include --exclude --formats" -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi ;;
    explain) COMPREPLY=($(compgen -W "$(denpex signatures export --format ids 2>/dev/null)" -- "$cur")) ;;
    signatures)
      if [ "$COMP_CWORD" -eq 2 ]; then
        COMPREPLY=($(compgen -W "list show test lint export" -- "$cur"))
      elif [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$common --format --area --role --stats" -- "$cur"))
      else
        COMPREPLY=($(compgen -W "$(denpex signatures export --format ids 2>/dev/null)" -- "$cur"))
      fi ;;
    completion) COMPREPLY=($(compgen -W "bash zsh" -- "$cur")) ;;
  esac
}
complete -F _denpex denpex
)bash";

constexpr const char* k_zsh = R"zsh(#compdef denpex
# zsh completion for denpex: denpex completion zsh > "${fpath[1]}/_denpex"
_denpex_ids() { local -a ids; ids=(${(f)"$(denpex signatures export --format ids 2>/dev/null)"}); _describe 'signature' ids; }
_denpex() {
  local -a common
  common=(
    '*--signatures[also load signature entries from DIR]:directory:_directories'
    '--no-builtin[do not load the built-in catalog]'
    '--strict[stop if a signature file has an error]'
    '--color[colour output]:when:(auto always never)'
    '(-q --quiet)'{-q,--quiet}'[print nothing; exit status only]'
    '--no-config[ignore .denpex.json files]'
    '--no-prefilter[match with RE2 alone, without Hyperscan]'
  )
  if (( CURRENT == 2 )); then
    _values 'command' 'diagnose[find the initiating failure]' 'grep[print matched lines]' \
      'explain[show a signature entry]' 'signatures[list, show, test, lint, export the catalog]' \
      'completion[print a shell completion script]'
    return
  fi
  case $words[2] in
    diagnose) _arguments -s $common \
      '--format[output format]:format:(text json jsonl sarif github markdown prometheus gcc html)' \
      '*--output[also write FORMAT to PATH]:format=path:' '--node[host of lines that name none]:node:_hosts' \
      '*--include[read files matching GLOB]:glob:' '*--exclude[skip files matching GLOB]:glob:' \
      '*--formats[line formats from DIR]:dir:_files -/' '--max-input-size[GiB per source]:gib:' \
      '--fail-on[lowest severity that fails]:severity:(info warning error critical never)' \
      '*--ignore[ignore a signature]:id:_denpex_ids' '(-j --jobs)'{-j,--jobs}'[files read in parallel]:n:' \
      '--year[year of stamps without one]:year:' '--clock-skew[how far apart nodes clocks may be]:seconds:' '--follow[follow a growing file or a pipe]' \
      '--follow-idle[seconds without growth before stopping]:seconds:' '(-v --verbose)'{-v,--verbose}'[say what was skipped]' \
      '--redact[mask addresses, hosts and tokens]' '*:log:_files' ;;
    grep) _arguments -s $common '*--signature[only this id or prefix]:id:_denpex_ids' \
      '*--area[only this area]:area:(hardware driver nvlink network nccl cuda framework host storage numeric scheduler config)' \
      '--role[only this role]:role:(cause symptom context)' '(-c --count)'{-c,--count}'[counts per signature]' \
      '--json[one JSON object per line]' '(-v --verbose)'{-v,--verbose}'[say what was skipped]' \
      '*--include[read files matching GLOB]:glob:' '*--exclude[skip files matching GLOB]:glob:' \
      '*--formats[line formats from DIR]:dir:_files -/' \
      '--redact[mask addresses and tokens]' '*:log:_files' ;;
    explain) _arguments $common '1:query:_denpex_ids' ;;
    signatures) _arguments $common '1:action:(list show test lint export)' '--format[export format]:format:(patterns ids markdown)' \
      '--area[list: only this area]:area:' '--role[list: only this role]:role:(cause symptom context)' \
      '--stats[counts per area and role]' '*:id:_denpex_ids' ;;
    completion) _arguments '1:shell:(bash zsh)' ;;
  esac
}
_denpex "$@"
)zsh";

} // namespace

std::string_view completion_script(std::string_view shell) {
  if (shell == "bash") {
    return k_bash;
  }
  if (shell == "zsh") {
    return k_zsh;
  }
  return {};
}

} // namespace denpex::cli
