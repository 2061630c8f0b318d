#!/usr/bin/env bash
# The page in headless Chromium (tests/web/page_test.mjs): the sample from
# #demo, then a 10 MB generated log picked as a file; prints the timings.
#   page_test.sh PAGE SOURCE_DIR
set -u
page=$1
root=$2
command -v node > /dev/null || { echo "node is not installed: skipped (apt-get install nodejs)"; exit 77; }
[ -f "$page" ] || { echo "$page missing: skipped (make web)"; exit 77; }
big=$(mktemp --suffix=.log)
trap 'rm -f "$big"' EXIT
python3 "$root/tests/bench/gen_log.py" --size 10M --shape real -o "$big" > /dev/null || exit 1
node "$root/tests/web/page_test.mjs" "$page" "" "$big"
