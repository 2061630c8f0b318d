#!/usr/bin/env bash
# Runs one bad-input case (issue 9; docs/reliability.md) against the real
# binary, in the corpus directory made by make_corpus.sh, and checks:
#   - the exit status (diagnose: 0 nothing found, 1 diagnosed, 2 input error;
#     an error wins) against expected/<case>.rc
#   - stderr, byte for byte, against expected/<case>.stderr (one line per
#     problem, naming the path; empty when there is none)
#   - case-specific checks on stdout (the good file alongside is diagnosed,
#     no raw ESC byte, valid JSON, peak RSS)
# Every run is wrapped in `timeout`, so a hang fails.
#
# usage: run_case.sh CASE DENPEX CORPUS_DIR EXPECTED_DIR [TIMEOUT_S]
# Exit: 0 pass, 1 fail, 125 skipped.
set -u
case_name=$1
bin=$2
corpus=$3
expected=$4
limit=${5:-60}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$corpus" || exit 1

fail=0
failed() {
  echo "FAIL [$case_name]: $*" >&2
  fail=1
}

# run ARGS...: denpex ARGS with stdout/stderr/rc captured (and peak RSS in KiB
# when GNU time is installed).
rss=""
run() {
  rss=""
  if [ -x /usr/bin/time ]; then
    NO_COLOR=1 COLUMNS="${run_columns:-100}" timeout "$limit" /usr/bin/time -f %M -o "$out/rss" "$bin" "$@" \
      > "$out/stdout" 2> "$out/stderr" < /dev/null
    rc=$?
    rss=$(tail -n 1 "$out/rss" 2> /dev/null)
  else
    NO_COLOR=1 COLUMNS="${run_columns:-100}" timeout "$limit" "$bin" "$@" > "$out/stdout" 2> "$out/stderr" < /dev/null
    rc=$?
  fi
  if [ "$rc" = 124 ]; then
    failed "timed out after ${limit}s: denpex $*"
  fi
}

