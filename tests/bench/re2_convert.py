#!/usr/bin/env python3
"""Convert denpex's exported RE2 patterns for the baseline tools.

  re2_convert.py --to ere  patterns.txt > patterns.ere   # GNU grep -E -f
  re2_convert.py --to rust patterns.txt > patterns.rg    # ripgrep -f

`denpex signatures export --format patterns` prints one RE2 pattern per line.
Neither baseline takes that file as is:

* ripgrep (Rust regex) accepts RE2 syntax but joins the lines of -f with `|`
  into one regex, so the same group name in two patterns is an error
  ("duplicate capture group name") and an inline `(?i)` leaks into the
  patterns after it. --to rust drops group names (`(?P<x>` -> `(?:`) and wraps
  each pattern in `(?-u:...)`: RE2's `\\b \\w \\d \\s` are ASCII, Rust's are
  Unicode unless `(?-u)`, and a Unicode `\\b` keeps ripgrep 13 off its DFA
  (about 90x slower on these patterns; --unicode keeps that behaviour to
  measure it). `\\"` (fine in RE2, an error in Rust) becomes `"`.
* GNU grep -E (POSIX ERE + GNU extensions) has no `(?:`, `(?P<x>`, `(?i)`,
  lazy quantifiers or `\\d`, and a backslash inside a bracket is literal.
  --to ere rewrites: groups -> `(`, `*?`/`+?`/`??` -> greedy (same set of
  matching lines), `\\d` -> `[0-9]`, `\\D` -> `[^0-9]`, `\\s`/`\\w` inside
  brackets -> `[:space:]`/`[:alnum:]_`, escaped punctuation -> the literal
  character (or kept where ERE needs the backslash), and `(?i)` scopes ->
  per-letter `[aA]` classes, so case-insensitivity is kept exactly.
  `\\b \\B \\w \\W \\s \\S` outside brackets are GNU extensions and stay.

Both modes only ever change the *syntax*; a line matches the converted set
iff it matches one of the RE2 patterns (checked by comparing counts in
run.sh). A pattern that cannot be converted is left out and reported.

A summary of what was converted goes to stderr.
"""

import argparse
import collections
import sys

ERE_SPECIAL = set(".[]()*+?{}|^$\\")
# regex-syntax (ripgrep 13) allows escaping only these; `\\"` is an error.
RUST_META = set("\\.+*?()|[]{}^$#&-~")


class Unsupported(Exception):
    pass


def fold_class_item(ch):
    if ch.isalpha() and ch.lower() != ch.upper():
        return ch.lower() + ch.upper()
    return ch


