#!/usr/bin/env bash
# Shell completions: generated from the command line, so every
# subcommand and option is offered; values complete as their type says.
# bash is exercised through its completion function (COMP_WORDS/COMPREPLY);
# zsh is driven in a pseudo-terminal (zpty: type, TAB, read what it lists)
# and fish is exercised with `complete -C` when they
# are installed (`make test` installs both).
set -u
bin=$(realpath "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
expect() { # expect NAME HAYSTACK NEEDLE
  case " $2 " in
    *" $3 "*) ;;
    *) echo "FAIL: $1: '$3' not offered (got: $2)"; fail=1 ;;
  esac
}
# denpex itself on PATH: the scripts ask it for signature ids.
mkdir -p "$dir/bin" && ln -s "$bin" "$dir/bin/denpex"
export PATH="$dir/bin:$PATH"
mkdir -p "$dir/logs/node 01" && : > "$dir/logs/node 01/rank 0.log"

# --- bash ---
"$bin" completion bash > "$dir/denpex.bash" || { echo "FAIL: completion bash"; exit 1; }
bash_complete() { # words...: completes the last word
  (
    cd "$dir" || exit 1
    # shellcheck disable=SC1091
    . ./denpex.bash
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _denpex 2>/dev/null
    printf '%s\n' "${COMPREPLY[@]}"
  ) | tr '\n' ' '
}
expect "bash: subcommands" "$(bash_complete denpex '')" diagnose
expect "bash: subcommands" "$(bash_complete denpex '')" completion
expect "bash: diagnose options" "$(bash_complete denpex diagnose --)" --max-input-size
expect "bash: diagnose options" "$(bash_complete denpex diagnose --)" --clock-skew
expect "bash: --format choices" "$(bash_complete denpex diagnose --format '')" sarif
expect "bash: --output formats" "$(bash_complete denpex diagnose --output '')" json=
expect "bash: --fail-on choices" "$(bash_complete denpex diagnose --fail-on '')" critical
expect "bash: signature ids" "$(bash_complete denpex explain xid.7)" xid.79
expect "bash: signatures actions" "$(bash_complete denpex signatures '')" lint
expect "bash: ids after the action" "$(bash_complete denpex signatures show nccl.nvls)" nccl.nvls.cuda-700
expect "bash: grep areas" "$(bash_complete denpex grep --area '')" nvlink
expect "bash: completion shells" "$(bash_complete denpex completion '')" fish
# A path with a space is one word; a directory is offered as one.
got=$(cd "$dir" && . ./denpex.bash && COMP_WORDS=(denpex diagnose "logs/node") && COMP_CWORD=2 && _denpex && printf '%s|' "${COMPREPLY[@]}")
[ "$got" = "logs/node 01|" ] || { echo "FAIL: bash: a directory with a space is one completion (got '$got')"; fail=1; }
# A value-taking option's value is not counted as a positional.
expect "bash: positional after an option value" "$(bash_complete denpex signatures --format ids '')" export

# --- zsh ---
if command -v zsh > /dev/null; then
  "$bin" completion zsh > "$dir/_denpex"
  zsh -n "$dir/_denpex" || { echo "FAIL: zsh: the script does not parse"; fail=1; }
  grep -q -- "--clock-skew'\[" "$dir/_denpex" || { echo "FAIL: zsh: --clock-skew missing"; fail=1; }
  grep -q "1:action:(list show test lint export)" "$dir/_denpex" || { echo "FAIL: zsh: signatures actions missing"; fail=1; }
  # Behaviour: an interactive zsh in a pseudo-terminal (zsh/zpty) with
  # compinit over the script; type a line and TAB, then read what zsh lists
  # or inserts. Each check polls for up to 20 s (slow under sanitizers).
  cat > "$dir/drive.zsh" <<'ZSH'
zmodload zsh/zpty
dir=$1; shift
zpty z "PATH=$dir/bin:\$PATH TERM=dumb zsh -f -i"
zpty -w z "fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -D; PROMPT='> '; setopt nobeep"
drain() { local line; while zpty -r -t z line; do print -rn -- "$line"; done; }
sleep 1; drain > /dev/null
rc=0
while (( $# >= 2 )); do
  typed=$1 want=$2; shift 2
  zpty -w -n z "$typed"$'\t'
  got=""
  for i in {1..100}; do
    sleep 0.2
    got+=$(drain)
    [[ $got == *$want* ]] && break
  done
  if [[ $got != *$want* ]]; then
    print -r -- "FAIL: zsh: '$typed<TAB>' did not offer '$want' (got: ${got//$'\r'/})"
    rc=1
  fi
  zpty -w -n z $'\C-u'
  sleep 0.2; drain > /dev/null
done
zpty -d z
exit $rc
ZSH
  timeout 120 zsh -f "$dir/drive.zsh" "$dir" \
    "denpex " "diagnose" \
    "denpex signatures li" "list" \
    "denpex signatures li" "lint" \
    "denpex explain xid.7" "xid.79" \
    "denpex diagnose --for" "--format" \
    "denpex diagnose --format s" "sarif" \
    "denpex diagnose --fail-on c" "critical" || fail=1
else
  echo "zsh not installed: zsh script not checked"
fi

# --- fish ---
if command -v fish > /dev/null; then
  "$bin" completion fish > "$dir/denpex.fish"
  fish_complete() { fish --no-config -c "source $dir/denpex.fish; complete -C '$1'" | cut -f1 | tr '\n' ' '; }
  expect "fish: subcommands" "$(fish_complete 'denpex ')" signatures
  expect "fish: diagnose options" "$(fish_complete 'denpex diagnose --')" --follow-idle
  expect "fish: --format choices" "$(fish_complete 'denpex diagnose --format ')" prometheus
  expect "fish: signature ids" "$(fish_complete 'denpex explain xid.7')" xid.79
else
  echo "fish not installed: fish script not checked"
fi
[ $fail = 0 ] && echo "completion: ok"
exit $fail