# Compares rc and stderr with expected/<case>.rc and expected/<case>.stderr
# (byte for byte) or expected/<case>.stderr_re (as many lines, each matched
# by the extended regex on the same line, for messages with a varying part).
check_expected() {
  local want_rc
  want_rc=$(cat "$expected/$case_name.rc")
  [ "$rc" = "$want_rc" ] || failed "exit status $rc, expected $want_rc"
  if [ -f "$expected/$case_name.stderr_re" ]; then
    local want got i
    mapfile -t want < "$expected/$case_name.stderr_re"
    mapfile -t got < "$out/stderr"
    [ ${#got[@]} = ${#want[@]} ] || failed "stderr has ${#got[@]} lines, expected ${#want[@]}"
    for ((i = 0; i < ${#want[@]}; i++)); do
      [[ ${got[i]:-} =~ ${want[i]} ]] || failed "stderr line $((i + 1)): '${got[i]:-}' does not match /${want[i]}/"
    done
    [ "$fail" = 0 ] || cat "$out/stderr" >&2
  elif ! diff -u "$expected/$case_name.stderr" "$out/stderr"; then
    failed "stderr differs from expected/$case_name.stderr"
  fi
}

stdout_has() { grep -qF -- "$1" "$out/stdout" || failed "stdout lacks: $1"; }
# The failure line (rank 3) is diagnosed as the initiating failure at
# FILE:LINE (which catalog entry names it is not this suite's business).
diagnosed_at() {
  stdout_has "INITIATING FAILURE"
  stdout_has "where    $1  rank 3"
}
# The good file alongside is still diagnosed.
good_diagnosed() { diagnosed_at good.log:41; }
no_raw_esc() {
  if LC_ALL=C grep -q $'\x1b' "$out/stdout"; then
    failed "raw ESC byte in stdout"
  fi
}
valid_json() { # FILE
  if command -v jq > /dev/null; then
    jq -e . "$1" > /dev/null || failed "invalid JSON"
  elif command -v python3 > /dev/null; then
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" || failed "invalid JSON"
  else
    echo "note: neither jq nor python3; JSON validity not checked"
  fi
}
json_field() { # NAME: the first "NAME": value in stdout
  grep -m1 -oE "\"$1\": [^,]+" "$out/stdout" | sed 's/.*: //'
}
rss_below_mib() { # MIB (BAD_INPUT_RSS_CHECK=0 skips: ASan's shadow memory and quarantine)
  if [ "${BAD_INPUT_RSS_CHECK:-1}" = 0 ]; then
    echo "note: peak RSS not checked in this build (${rss:-?} KiB)"
    return
  fi
  if [ -z "$rss" ]; then
    echo "note: /usr/bin/time not installed; peak RSS not checked"
    return
  fi
  echo "peak RSS: $((rss / 1024)) MiB"
  [ "$rss" -lt $(($1 * 1024)) ] || failed "peak RSS ${rss} KiB >= $1 MiB"
}

case $case_name in
  empty)
    run diagnose empty.log good.log
    check_expected
    good_diagnosed
    stdout_has "(2 sources,"
    ;;
  empty_alone)
    run diagnose empty.log
    check_expected
    stdout_has "no known failure signature found (1 source, 0 lines,"
    ;;
  nuls)
    # 1 MiB of NUL bytes: each is a soft break (style.md: convert, never
    # quit), not a line of the file, so it is one line (issue 32), and no
    # "long line" was cut.
    run diagnose --format json nuls.log
    check_expected
    [ "$(json_field lines)" = 1 ] || failed "lines = $(json_field lines), expected 1"
    [ "$(json_field long_lines_cut)" = 0 ] || failed "long_lines_cut = $(json_field long_lines_cut), expected 0"
    run diagnose nuls.log good.log
    [ "$rc" = 1 ] || failed "with good.log: exit status $rc, expected 1"
    good_diagnosed
    ;;
  random_binary)
    run diagnose random.bin good.log
    check_expected
    good_diagnosed
    no_raw_esc
    ;;
  invalid_utf8)
    run_columns=400 # the line whole, unwrapped
    run diagnose invalid_utf8.log
    check_expected
    diagnosed_at invalid_utf8.log:1
    stdout_has 'NCCL WARN Cuda failure 700'
    stdout_has '\xff\xfe \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80'
    run diagnose --format json invalid_utf8.log
    valid_json "$out/stdout"
    run grep --json invalid_utf8.log
    while IFS= read -r line; do
      printf '%s' "$line" > "$out/line.json"
      valid_json "$out/line.json"
    done < "$out/stdout"
    ;;
  escapes)
    # Wide enough that the escaped line is not wrapped: the check reads it whole.
    run_columns=400
    run diagnose escapes.log
    check_expected
    diagnosed_at escapes.log:1
    no_raw_esc
    stdout_has 'enqueue.cc:1556 \e]0;title\x07\e[2JNCCL WARN Cuda failure 700'
    run grep escapes.log
    no_raw_esc
    run diagnose --format json escapes.log
    valid_json "$out/stdout"
    ;;
  long_line)
    # 200 MB with no newline, alongside the good file: memory stays bounded
    # by the reader's buffer (1 MiB), not by the line.
    run diagnose long_line.log good.log
    check_expected
    good_diagnosed
    rss_below_mib 64
    ;;
  crlf | cr_only)
    # The failure line crosses the 64 KiB mark; it must be found whole, on
    # rank 3, without its line end.
    # (a lone CR is a soft break, not a line of the file: the CR-only file
    # is one line, as grep -n and editors that count '\n' number it)
    file=$case_name.log
    at=1 total=1
    [ "$case_name" = crlf ] && at=656 total=676
    # (the path comes first: see the ignore_then_path case)
    run grep "$file" --signature nccl.nvls.cuda-700
    check_expected
    stdout_has "$file:$at: nccl.nvls.cuda-700 rank=3 time=2024-11-29 17:59:58.000: $(cat fail_line.txt)"
    if LC_ALL=C grep -q $'\r' "$out/stdout"; then
      failed "a CR byte reached stdout"
    fi
    run diagnose --format json "$file"
    [ "$(json_field lines)" = "$total" ] || failed "lines = $(json_field lines), expected $total"
    [ "$(json_field long_lines_cut)" = 0 ] || failed "long_lines_cut = $(json_field long_lines_cut), expected 0"
    ;;
  truncated_line)
    run diagnose truncated_line.log
    check_expected
    diagnosed_at truncated_line.log:41
    ;;
  truncated_gzip)
    # The readable part is diagnosed AND the damage is reported, naming the
    # file; an error wins, so the exit status is 2.
    run diagnose truncated.log.gz good.log
    check_expected
    diagnosed_at truncated.log.gz:41
    ;;
  nul_prefix_gzip)
    run diagnose nul_prefix.log.gz
    check_expected
    diagnosed_at nul_prefix.log.gz:41 # 4096 NULs before the first line are not lines
    ;;
  zip_bomb)
    # 2 GB of zeros in ~2 MB of gzip: stopped as a decompression bomb (more
    # than 1000:1 past 256 MiB, src/source/input.cpp) with a one-line error,
    # in bounded memory; the good file alongside is still diagnosed.
    run diagnose --format json bomb.gz good.log
    check_expected
    rss_below_mib 64
    [ "$(json_field sources)" = 2 ] || failed "sources = $(json_field sources), expected 2 (bomb.gz read as a log)"
    [ "$(json_field failures)" = 1 ] || failed "failures = $(json_field failures), expected 1"
    ;;
  zip_bomb_text)
    # The same zeros behind a gzip member holding the failure line: the line
    # before the bomb is still diagnosed, then the bomb is stopped.
    run diagnose bomb_text.gz
    check_expected
    rss_below_mib 64
    diagnosed_at bomb_text.gz:1
    ;;
  fifo)
    rm -f "$out/pipe"
    mkfifo "$out/pipe"
    cat good.log > "$out/pipe" &
    writer=$!
    ln -sfn "$out/pipe" fifo.log
    run diagnose fifo.log
    kill "$writer" 2> /dev/null
    wait "$writer" 2> /dev/null
    rm -f fifo.log
    check_expected
    diagnosed_at fifo.log:41
    ;;
  dir_loop)
    # loopdir/sub/loop -> .. and a FIFO with no writer: the walk neither loops
    # nor blocks, and finds the one log once.
    run diagnose loopdir
    check_expected
    diagnosed_at loopdir/sub/rank_0.log:41
    stdout_has "(1 source,"
    ;;
  unreadable)
    if [ "$(id -u)" = 0 ]; then
      echo "skipped: running as root, chmod 000 does not stop reading"
      exit 125
    fi
    run diagnose unreadable.log good.log
    check_expected
    good_diagnosed
    ;;
  dangling_symlink)
    run diagnose dangling.log good.log
    check_expected
    good_diagnosed
    ;;
  ignore_then_path)
    # A repeatable option followed by a path: the path must stay a path (not
    # be taken as a second --ignore value, leaving stdin to be read).
    run diagnose --ignore nccl.comm-init good.log
    check_expected
    good_diagnosed
    stdout_has "(1 source, 95 lines,"
    ;;
  own_reports)
    # In a walk denpex's own reports are skipped by content; named, one is
    # an error (a report quotes log lines: read back, they would be
    # diagnosed twice, at the report's line numbers).
    run diagnose withreports
    [ "$rc" = 1 ] || failed "walk: exit status $rc, expected 1"
    diagnosed_at withreports/rank_3.log:41
    stdout_has "(1 source,"
    [ -s "$out/stderr" ] && failed "walk: unexpected stderr: $(cat "$out/stderr")"
    run diagnose withreports/denpex.json good.log
    check_expected
    good_diagnosed
    ;;
  unreadable_subdir)
    # Every unreadable directory is one named error and the walk goes on
    # (before: the walk ended there, and files after it were silently lost).
    runner=()
    if [ "$(id -u)" = 0 ]; then
      if ! command -v setpriv > /dev/null ||
        ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r lockeddir/c/rank_3.log; then
        echo "skipped: running as root and cannot drop to an unprivileged user"
        exit 125
      fi
      runner=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    fi
    rc=0
    NO_COLOR=1 COLUMNS=100 timeout "$limit" "${runner[@]}" "$bin" diagnose lockeddir > "$out/stdout" 2> "$out/stderr" < /dev/null || rc=$?
    check_expected
    diagnosed_at lockeddir/c/rank_3.log:41
    ;;
  pseudo_fs)
    # /proc in a walk is named and skipped (it holds /proc/kmsg, which
    # blocks a reader forever); a named character device is read until it
    # is quiet (/dev/kmsg where it is readable) or until a bound (/dev/zero).
    run diagnose /proc good.log /dev/zero
    check_expected
    good_diagnosed
    ;;
  output_paths)
    # --output never destroys what it should not: an input is refused (and
    # left whole), two outputs on one path are refused, a device is written
    # in place (not replaced by a regular file), a symlink's target is
    # written and the link kept.
    cp good.log "$out/in.log"
    sum=$(cksum < "$out/in.log")
    run diagnose --output json="$out/in.log" "$out/in.log"
    [ "$rc" = 2 ] || failed "output onto its input: exit status $rc, expected 2"
    [ "$(cksum < "$out/in.log")" = "$sum" ] || failed "the input log was overwritten"
    grep -q "is also an input" "$out/stderr" || failed "no message for an output onto an input: $(cat "$out/stderr")"
    # Inside an input directory: a log is refused even when it mentions
    # denpex; denpex's own report there (the epilogue's) is replaced.
    mkdir -p "$out/dir"
    cp good.log "$out/dir/rank_3.log"
    echo "pip install denpex; NCCL INFO Bootstrap: Using eth0" > "$out/dir/notes.log"
    run diagnose --output json="$out/dir/notes.log" "$out/dir"
    [ "$rc" = 2 ] || failed "output onto a log in an input directory: exit status $rc, expected 2"
    grep -q "pip install denpex" "$out/dir/notes.log" || failed "a log in the input directory was overwritten"
    for round in 1 2; do
      run diagnose --output json="$out/dir/denpex.json" "$out/dir"
      [ "$rc" = 1 ] || failed "the epilogue's report, round $round: exit status $rc, expected 1"
    done
    run diagnose --output json="$out/r.json" --output sarif="$out/r.json" good.log
    [ "$rc" = 2 ] || failed "two outputs on one path: exit status $rc, expected 2"
    run diagnose --output json=/dev/null good.log
    [ "$rc" = 1 ] || failed "output to /dev/null: exit status $rc, expected 1"
    [ -c /dev/null ] || failed "/dev/null is no longer a character device"
    ln -sfn "$out/target.json" "$out/link.json"
    run diagnose --output json="$out/link.json" good.log
    [ "$rc" = 1 ] || failed "output through a symlink: exit status $rc, expected 1"
    [ -L "$out/link.json" ] || failed "the symlink was replaced"
    valid_json "$out/target.json"
    rc=0
    "$bin" diagnose good.log > /dev/full 2> "$out/stderr" || rc=$?
    [ "$rc" = 2 ] || failed "stdout on /dev/full: exit status $rc, expected 2"
    grep -q "^denpex: error: standard output: write failed" "$out/stderr" || failed "no message for a failed write: $(cat "$out/stderr")"
    rc=0
    "$bin" diagnose --output json=/dev/full good.log > /dev/null 2> "$out/stderr" || rc=$?
    [ "$rc" = 2 ] || failed "--output on /dev/full: exit status $rc, expected 2"
    ;;
  findings_field_types)
    # Findings with one field of the wrong type (null, a string, a list, an
    # object, a number past 2^64 where each was something else): each is at
    # most one named error, the rest merge, and the failure in the good log
    # beside it is still named. Before: a raw JSON-library exception ended the
    # process (abort) and named no file.
    "$bin" diagnose --format jsonl good.log > "$out/base.jsonl" 2> /dev/null
    python3 - "$out/base.jsonl" "$out" << 'PY'
