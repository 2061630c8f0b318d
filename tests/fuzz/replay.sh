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
# In batches, so a long corpus does not overflow the argument list.
status=0
for ((i = 0; i < ${#files[@]}; i += 200)); do
  "$bin" "${files[@]:i:200}" || { echo "failed in batch starting at ${files[i]}" >&2; status=1; }
done
exit $status
