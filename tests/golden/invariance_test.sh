#!/usr/bin/env bash
# Same answer under every reading: every golden `diagnose` case is run
# as JSON at chunk sizes 4 KiB, 64 KiB and 1 MiB, with one thread and two,
# with and without the Hyperscan prefilter, and every run must print the same
# JSON, the same stderr and exit with the same code as the first (1 MiB,
# -j1, prefilter). ripgrep runs its cases under
# every reader configuration the same way.
#
#   invariance_test.sh BIN TESTDATA [ARGS_FILE...]
#
# checks the named cases, or every case under TESTDATA/cases when none is
# named (CTest names one case per test, so the matrix runs in parallel).
set -u
# shellcheck source=case_args.sh
. "$(dirname "$0")/case_args.sh"
bin=$(realpath "$1")
testdata=$(realpath "$2")
shift 2
shopt -s nullglob
if [ $# -gt 0 ]; then
  cases=("$@")
else
  cases=("$testdata"/cases/*/*.args)
fi
[ ${#cases[@]} -gt 0 ] || { echo "no golden cases under $testdata/cases" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
checked=0
status=0
for args_file in "${cases[@]}"; do
  read_case_args "$args_file" "$testdata"
  skip=0
  [ "${args[0]:-}" = diagnose ] || continue
  # Keep the paths and the options that change the answer; the format is JSON.
  keep=()
  i=1
  while [ $i -lt ${#args[@]} ]; do
    a=${args[$i]}
    case $a in
      --format|--fail-on) i=$((i + 2)); continue ;;
      --format=*|--fail-on=*|-q|--quiet) i=$((i + 1)); continue ;;
      --follow*) skip=1 ;;
    esac
    keep+=("$a")
    i=$((i + 1))
  done
  [ $skip = 0 ] || continue
  first=""
  for chunk in 1048576 65536 4096; do
    for jobs in 1 2; do
      for pf in "" --no-prefilter; do
        # DENPEX_INVARIANCE_PAIRWISE=1 (sanitizer builds, 10x slower): the 6
        # readings that cover every pair of the three settings, not all 12.
        if [ "${DENPEX_INVARIANCE_PAIRWISE:-0}" = 1 ]; then
          case "$chunk:$jobs:$pf" in
            1048576:1: | 1048576:2:--no-prefilter | 65536:1:--no-prefilter | 65536:2: | 4096:1: | 4096:2:--no-prefilter) ;;
            *) continue ;;
          esac
        fi
        # The answer is the JSON, what went to stderr and the exit code.
        f="$out/run"
        (cd "$testdata" && NO_COLOR=1 "$bin" diagnose --format json --chunk-size "$chunk" -j "$jobs" $pf \
          "${keep[@]}" < "$stdin" > "$f" 2> "$f.err"; echo "exit $?" >> "$f.err")
        if [ -z "$first" ]; then
          first="$out/first"
          cp "$f" "$first"
          cp "$f.err" "$first.err"
        else
          for part in "" .err; do
            if ! diff -q "$first$part" "$f$part" > /dev/null; then
              echo "differs${part:+ (stderr and exit code)}: $args_file at --chunk-size $chunk -j $jobs $pf" >&2
              diff -u "$first$part" "$f$part" | head -20 >&2
              status=1
            fi
          done
        fi
      done
    done
  done
  checked=$((checked + 1))
done
[ $checked -gt 0 ] || { echo "no diagnose cases checked" >&2; exit 1; }
if [ "${DENPEX_INVARIANCE_PAIRWISE:-0}" = 1 ]; then
  echo "$checked diagnose cases identical at every pair of 3 chunk sizes, 2 thread counts, prefilter on/off"
else
  echo "$checked diagnose cases identical at 3 chunk sizes x 2 thread counts x prefilter on/off"
fi
exit $status
