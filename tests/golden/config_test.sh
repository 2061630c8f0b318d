#!/usr/bin/env bash
# .denpex.json is found from the current directory upward: its ignore list
# and fail_on apply; --no-config skips it; an unknown key is a one-line error.
set -u
bin=$1
testdata=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/project/sub"
cp "$testdata/cases/config/dir/.denpex.json" "$dir/project/"
cd "$dir/project/sub" || exit 1
out=$("$bin" diagnose "$testdata/sample/train.log")
rc=$?
echo "$out" | grep -q 'INITIATING FAILURE  \[critical\] cuda.illegal-memory-access' || { echo "ignore from .denpex.json not applied"; echo "$out" | head -5; exit 1; }
[ $rc -eq 1 ] || { echo "exit $rc, expected 1 (cuda.illegal-memory-access is critical)"; exit 1; }
out=$("$bin" diagnose --no-config "$testdata/sample/train.log")
echo "$out" | grep -q 'INITIATING FAILURE  \[critical\] nccl.nvls.cuda-700' || { echo "--no-config did not skip the file"; exit 1; }
echo '{"ignore": [], "bogus": 1}' > "$dir/project/.denpex.json"
err=$("$bin" diagnose "$testdata/sample/train.log" 2>&1 >/dev/null)
rc=$?
[ $rc -eq 2 ] || { echo "exit $rc for a bad config, expected 2"; exit 1; }
echo "$err" | grep -q '/.denpex.json: /bogus: unknown key' || { echo "bad config error: $err"; exit 1; }
echo "config: ok"
