#!/usr/bin/env bash
# The man page: generated from the command line, it has the real
# sections, every subcommand and every option, renders without groff
# warnings and within 80 columns. Exit 77 (skipped) without groff.
set -u
bin=$1
command -v groff > /dev/null || { echo "groff not installed"; exit 77; }
page=$(mktemp)
trap 'rm -f "$page"' EXIT
"$bin" manpage > "$page" || { echo "FAIL: denpex manpage"; exit 1; }
fail=0
for section in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS" ENVIRONMENT FILES "SEE ALSO"; do
  grep -q "^\.SH $section\$" "$page" || { echo "FAIL: no $section section"; fail=1; }
done
for sub in diagnose grep explain signatures completion; do
  grep -q "^\.SS denpex $sub\$" "$page" || { echo "FAIL: no section for $sub"; fail=1; }
done
for opt in clock-skew follow-idle max-input-size fail-on; do
  grep -q "fB\\\\-\\\\-${opt//-/\\\\-}" "$page" || { echo "FAIL: --$opt is not documented"; fail=1; }
done
warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
[ -z "$warnings" ] || { echo "FAIL: groff warns: $warnings"; fail=1; }
wide=$(groff -man -Tascii -rLL=80n "$page" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g' | awk 'length($0) > 80' | head -3)
[ -z "$wide" ] || { echo "FAIL: lines wider than 80 columns: $wide"; fail=1; }
[ $fail = 0 ] && echo "manpage: ok"
exit $fail
