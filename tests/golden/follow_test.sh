#!/usr/bin/env bash
# --follow on a file that grows while denpex reads it: the live line naming
# the initiating failure must appear before the writer has finished, and the
# full report when the file stops growing. Then: the report comes at once
# when the writer closes the file (not after --follow-idle), and SIGINT and
# SIGTERM (and HUP, USR1/2, XCPU) end the following with the report and the shell's exit status.
set -u
bin=$1
sample=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
log=$dir/train.log
: > "$log"
exec 3>> "$log"                         # the writer keeps the file open, as a logger does
"$bin" diagnose --follow --follow-idle 5 "$log" > "$dir/out" 2> "$dir/err" &
pid=$!
head -n 45 "$sample" >&3                # the cause is on line 41
for _ in $(seq 200); do
  grep -q '^denpex: \[live\] rank 3 (node-017, GPU 3) nccl.nvls.cuda-700: .* · fix: export NCCL_NVLS_ENABLE=0' "$dir/err" && break
  sleep 0.1
done
if ! grep -q '^denpex: \[live\] rank 3 (node-017, GPU 3) nccl.nvls.cuda-700: .* · fix: export NCCL_NVLS_ENABLE=0' "$dir/err"; then
  echo "no live update within 20 s of the cause being written"; cat "$dir/out" "$dir/err"; kill $pid; exit 1
fi
tail -n +46 "$sample" >&3               # the rest: timeouts, ChildFailedError
exec 3>&-
wait $pid
rc=$?
grep -q '^INITIATING FAILURE  \[critical\] nccl.nvls.cuda-700' "$dir/out" || { echo "no final report"; cat "$dir/out"; exit 1; }
# A table row, or the two-line form a narrow width (a long temporary path) gets.
grep -A1 'pytorch.nccl.watchdog-timeout' "$dir/out" | grep -qE '(^|[ ,])0-2,4-7' || { echo "timeouts written after the live update were not read"; cat "$dir/out"; exit 1; }
[ $rc -eq 1 ] || { echo "exit status $rc, expected 1"; exit 1; }
grep -q '\[live\]' "$dir/out" && { echo "a live update went to stdout"; exit 1; }
# Machine-readable formats stay one document on stdout while following.
head -n 45 "$sample" > "$dir/g.log"
"$bin" diagnose --follow --follow-idle 1 --format json "$dir/g.log" > "$dir/doc.json" 2> "$dir/doc.err"
python3 -m json.tool "$dir/doc.json" > /dev/null || { echo "--follow --format json is not one JSON document"; head -5 "$dir/doc.json"; exit 1; }
grep -q '\[live\]' "$dir/doc.err" || { echo "no live update on stderr with --format json"; exit 1; }
# The writer is gone: no need to wait out a 60 s idle time.
start=$(date +%s)
"$bin" diagnose --follow --follow-idle 60 "$dir/g.log" > "$dir/gone.out" 2> /dev/null
waited=$(( $(date +%s) - start ))
if [ -r /proc/self/fdinfo/0 ]; then
  [ $waited -lt 30 ] || { echo "waited ${waited} s for a file nobody writes"; exit 1; }
fi
grep -q '^INITIATING FAILURE' "$dir/gone.out" || { echo "no report after the writer left"; exit 1; }
# Every terminating signal a terminal or scheduler sends: the report for
# what was read, then the shell's status for it (128 + the signal number).
for sig in INT:130 TERM:143 HUP:129 USR1:$((128 + $(kill -l USR1))) XCPU:$((128 + $(kill -l XCPU))); do
  # The previous round's files go first: a stale live line would send the
  # signal right after the fork, before exec, where the forked shell still
  # runs this script's EXIT trap (and removes $dir).
  rm -f "$dir/sig.out" "$dir/sig.err"
  exec 3>> "$dir/g.log"
  "$bin" diagnose --follow --follow-idle 60 "$dir/g.log" > "$dir/sig.out" 2> "$dir/sig.err" &
  pid=$!
  # Signal it once it is following (its live line is out), not while it
  # starts up: a sanitizer build takes seconds to compile the catalog.
  for _ in $(seq 600); do
    grep -q '\[live\]' "$dir/sig.err" 2> /dev/null && break
    sleep 0.1
  done
  kill -"${sig%%:*}" $pid
  wait $pid
  rc=$?
  exec 3>&-
  [ $rc -eq "${sig##*:}" ] || { echo "SIG${sig%%:*}: exit status $rc, expected ${sig##*:}"; exit 1; }
  grep -q '^INITIATING FAILURE  \[critical\] nccl.nvls.cuda-700' "$dir/sig.out" ||
    { echo "SIG${sig%%:*}: no report for what was read"; cat "$dir/sig.out"; exit 1; }
done
echo "follow: ok"
