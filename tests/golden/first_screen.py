#!/usr/bin/env python3
"""The answer on the first screen (issue 32): for every diagnose case under
testdata/cases, the text report at 80 columns holds, in its first 24 lines,
the verdict line first, the initiating failure's id, who it was (its rank,
when known), the decisive log line and the fix.

usage: first_screen.py DENPEX TESTDATA
Exit: 0 pass, 1 fail.
"""
import glob
import json
import os
import subprocess
import sys

ROWS, COLS = 24, 80


def case_args(path, testdata):
    args, stdin = [], None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            continue
        line = line.replace("{testdata}", testdata)
        if line.startswith("stdin: "):
            stdin = os.path.join(testdata, line[len("stdin: "):])
            continue
        args.append(line)
    return args, stdin


def run(binary, args, stdin, testdata):
    env = dict(os.environ, NO_COLOR="1", COLUMNS=str(COLS))
    with open(stdin or os.devnull, "rb") as f:
        p = subprocess.run([binary] + args, stdin=f, capture_output=True, cwd=testdata, env=env, timeout=120)
    return p.stdout.decode("utf-8", "replace")


def main():
    binary, testdata = sys.argv[1], sys.argv[2]
    failures, checked = [], 0
    for path in sorted(glob.glob(os.path.join(testdata, "cases", "*", "*.args"))):
        args, stdin = case_args(path, testdata)
        if not args or args[0] != "diagnose":
            continue
        if any(a in ("--format", "-q", "--quiet", "--follow", "--brief") or a.startswith("--format=") for a in args):
            continue
        if any(a.startswith("--output") for a in args):
            continue
        text = run(binary, args, stdin, testdata)
        try:
            doc = json.loads(run(binary, args + ["--format", "json"], stdin, testdata))
        except json.JSONDecodeError:
            continue  # a usage or input error: no report to look at
        screen = "\n".join(text.splitlines()[:ROWS])
        flat = " ".join(screen.split())
        name = os.path.relpath(path, testdata)
        v = doc["verdict"]
        problems = []
        if not text.startswith("denpex: "):
            problems.append("the first line is not the verdict")
        if v["failure"]:
            inc = doc["incidents"][0]
            if v["signature"] not in flat:
                problems.append(f"id {v['signature']} not on the first screen")
            rank = inc["where"].get("rank")
            if rank is not None and f"rank {rank}" not in flat and "at once" not in v["who"]:
                problems.append(f"rank {rank} not on the first screen")
            line = " ".join(inc["where"]["text"].split())[:24]
            if line.isascii() and line and line not in flat:
                problems.append(f"the decisive line ({line!r}...) not on the first screen")
            for fix in v["fix"]:
                if fix not in flat:
                    problems.append(f"fix {fix!r} not on the first screen")
            if not v["fix"] and not v["no_cause"] and "\n  Fix\n" not in screen + "\n":
                problems.append("the Fix section does not start on the first screen")
        checked += 1
        if problems:
            failures.append(f"{name}: " + "; ".join(problems))
    if checked == 0:
        print("no diagnose cases found", file=sys.stderr)
        return 1
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    print(f"{checked} cases checked, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
