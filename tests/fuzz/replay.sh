#!/usr/bin/env bash
# Replays every file under DIR through a fuzz target's replay binary.
# usage: replay.sh BINARY DIR [--allow-empty]
# A glob-driven test fails when it finds nothing (style.md section 7), unless
# --allow-empty (the regressions folder of a target with no bugs found yet).
set -u
bin=$1
dir=$2
mapfile -d '' files < <(find "$dir" -type f ! -name 'README*' ! -name '.gitkeep' -print0 2>/dev/null | sort -z)
if [ ${#files[@]} -eq 0 ]; then
  if [ "${3:-}" = --allow-empty ]; then
    echo "no inputs under $dir"
    exit 0
  fi
  echo "error: no inputs under $dir" >&2
  exit 1
fi
status=0
if [ "${3:-}" = --allow-empty ]; then
  # Regressions one at a time, each under a short timeout: a hang found by
  # the fuzzer may also grow memory without bound (r9_matcher_confirm_loop
  # reached 1.2 GB in 45 s), so it must fail fast.
  for f in "${files[@]}"; do
    timeout "${REPLAY_TIMEOUT:-20}" "$bin" "$f"
    rc=$?
    [ $rc = 124 ] && echo "FAIL: $f: still running after ${REPLAY_TIMEOUT:-20}s (hang)" >&2
    [ $rc != 0 ] && status=1
  done
  exit $status
fi
# Seeds in batches, so a long corpus does not overflow the argument list.
for ((i = 0; i < ${#files[@]}; i += 200)); do
  timeout 300 "$bin" "${files[@]:i:200}" || { echo "failed in batch starting at ${files[i]}" >&2; status=1; }
done
exit $status
