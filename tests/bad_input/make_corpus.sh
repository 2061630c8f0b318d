#!/usr/bin/env bash
# Creates the bad-input corpus (issue 9) in DIR at test time; nothing big is
# committed. Inputs that are slow to make (the 200 MB line, the 2 GB gzip
# bomb) are kept between runs and remade only when missing or resized.
#
# usage: make_corpus.sh DIR TESTDATA
# Environment: BAD_INPUT_LONG_MB (default 200), BAD_INPUT_BOMB_MB (default 2048).
set -euo pipefail
dir=$1
testdata=$2
long_mb=${BAD_INPUT_LONG_MB:-200}
bomb_mb=${BAD_INPUT_BOMB_MB:-2048}
mkdir -p "$dir"
cd "$dir"

# The known-good log, passed alongside each bad input: it must still be
# diagnosed (nccl.nvls.cuda-700 on rank 3).
cp "$testdata/sample/train.log" good.log

# The failure line used inside the odd files: testdata/sample/train.log line
# 41, printed by NCCL's CUCHECK (src/include/checks.h:
# WARN("Cuda failure %d '%s'", err, errStr)) behind torchrun's [rankN]: prefix.
fail_line=$(sed -n 41p good.log)
case $fail_line in
  *"NCCL WARN Cuda failure 700"*) ;;
  *) echo "make_corpus: testdata/sample/train.log line 41 is no longer the CUDA 700 line" >&2; exit 1 ;;
esac
printf '%s\n' "$fail_line" > fail_line.txt
# Filler that matches no signature: line 3 of the sample, NCCL's bootstrap
# interface line (src/bootstrap.cc: INFO(NCCL_INIT, "Bootstrap : Using %s", ...)).
filler=$(sed -n 3p good.log)

: > empty.log
head -c 1048576 /dev/zero > nuls.log
# 1 MiB of random bytes from a fixed seed (perl's srand is deterministic).
perl -e 'srand(42); print pack("C*", map { int(rand(256)) } 1 .. 1048576)' > random.bin

# Invalid UTF-8 inside a matched line: a lone continuation byte, an overlong
# form, a UTF-16 surrogate and a code point above U+10FFFF.
{ printf '%s' "$fail_line"; printf ' \xff\xfe \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80\n'; } > invalid_utf8.log

# Terminal escape sequences inside a matched line: an OSC window-title
# sequence and "clear screen".
printf '%s\n' "$fail_line" | sed 's/NCCL WARN/\x1b]0;title\x07\x1b[2JNCCL WARN/' > escapes.log

# CRLF and CR-only line endings. The failure line is placed across the 64 KiB
# mark (the reader's default max_line) so that a reader that does not treat a
# lone CR as a line end cuts the line in two.
make_eol_file() { # EOL OUT
  local eol=$1 out=$2
  perl -e '
    my ($eol, $filler, $fail) = @ARGV;
    $eol = $eol eq "crlf" ? "\r\n" : "\r";
    my $s = "";
    # the cut at 65536 falls inside "Cuda failure 700"
    my $cut = index($fail, "Cuda failure 700") + 6;
    $s .= $filler . $eol while length($s) + length($filler) + length($eol) <= 65536 - $cut;
    $s .= "x" x (65536 - $cut - length($s) - length($eol)) . $eol;
    $s .= $fail . $eol;
    $s .= $filler . $eol for 1 .. 20;
    print $s;' "$eol" "$filler" "$fail_line" > "$out"
}
make_eol_file crlf crlf.log
make_eol_file cr cr_only.log

# A log cut in the middle of a line (a crash while writing): the first 6000
# bytes of the sample (the failure line is line 41, before the cut).
head -c 6000 good.log > truncated_line.log

# A gzip cut at three quarters of its length: the readable part holds the
# failure line.
gzip -9 -n -c good.log > sample.log.gz
head -c $(($(stat -c %s sample.log.gz) * 3 / 4)) sample.log.gz > truncated.log.gz

# A log.gz whose text starts with zero blocks (a preallocated or crash-reused
# file): it must be read as a log, not as an (empty) tar archive.
{ head -c 4096 /dev/zero; cat good.log; } | gzip -n -c > nul_prefix.log.gz

# The 200 MB line with no newline.
want=$((long_mb * 1048576))
if [ ! -f long_line.log ] || [ "$(stat -c %s long_line.log)" != "$want" ]; then
  head -c "$want" /dev/zero | tr '\0' 'a' > long_line.log
fi

# Zip-bomb-like inputs: BOMB_MB of zeros, gzip-compressed (~1000:1). bomb.gz
# is only zeros; bomb_text.gz is a second gzip member holding the failure line
# in front of the same zeros (a multi-member gzip).
if [ ! -f bomb.gz ] || [ "$(cat bomb.size 2> /dev/null)" != "$bomb_mb" ]; then
  head -c $((bomb_mb * 1048576)) /dev/zero | gzip -n -c > bomb.gz
  echo "$bomb_mb" > bomb.size
fi
{ gzip -n -c fail_line.txt; cat bomb.gz; } > bomb_text.gz

# A directory with a symlink loop (sub/loop -> ..) and a FIFO with no writer.
rm -rf loopdir
mkdir -p loopdir/sub
cp good.log loopdir/sub/rank_0.log
ln -s .. loopdir/sub/loop
mkfifo loopdir/sub/pipe

# A dangling symlink, named explicitly.
ln -sfn does-not-exist dangling.log

# An unreadable file (still readable to root; that case skips).
rm -f unreadable.log
cp good.log unreadable.log
chmod 000 unreadable.log
# denpex's own reports beside a log (the epilogue's denpex.json, a text and
# a SARIF report): a walk skips them by content, whatever their names.
rm -rf withreports
mkdir -p withreports
cp good.log withreports/rank_3.log
printf '{\n  "schema_version": 1,\n  "tool": {\n    "name": "denpex",\n    "version": "0.1.0"\n  },\n  "lines": ["NCCL WARN Cuda failure 700"]\n}\n' > withreports/denpex.json
printf 'denpex: rank 3 (node-017, GPU 3) nccl.nvls.cuda-700: NCCL kernel hit an illegal memory access\n  1 failure diagnosed (1 source, 95 lines, 63 matches)\n\nINITIATING FAILURE  [critical] nccl.nvls.cuda-700\n' > withreports/report.out
printf '{\n  "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",\n  "version": "2.1.0",\n  "runs": [{"tool": {"driver": {"name": "denpex"}}}]\n}\n' > withreports/findings.sarif

# A walk with a subdirectory that cannot be listed between two that can
# (the unreadable_subdir case runs as an unprivileged user).
rm -rf lockeddir
mkdir -p lockeddir/a lockeddir/b lockeddir/c
cp good.log lockeddir/c/rank_3.log
echo "nothing to see" > lockeddir/a/rank_0.log
chmod 000 lockeddir/b
chmod 755 . lockeddir lockeddir/a lockeddir/c
chmod 644 lockeddir/a/rank_0.log lockeddir/c/rank_3.log
echo "corpus ready in $dir"
