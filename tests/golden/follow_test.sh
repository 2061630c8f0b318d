#!/usr/bin/env bash
# --follow on a file that grows while denpex reads it: the live line naming
# the initiating failure must appear before the writer has finished, and the
# full report when the file stops growing.
set -u
bin=$1
sample=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
log=$dir/train.log
: > "$log"
"$bin" diagnose --follow --follow-idle 5 "$log" > "$dir/out" 2> "$dir/err" &
pid=$!
head -n 45 "$sample" >> "$log"          # the cause is on line 41
for _ in $(seq 200); do
  grep -q '^denpex: \[live\] initiating failure: nccl.nvls.cuda-700' "$dir/err" && break
  sleep 0.1
done
if ! grep -q '^denpex: \[live\] initiating failure: nccl.nvls.cuda-700' "$dir/err"; then
  echo "no live update within 20 s of the cause being written"; cat "$dir/out" "$dir/err"; kill $pid; exit 1
fi
tail -n +46 "$sample" >> "$log"          # the rest: timeouts, ChildFailedError
wait $pid
rc=$?
grep -q '^INITIATING FAILURE  \[critical\] nccl.nvls.cuda-700' "$dir/out" || { echo "no final report"; cat "$dir/out"; exit 1; }
grep -qE 'pytorch.nccl.watchdog-timeout +[0-9]+ +0-2,4-7' "$dir/out" || { echo "timeouts written after the live update were not read"; cat "$dir/out"; exit 1; }
[ $rc -eq 1 ] || { echo "exit status $rc, expected 1"; exit 1; }
grep -q '\[live\]' "$dir/out" && { echo "a live update went to stdout"; exit 1; }
# Machine-readable formats stay one document on stdout while following.
head -n 45 "$sample" > "$dir/g.log"
"$bin" diagnose --follow --follow-idle 1 --format json "$dir/g.log" > "$dir/doc.json" 2> "$dir/doc.err"
python3 -m json.tool "$dir/doc.json" > /dev/null || { echo "--follow --format json is not one JSON document"; head -5 "$dir/doc.json"; exit 1; }
grep -q '\[live\]' "$dir/doc.err" || { echo "no live update on stderr with --format json"; exit 1; }
echo "follow: ok"
