#!/usr/bin/env python3
"""The WebAssembly core gives the CLI's answer, byte for byte.

    equal_test.py DENPEX CORE_JS TESTDATA

For every golden `diagnose` case (testdata/cases/*/*.args) whose options the
core takes (paths, --format, --year, --fail-on, -q, --brief), runs the CLI
with --format json and the core under Node on the same files, named the
same, and compares the two JSON documents whole. The files are the sources
the CLI read (its JSON Lines summary lists them), so a directory is read as
the CLI walked it. Cases the core cannot take are counted and named: an
archive or a compressed file (the core reads text; the page decompresses),
--node, --redact, --formats, --clock-skew, and inputs that do not exist.
Exit 77 (skipped) without node or the core.
"""
import json
import os
import shutil
import subprocess
import sys

BIN, CORE, TESTDATA = (os.path.abspath(a) for a in sys.argv[1:4])
HERE = os.path.dirname(os.path.abspath(__file__))
TAKES_VALUE = {"--format", "--fail-on", "--year"}
FLAGS = {"-q", "--quiet", "--brief"}

if not shutil.which("node") or not os.path.exists(CORE):
    print("node or %s missing: skipped (make web)" % CORE)
    sys.exit(77)


def case_inputs(args):
    """(year, paths) when the core takes every option of `args`, else the reason it does not."""
    year, paths, i = 0, [], 1
    while i < len(args):
        a = args[i]
        if a in TAKES_VALUE:
            if a == "--year":
                year = int(args[i + 1])
            i += 2
            continue
        if a.startswith("-"):
            if a not in FLAGS:
                return None, "option " + a
            i += 1
            continue
        paths.append(a)
        i += 1
    return (year, paths), None


def main():
    seen, compared, skipped, failed = set(), 0, [], []
    cases = sorted(os.path.join(r, f) for r, _, fs in os.walk(os.path.join(TESTDATA, "cases")) for f in fs
                   if f.endswith(".args"))
    for args_file in cases:
        args = [l.rstrip("\n") for l in open(args_file) if l.strip()]
        if not args or args[0] != "diagnose":
            continue
        got, why = case_inputs(args)
        name = os.path.relpath(args_file, TESTDATA)
        if got is None:
            skipped.append("%s (%s)" % (name, why))
            continue
        year, paths = got
        if (year, tuple(paths)) in seen:
            continue
        seen.add((year, tuple(paths)))
        base = ["--no-config", "--year", str(year)] if year else ["--no-config"]
        cli = subprocess.run([BIN, "diagnose", "--format", "json", "--fail-on", "never", *base, *paths], cwd=TESTDATA,
                             capture_output=True)
        jl = subprocess.run([BIN, "diagnose", "--format", "jsonl", "--fail-on", "never", *base, *paths], cwd=TESTDATA,
                            capture_output=True)
        try:
            files = [f["file"] for f in json.loads(jl.stdout.splitlines()[-1])["files"]]
        except (ValueError, IndexError, KeyError):
            skipped.append("%s (the CLI read nothing)" % name)
            continue
        if not files or not all(os.path.isfile(os.path.join(TESTDATA, f)) for f in files) or any(
                f.endswith((".gz", ".zip", ".tar", ".zst", ".xz", ".bz2")) for f in files):
            skipped.append("%s (an archive or compressed input)" % name)
            continue
        web = subprocess.run(["node", os.path.join(HERE, "diagnose.mjs"), CORE, "json", str(year), *files],
                             cwd=TESTDATA, capture_output=True)
        if web.returncode != 0:
            failed.append(name)
            print("FAIL %s: the core exited %d: %s" % (name, web.returncode, web.stderr.decode()[-500:]),
                  file=sys.stderr)
            continue
        a, b = json.loads(cli.stdout), json.loads(web.stdout)
        if a != b:
            failed.append(name)
            ta = json.dumps(a, indent=1, sort_keys=True).splitlines()
            tb = json.dumps(b, indent=1, sort_keys=True).splitlines()
            import difflib
            print("FAIL %s: the JSON differs:\n%s" % (name, "\n".join(list(difflib.unified_diff(ta, tb, "cli", "wasm",
                                                                                               lineterm=""))[:40])),
                  file=sys.stderr)
            continue
        compared += 1
    print("%d cases: the WebAssembly core's JSON equals the CLI's; %d not taken by the core:" % (compared, len(skipped)))
    for s in skipped:
        print("  " + s)
    if failed or compared == 0:
        print("%d differ" % len(failed), file=sys.stderr)
        return 1
    return 0


sys.exit(main())
