#!/usr/bin/env bash
# --format html escapes every byte from a log (issue 19): a log whose lines
# hold <script>, </svg>, quotes and an onerror attribute, in the exception
# text, the file name and a host name, cannot inject anything.
set -u
denpex=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log="$tmp/evil<script>.log"
cat > "$log" <<'LOG'
[rank0]:2024-11-29 10:00:00,000 INFO step 1 loss 2.0
[rank1]:2024-11-29 10:00:00,000 INFO step 1 loss 2.0
[rank0]:Traceback (most recent call last):
[rank0]:  File "/w/<script>alert(1)</script>.py", line 1, in <module>
[rank0]:ValueError: </svg><script>alert("x")</script><img src=x onerror='alert(2)'> & "quoted"
[rank1]:[E1129 10:10:00.000000 4100 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600043 milliseconds before timing out.
LOG
"$denpex" diagnose --format html "$log" > "$tmp/out.html"
fail() { echo "FAIL: $*" >&2; exit 1; }
grep -q 'initiating-mark' "$tmp/out.html" || fail "no timeline mark (the test log must draw one)"
[ "$(grep -o '<script>' "$tmp/out.html" | wc -l)" -eq 1 ] || fail "a <script> element came from the log"
[ "$(grep -o '</svg>' "$tmp/out.html" | wc -l)" -eq 1 ] || fail "a </svg> came from the log"
grep -q '<img' "$tmp/out.html" && fail "an <img> element came from the log"
grep -q "onerror='alert" "$tmp/out.html" && fail "an unescaped attribute came from the log"
grep -q '&lt;/svg&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;' "$tmp/out.html" || fail "the exception text is not shown escaped"
grep -q 'evil&lt;script&gt;.log' "$tmp/out.html" || fail "the file name is not shown escaped"
grep -q 'http://\|https://' "$tmp/out.html" && { grep -o 'https\?://[^" <]*' "$tmp/out.html" | grep -v 'w3.org' | head -3; fail "the page refers to a network address"; }
echo "ok: nothing injected; the page fetches nothing"