def to_ere(pat, stats):
    out = []
    i = 0
    n = len(pat)
    # One entry per open group: was case-insensitivity on when it opened?
    icase_stack = []
    icase = False

    def quantifier_follows(j):
        return j < n and pat[j] in "*+?{"

    while i < n:
        c = pat[i]
        if c == "\\":
            if i + 1 >= n:
                raise Unsupported("trailing backslash")
            e = pat[i + 1]
            i += 2
            if e == "d":
                out.append("[0-9]")
                stats["\\d -> [0-9]"] += 1
            elif e == "D":
                out.append("[^0-9]")
                stats["\\D -> [^0-9]"] += 1
            elif e in "bBwWsS":
                out.append("\\" + e)  # GNU extensions
            elif e in "AzQEpPx0123456789nrtfv":
                raise Unsupported("escape \\" + e)
            elif e in ERE_SPECIAL:
                out.append("\\" + e)
            else:
                out.append(e)
                stats["\\<punct> -> <punct>"] += 1
            continue
        if c == "[":
            j, cls = parse_class(pat, i, icase, stats)
            out.append(cls)
            i = j
            continue
        if c == "(":
            if pat.startswith("(?:", i):
                out.append("(")
                icase_stack.append(icase)
                stats["(?: -> ("] += 1
                i += 3
                continue
            if pat.startswith("(?P<", i):
                close = pat.index(">", i)
                out.append("(")
                icase_stack.append(icase)
                stats["(?P<name> -> ("] += 1
                i = close + 1
                continue
            if pat.startswith("(?i)", i):
                icase = True
                stats["(?i) -> [aA] classes"] += 1
                i += 4
                continue
            if pat.startswith("(?i:", i):
                icase_stack.append(icase)
                icase = True
                out.append("(")
                stats["(?i) -> [aA] classes"] += 1
                i += 4
                continue
            if pat.startswith("(?", i):
                raise Unsupported("group flags " + pat[i:i + 4])
            out.append("(")
            icase_stack.append(icase)
            i += 1
            continue
        if c == ")":
            out.append(")")
            icase = icase_stack.pop() if icase_stack else False
            i += 1
            continue
        if c in "*+?":
            out.append(c)
            i += 1
            if i < n and pat[i] == "?":
                stats["lazy quantifier -> greedy"] += 1
                i += 1
            continue
        if c == "{":
            close = pat.find("}", i)
            if close < 0:
                out.append("\\{")
                i += 1
                continue
            out.append(pat[i:close + 1])
            i = close + 1
            if i < n and pat[i] == "?":
                stats["lazy quantifier -> greedy"] += 1
                i += 1
            continue
        if icase and c.isalpha() and c.lower() != c.upper():
            out.append("[" + c.lower() + c.upper() + "]")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def parse_class(pat, i, icase, stats):
    """Parses the bracket expression starting at pat[i] == '['; returns (end, ERE text)."""
    j = i + 1
    negate = False
    if j < len(pat) and pat[j] == "^":
        negate = True
        j += 1
    items = []  # plain characters, ranges "a-z" and named classes "[:space:]"
    has_rbracket = has_dash = has_caret = False
    first = True
    while True:
        if j >= len(pat):
            raise Unsupported("unterminated bracket")
        c = pat[j]
        if c == "]" and not first:
            j += 1
            break
        first = False
        if c == "\\":
            e = pat[j + 1]
            j += 2
            if e == "d":
                items.append("0-9")
                stats["\\d -> [0-9]"] += 1
            elif e == "s":
                items.append("[:space:]")
                stats["\\s in [] -> [:space:]"] += 1
            elif e == "w":
                items.append("[:alnum:]_")
                stats["\\w in [] -> [:alnum:]_"] += 1
            elif e in "DSWbB":
                raise Unsupported("\\" + e + " inside brackets")
            elif e == "]":
                has_rbracket = True
            elif e == "-":
                has_dash = True
            elif e == "^":
                has_caret = True
            elif e.isalnum():
                raise Unsupported("escape \\" + e + " inside brackets")
            else:
                items.append(e)
            if e not in "dsw":
                stats["escape inside [] -> literal"] += 1
            continue
        if c == "[" and pat.startswith("[:", j):
            close = pat.index(":]", j)
            items.append(pat[j:close + 2])
            j = close + 2
            continue
        if c == "-" and (pat[j + 1] == "]" or not items):
            has_dash = True
            j += 1
            continue
        if c == "^":
            has_caret = True
            j += 1
            continue
        if j + 2 < len(pat) and pat[j + 1] == "-" and pat[j + 2] != "]":
            lo, hi = c, pat[j + 2]
            if hi == "\\":
                raise Unsupported("escaped range end")
            rng = lo + "-" + hi
            if icase and lo.isalpha() and hi.isalpha():
                rng += lo.swapcase() + "-" + hi.swapcase()
            items.append(rng)
            j += 3
            continue
        items.append(fold_class_item(c) if icase else c)
        j += 1
    body = ("]" if has_rbracket else "") + "".join(items) + ("^" if has_caret else "") + ("-" if has_dash else "")
    if has_caret and body.startswith("^"):
        # '^' first would negate; only happens when it is the only item.
        return j, ("[^^]" if negate else "\\^")
    return j, "[" + ("^" if negate else "") + body + "]"


def to_rust(pat, stats, unicode=False):
    out = []
    i = 0
    while i < len(pat):
        if pat[i] == "\\":
            e = pat[i + 1]
            if not e.isalnum() and e not in RUST_META:
                out.append(e)  # Rust regex rejects escapes of non-meta punctuation
                stats["\\<punct> -> <punct>"] += 1
            else:
                out.append(pat[i:i + 2])
            i += 2
            continue
        if pat.startswith("(?P<", i):
            out.append("(?:")
            i = pat.index(">", i) + 1
            stats["(?P<name> -> (?:"] += 1
            continue
        out.append(pat[i])
        i += 1
    body = "".join(out)
    if unicode or not body.isascii():
        stats["wrapped in (?:...)"] += 1
        return "(?:" + body + ")"
    # RE2's \\b \\w \\d \\s are ASCII-only; Rust's are Unicode by default, and a
    # Unicode \\b keeps ripgrep 13 off its DFA (~90x slower here). (?-u:...)
    # is the exact RE2 meaning. A pattern with a non-ASCII literal must stay
    # Unicode (the only one has no \\b).
    stats["wrapped in (?-u:...) (ASCII classes, as RE2)"] += 1
    return "(?-u:" + body + ")"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--to", choices=("ere", "rust"), required=True)
    p.add_argument("--unicode", action="store_true",
                   help="rust: keep Rust's Unicode \\b/\\w/\\d/\\s (default: ASCII, as RE2)")
    p.add_argument("patterns")
    args = p.parse_args()
    stats = collections.Counter()
    skipped = []
    out = []
    with open(args.patterns, encoding="utf-8") as f:
        for line in f:
            pat = line.rstrip("\n")
            if not pat:
                continue
            try:
                out.append(to_ere(pat, stats) if args.to == "ere" else to_rust(pat, stats, args.unicode))
            except Unsupported as e:
                skipped.append((pat, str(e)))
    sys.stdout.write("\n".join(out) + "\n")
    summary = ", ".join("%s x%d" % (k, v) for k, v in sorted(stats.items()))
    print("re2_convert --to %s: %d patterns converted (%s)" % (args.to, len(out), summary or "nothing to change"),
          file=sys.stderr)
    for pat, why in skipped:
        print("re2_convert --to %s: SKIPPED (%s): %s" % (args.to, why, pat), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
