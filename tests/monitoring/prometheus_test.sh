#!/usr/bin/env bash
# Prometheus with the real components (issue 22): promtool checks denpex's
# exposition and the example rules; node_exporter's textfile collector serves
# a file denpex wrote with --output, and a scrape finds the samples.
# Exit 77 (CTest: skipped, shown as such) when the Debian packages
# `prometheus` (promtool) or `prometheus-node-exporter` are missing.
set -u
denpex=$1
repo=$2
command -v promtool >/dev/null || { echo "SKIP: promtool not installed (Debian package prometheus)"; exit 77; }
exporter=$(command -v prometheus-node-exporter || command -v node_exporter) ||
  { echo "SKIP: prometheus-node-exporter not installed"; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. The exposition passes promtool's lint (names, HELP/TYPE, label syntax).
"$denpex" diagnose --format prometheus "$repo/testdata/sample/" > "$tmp/out.prom"
promtool check metrics < "$tmp/out.prom" || fail "promtool check metrics"
grep -q '^denpex_incident{signature="nccl.nvls.cuda-700",.*initiating="true"} 1$' "$tmp/out.prom" || fail "no initiating sample"
# 2. The example rules load.
promtool check rules "$repo/deploy/prometheus/denpex.rules.yml" || fail "promtool check rules"
# 3. End to end: --output writes atomically into the collector's directory.
mkdir "$tmp/textfile"
port=$((20000 + RANDOM % 20000))
"$exporter" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults --collector.textfile \
  --collector.textfile.directory="$tmp/textfile" > "$tmp/exporter.log" 2>&1 &
pid=$!
"$denpex" diagnose -q --node gpu-node-09 --output prometheus="$tmp/textfile/denpex.prom" "$repo/testdata/sample/"
[ -f "$tmp/textfile/denpex.prom" ] || fail "--output did not write the file"
ls "$tmp/textfile" | grep -q tmp && fail "a temporary file was left behind"
for _ in $(seq 50); do
  if python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=2).read().decode())" > "$tmp/scrape" 2>/dev/null; then
    break
  fi
  sleep 0.1
done
grep -q 'denpex_incident{.*signature="nccl.nvls.cuda-700"' "$tmp/scrape" || { cat "$tmp/exporter.log" >&2; fail "scrape has no denpex_incident"; }
grep -q '^denpex_initiating_failure 1' "$tmp/scrape" || fail "scrape has no denpex_initiating_failure"
grep -q 'node_textfile_scrape_error 0' "$tmp/scrape" || fail "the collector reported a scrape error"
echo "ok: promtool metrics and rules, node_exporter scrape"