import json, sys
base = [json.loads(l) for l in open(sys.argv[1])]
wrong = [None, "x", [1], {"a": 1}, 18446744073709551616, -1, True]
n = 0
def paths(v, at=()):
    if isinstance(v, dict):
        for k, x in v.items():
            yield at + (k,)
            yield from paths(x, at + (k,))
    elif isinstance(v, list) and v:
        yield at + (0,)
        yield from paths(v[0], at + (0,))
seen = set()
fields = []
for r, rec in enumerate(base):
    for p in paths(rec):
        key = (rec.get("type"), tuple(x if isinstance(x, str) else 0 for x in p))
        if key not in seen:
            seen.add(key)
            fields.append((r, p))
# 64 fields spread over every record type (a sanitizer build runs each ~1 s)
stride = max(1, len(fields) // 64)
for r, p in fields[::stride]:
        w = wrong[n % len(wrong)]
        recs = json.loads(json.dumps(base))
        target = recs[r]
        for x in p[:-1]:
            target = target[x]
        target[p[-1]] = w
        with open(f"{sys.argv[2]}/v_{n:04d}.jsonl", "w") as f:
            for x in recs:
                f.write(json.dumps(x) + "\n")
        n += 1
print(n, "variants")
PY
    variants=0
    for v in "$out"/v_*.jsonl; do
      variants=$((variants + 1))
      run diagnose "$v" good.log
      case $rc in 0 | 1 | 2) ;; *) failed "$(basename "$v"): exit status $rc" ;; esac
      grep -v '^denpex: ' "$out/stderr" | grep -q . && failed "$(basename "$v"): stderr: $(head -3 "$out/stderr")"
      [ "$(wc -l < "$out/stderr")" -le 2 ] || failed "$(basename "$v"): more than two lines on stderr"
      # (a mutated stamp or file name may move which copy is named first)
      stdout_has "INITIATING FAILURE  [critical] nccl.nvls.cuda-700"
      [ "$fail" = 0 ] || break
    done
    [ "$variants" -ge 50 ] || failed "only $variants variants"
    rc=$(cat "$expected/$case_name.rc")
    ;;
  missing)
    run diagnose does-not-exist.log good.log
    check_expected
    good_diagnosed
    ;;
  *)
    echo "unknown case $case_name" >&2
    exit 1
    ;;
esac
[ "$fail" = 0 ] && echo "ok [$case_name]"
exit $fail
