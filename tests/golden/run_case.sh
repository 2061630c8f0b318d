#!/usr/bin/env bash
# Runs one golden case: denpex with the arguments in <variant>.args (one per
# line; {testdata} stands for the testdata directory; a line "stdin: FILE"
# feeds FILE on standard input), then compares stdout, stderr and the exit
# status with <variant>.stdout, .stderr and .rc. DENPEX_UPDATE_GOLDEN=1
# rewrites the expectations instead (review the diff).
set -u
bin=$1
args_file=$2
testdata=$3
dir=$(dirname "$args_file")
variant=$(basename "$args_file" .args)
# shellcheck source=case_args.sh
. "$(dirname "$0")/case_args.sh"
read_case_args "$args_file" "$testdata"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd "$testdata" && NO_COLOR=1 COLUMNS=100 "$bin" "${args[@]}" < "$stdin" > "$out/stdout" 2> "$out/stderr")
echo $? > "$out/rc"
# Paths are shown relative to testdata; absolute ones are replaced.
sed -i "s|$testdata|{testdata}|g" "$out/stdout" "$out/stderr"
if [ "${DENPEX_UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$out/stdout" "$dir/$variant.stdout"
  cp "$out/stderr" "$dir/$variant.stderr"
  cp "$out/rc" "$dir/$variant.rc"
  echo "updated $dir/$variant.*"
  exit 0
fi
status=0
for f in stdout stderr rc; do
  if ! diff -u "$dir/$variant.$f" "$out/$f"; then
    echo "golden mismatch: $dir/$variant.$f" >&2
    status=1
  fi
done
exit $status
