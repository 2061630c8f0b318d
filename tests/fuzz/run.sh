#!/usr/bin/env bash
# Builds the libFuzzer targets with clang + ASan/UBSan in build/fuzz and runs
# each for a bounded time (`make fuzz` calls this; docs/reliability.md).
#
# usage: tests/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  -max_total_time for each target (default 60, or $FUZZ_TIME)
#   TARGET              fuzz_context, fuzz_catalog, fuzz_diagnose (default: all)
# Environment: FUZZ_JOBS (parallel fuzzing processes per target, default 1),
#   BUILD_DIR (default build/fuzz), FUZZ_ARGS (extra libFuzzer flags).
#
# The working corpus lives in $BUILD_DIR/corpus/<target> (it grows across
# runs; seeds are merged in from the build's seed corpora), crashes go to
# $BUILD_DIR/artifacts/<target>/. A crash makes the script exit 1: minimise it
# (`<target> -minimize_crash=1 -runs=10000 crash-...`) and add it under
# tests/fuzz/regressions/<target>/ so CTest replays it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
seconds=${1:-${FUZZ_TIME:-60}}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_context fuzz_catalog fuzz_diagnose)
build=${BUILD_DIR:-build/fuzz}
jobs=${FUZZ_JOBS:-1}

if ! command -v clang++ > /dev/null; then
  echo "fuzz: clang++ not found (libFuzzer needs clang)" >&2
  exit 2
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DDENPEX_FUZZ=ON -DDENPEX_SANITIZE=address,undefined > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 2; }
ninja -C "$build" -j2 "${targets[@]}" fuzz_seeds

status=0
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  artifacts=$build/artifacts/$t
  # Artifacts of earlier runs are regressions already (or fixed): start clean,
  # so only what this run finds counts.
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  max_len=()
  [ "$t" = fuzz_context ] && max_len=(-max_len=4096)
  [ "$t" = fuzz_catalog ] && max_len=(-max_len=16384)
  [ "$t" = fuzz_diagnose ] && max_len=(-max_len=65536)
  echo "== $t: ${seconds}s"
  par=()
  [ "$jobs" -gt 1 ] && par=(-jobs="$jobs" -workers="$jobs")
  # Seeds are read-only inputs (the second corpus dir); new finds go to $corpus.
  set +e
  # shellcheck disable=SC2086
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
    "$build/tests/fuzz/$t" "$corpus" "$build/tests/fuzz/seeds/$t" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "${par[@]}" "${dict[@]}" "${max_len[@]}" ${FUZZ_ARGS:-} > "$build/$t.log" 2>&1
  rc=$?
  set -e
  grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|stat::average_exec_per_sec|==[0-9]+==ERROR|SUMMARY)|runtime error' \
    "$build/$t.log" | head -20 || true
  if [ "$rc" != 0 ] || ls "$artifacts" | grep -q .; then
    echo "fuzz: $t found a problem (exit $rc); see $build/$t.log and $artifacts/" >&2
    status=1
  fi
done
exit $status
