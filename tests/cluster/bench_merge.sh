#!/usr/bin/env bash
# Benchmark of the whole-cluster merge (issue 18): measures, never tunes.
#
#   tests/cluster/bench_merge.sh DENPEX [NODES...]
#
# For each NODES (default: 1000 10000) it writes a simulated job with
# gen_cluster.py (NODES x GPUS ranks; one node's GPU falls off the bus, every
# other rank's watchdog fires), runs denpex once per node from inside the
# node's directory (`--node NAME --format jsonl .`, JOBS at a time, as a
# Slurm or Kubernetes job step would), then measures the merge of all the
# findings, `denpex diagnose --format json findings/`, with GNU time: wall
# seconds and peak RSS (the "Maximum resident set size" of time -v), REPS
# runs, median. It prints the findings' size, the per-node step's total, and
# checks that the merge names the failing node, GPU and rank.
#
# Environment: GPUS (8), REPS (3), JOBS (nproc), WORKDIR (default: mktemp;
# the generated logs and findings are reused when WORKDIR already has them),
# KEEP=1 keeps WORKDIR, RAW=1 also measures one run over all the raw logs.
# Needs python3 and GNU time (/usr/bin/time; Debian package `time`).
set -u -o pipefail

if [ $# -lt 1 ]; then
  sed -n '2,20p' "$0" >&2
  exit 2
fi
DENPEX=$(readlink -f "$1")
shift
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000 10000)
HERE=$(cd "$(dirname "$0")" && pwd)
GPUS=${GPUS:-8}
REPS=${REPS:-3}
JOBS=${JOBS:-$(nproc)}
if [ -z "${WORKDIR:-}" ]; then
  WORKDIR=$(mktemp -d)
  [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORKDIR"' EXIT
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench_merge: /usr/bin/time (GNU time) is missing: apt-get install -y time" >&2
  exit 2
fi

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# measure NAME CMD...: REPS runs; prints "NAME  wall median (min-max) s  peak RSS median MiB"
measure() {
  local name=$1
  shift
  local walls=() rss=()
  for _ in $(seq "$REPS"); do
    /usr/bin/time -f "%e %M" -o "$WORKDIR/time.txt" "$@" > "$WORKDIR/out.json" 2> "$WORKDIR/err.txt"
    local rc=$?
    if [ $rc -gt 1 ]; then
      echo "bench_merge: $name exited $rc:" >&2
      cat "$WORKDIR/err.txt" >&2
      exit 1
    fi
    read -r w m < <(tail -1 "$WORKDIR/time.txt")
    walls+=("$w")
    rss+=("$m")
  done
  local wmed wmin wmax rmed
  wmed=$(printf '%s\n' "${walls[@]}" | median)
  wmin=$(printf '%s\n' "${walls[@]}" | sort -g | head -1)
  wmax=$(printf '%s\n' "${walls[@]}" | sort -g | tail -1)
  rmed=$(printf '%s\n' "${rss[@]}" | median)
  printf '  %-34s wall %6.2f s (%s-%s)   peak RSS %6.1f MiB\n' "$name" "$wmed" "$wmin" "$wmax" \
    "$(awk -v k="$rmed" 'BEGIN {print k / 1024}')"
}

echo "denpex: $DENPEX ($("$DENPEX" --version 2>/dev/null | head -1))"
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
for n in "${SIZES[@]}"; do
  dir="$WORKDIR/cluster-$n"
  fail_node=$((n / 2))
  want_rank=$((fail_node * GPUS + 3))
  echo "== $n nodes x $GPUS GPUs ($((n * GPUS)) ranks) =="
  if [ ! -d "$dir/logs" ]; then
    python3 "$HERE/gen_cluster.py" "$dir/logs" --nodes "$n" --gpus "$GPUS" > /dev/null || exit 1
  fi
  if [ ! -d "$dir/findings" ]; then
    mkdir -p "$dir/findings"
    start=$(date +%s.%N)
    # One run per node, from inside its directory, as a job step would.
    # shellcheck disable=SC2016
    (cd "$dir/logs" && ls) | xargs -P "$JOBS" -I{} sh -c \
      'cd "$1/logs/$2" && "$3" diagnose --node "$2" --format jsonl . > "$1/findings/$2.jsonl"; [ $? -le 1 ]' \
      sh "$dir" {} "$DENPEX" || { echo "bench_merge: a per-node run failed" >&2; exit 1; }
    end=$(date +%s.%N)
    printf '  per-node runs: %d in %.1f s on %d jobs (%.1f ms each, all cores)\n' "$n" \
      "$(echo "$end - $start" | bc)" "$JOBS" "$(echo "($end - $start) * 1000 * $JOBS / $n" | bc -l)"
  fi
  printf '  logs: %s in %s files; findings: %s in %s files, %s records\n' \
    "$(du -sh --apparent-size "$dir/logs" | cut -f1)" "$(find "$dir/logs" -type f | wc -l)" \
    "$(du -sh --apparent-size "$dir/findings" | cut -f1)" "$(find "$dir/findings" -type f | wc -l)" \
    "$(cat "$dir"/findings/*.jsonl | wc -l)"
  measure "merge (diagnose findings/)" "$DENPEX" diagnose --format json "$dir/findings/"
  got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
i = d["incidents"][0]
w = d["summary"]
print(i["signature"], i["where"]["host"], i["pci"], i["where"]["rank"], w["sources"], w["lines"],
      sum(g["count"] for g in i["collateral"]), len(i["collateral"][0]["ranks"]))
' "$WORKDIR/out.json")
  read -r sig host pci rank sources lines collateral watchdog_ranks <<< "$got"
  echo "  merged: $sig on $host GPU $pci rank $rank; $collateral collateral reports, watchdog on $watchdog_ranks ranks; summary: $sources sources, $lines lines"
  if [ "$sig $host $rank" != "xid.79 $(printf 'node-%04d' "$fail_node") $want_rank" ]; then
    echo "  CHECK FAILED: expected xid.79 on $(printf 'node-%04d' "$fail_node") rank $want_rank" >&2
    status=1
  fi
  if [ "${RAW:-0}" = 1 ]; then
    cp "$WORKDIR/out.json" "$WORKDIR/merged.json"
    measure "one run over all raw logs" "$DENPEX" diagnose --format json "$dir/logs/"
  fi
done
exit $status
