#!/usr/bin/env bash
# --redact leaves no secret's bytes in any output (issue 32): every
# `diagnose --format`, the same formats through --output, --brief, the live
# line of --follow, and `grep` (text and --json), over a two-node log full
# of host names, addresses, e-mail, tokens and home directories. The
# secrets are listed one a line in secrets.txt beside the input.
set -u
bin=$1
case_dir=$2
input="$case_dir/input"
secrets="$case_dir/secrets.txt"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[ -s "$secrets" ] || { echo "no secrets listed in $secrets" >&2; exit 1; }
# Each secret is in the input, or the test would prove nothing.
while IFS= read -r s; do
  grep -rqF -- "$s" "$input" || { echo "secret '$s' is not in the input" >&2; exit 1; }
done < "$secrets"

# ... and in denpex's output without --redact, or masking it proves nothing.
{ "$bin" diagnose --format json "$input"; "$bin" grep --json "$input"; } > "$out/plain" 2>&1
while IFS= read -r s; do
  grep -qF -- "$s" "$out/plain" || { echo "secret '$s' is not in the unredacted output" >&2; exit 1; }
done < "$secrets"
rm "$out/plain"

formats=$("$bin" diagnose --help | sed -n 's/.*--format TEXT:{\([^}]*\)}.*/\1/p' | tr ',' ' ')
[ -n "$formats" ] || { echo "could not read the format list from --help" >&2; exit 1; }
n=0
for f in $formats; do
  "$bin" diagnose --redact --color=always --format "$f" --output "$f=$out/file.$f" "$input" > "$out/stdout.$f" 2> "$out/stderr.$f"
  n=$((n + 2))
done
"$bin" diagnose --redact --brief "$input" > "$out/brief" 2>&1
"$bin" diagnose --redact --follow --follow-idle 1 --format json "$input/deepspeed-2node.log" > "$out/follow.stdout" 2> "$out/follow.stderr"
"$bin" grep --redact "$input" > "$out/grep" 2>&1
"$bin" grep --redact --json "$input" > "$out/grep.json" 2>&1
n=$((n + 5))
status=0
for file in "$out"/*; do
  case $(basename "$file") in stderr.* | follow.stderr) ;; *) [ -s "$file" ] || { echo "empty output: $(basename "$file")" >&2; status=1; } ;; esac
  if leaked=$(grep -oF -f "$secrets" "$file" | sort -u | tr '\n' ' '); [ -n "$leaked" ]; then
    echo "$(basename "$file") leaks: $leaked" >&2
    status=1
  fi
done
[ "$(ls "$out" | wc -l)" -ge "$n" ] || { echo "expected $n outputs, got $(ls "$out" | wc -l)" >&2; status=1; }
[ $status -eq 0 ] && echo "no secret in $(ls "$out" | wc -l) outputs ($formats, brief, follow, grep)"
exit $status
