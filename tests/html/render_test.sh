#!/usr/bin/env bash
# Renders --format html in headless Chromium (issue 19): the rendered DOM
# holds the SVG timeline with the initiating mark and every incident, and a
# screenshot is written (kept under the build directory for a person to look
# at). Exit 77 (skipped, shown as such) without Debian's chromium-headless-shell.
set -u
denpex=$1
testdata=$2
out=$3
browser=$(command -v chromium-headless-shell || command -v chromium) ||
  { echo "SKIP: chromium-headless-shell not installed"; exit 77; }
mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$denpex" diagnose --format html "$testdata/node-dump" > "$out/node-dump.html" 2>/dev/null
flags=(--no-sandbox --disable-gpu --hide-scrollbars --no-first-run --disable-extensions)
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$out/node-dump.html" > "$out/node-dump.dom" 2>/dev/null ||
  fail "chromium could not load the page"
grep -q '<svg id="timeline"' "$out/node-dump.dom" || fail "no timeline in the rendered DOM"
grep -q 'id="initiating-mark"' "$out/node-dump.dom" || fail "no initiating mark in the rendered DOM"
grep -q 'xid.79' "$out/node-dump.dom" || fail "the initiating failure is not in the rendered DOM"
[ "$(grep -o 'class="card"' "$out/node-dump.dom" | wc -l)" -ge 2 ] || fail "incident cards missing"
timeout 120 "$browser" "${flags[@]}" --window-size=1200,1600 --screenshot="$out/node-dump.png" \
  "file://$out/node-dump.html" > /dev/null 2>&1 || fail "no screenshot"
[ -s "$out/node-dump.png" ] || fail "empty screenshot"
echo "ok: rendered DOM holds the timeline and the initiating mark; screenshot $out/node-dump.png"
