#!/usr/bin/env python3
"""Scores denpex on a blind set (docs/accuracy.md, "How a blind set is made").

A set is a directory of logs and a truth.jsonl, one object a log:
  {"file", "source", "failed", "cause", "keywords": [...], "cause_in_text",
   "rank": int|null, "specific": str, ...}

For each log it runs `denpex diagnose --format json` and scores:
  named    a failed log whose cause is in its text: a keyword is in the top
           incident (signature, title, headline, line) -> HIT, else MISS
           (another incident leads) or SILENT (none).
  verdict  the same, reading the verdict line alone (what --brief prints).
  rank     where the truth names the initiating rank: the verdict's who
           names that rank (a local rank does not count).
  sharp    where a specific cause exists: the head is not generic evidence
           (python.exception, a process death) and is named.
  quiet    a benign log: denpex exits 0.

Usage: score.py DENPEX SET_DIR [SET_DIR...] [--verbose]
Prints one row per set and the totals; exits 0.
"""
import json
import os
import re
import subprocess
import sys

GENERIC = re.compile(
    r"^(python\.(exception|traceback)|cxx\.uncaught-exception|torchelastic\.(worker-sig\w+|child-failed|worker-failed-exitcode)"
    r"|slurm\.srun-task-(killed|exit-code)|mpi\.rank-exited-on-signal|host\.process-killed-shell|ray\.task-error"
    r"|openmpi\.nonzero-exit-abort|horovod\.process-exit-code)$")


def run(denpex, path):
    p = subprocess.run([denpex, "diagnose", "--format", "json", "--color=never", path],
                       capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        doc = None
    return p.returncode, doc


def has_keyword(text, keywords):
    text = text.lower()
    text = text.replace('-', ' ')
    return any(k.lower().replace('-', ' ') in text for k in keywords)


def head_text(inc):
    w = inc.get("where") or {}
    return " ".join(str(x) for x in (inc.get("signature"), inc.get("title"), inc.get("headline"), w.get("text")) if x)


def who_rank(verdict):
    m = re.match(r"(?:no cause in these logs; first report: )?rank (\d+)\b", verdict.get("who") or "")
    return int(m.group(1)) if m else None


def score_set(denpex, d, verbose):
    truth = [json.loads(l) for l in open(os.path.join(d, "truth.jsonl")) if l.strip()]
    s = dict(named=0, named_of=0, verdict=0, rank=0, rank_of=0, sharp=0, sharp_of=0, quiet=0, quiet_of=0)
    rows = []
    for t in truth:
        rc, doc = run(denpex, os.path.join(d, t["file"]))
        incs = (doc or {}).get("incidents") or []
        verdict = (doc or {}).get("verdict") or {}
        top = incs[0] if incs else None
        if not t.get("failed"):
            s["quiet_of"] += 1
            s["quiet"] += rc == 0
            rows.append((t["file"], "QUIET" if rc == 0 else "NOISY", verdict.get("line", "")))
            continue
        if not t.get("cause_in_text", True):
            rows.append((t["file"], "n/a", verdict.get("line", "")))
            continue
        s["named_of"] += 1
        hit = top is not None and has_keyword(head_text(top), t["keywords"])
        s["named"] += hit
        v_hit = verdict.get("failure") and has_keyword(verdict.get("line", ""), t["keywords"])
        s["verdict"] += bool(v_hit)
        mark = "HIT" if hit else ("MISS" if top else "SILENT")
        if t.get("rank") is not None:
            s["rank_of"] += 1
            ok = who_rank(verdict) == t["rank"]
            s["rank"] += ok
            mark += " rank:" + ("ok" if ok else "WRONG(%s vs %s)" % (who_rank(verdict), t["rank"]))
        if t.get("specific"):
            s["sharp_of"] += 1
            sharp = hit and top is not None and not GENERIC.match(top.get("signature", ""))
            s["sharp"] += sharp
            mark += " sharp:" + ("ok" if sharp else "no")
        rows.append((t["file"], mark, verdict.get("line", "")))
    if verbose:
        for f, m, line in rows:
            print("  %-55s %-34s %s" % (f, m, line[:150]))
    return s


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    verbose = "--verbose" in sys.argv
    denpex, sets = args[0], args[1:]
    total = {}
    print("%-10s %-12s %-12s %-10s %-10s %-8s" % ("set", "named", "verdict", "rank", "sharp", "quiet"))
    for d in sets:
        s = score_set(denpex, d, verbose)
        for k, v in s.items():
            total[k] = total.get(k, 0) + v
        print("%-10s %-12s %-12s %-10s %-10s %-8s" % (
            os.path.basename(d.rstrip("/")), "%d/%d" % (s["named"], s["named_of"]), "%d/%d" % (s["verdict"], s["named_of"]),
            "%d/%d" % (s["rank"], s["rank_of"]), "%d/%d" % (s["sharp"], s["sharp_of"]), "%d/%d" % (s["quiet"], s["quiet_of"])))
    if len(sets) > 1:
        s = total
        print("%-10s %-12s %-12s %-10s %-10s %-8s" % (
            "total", "%d/%d" % (s["named"], s["named_of"]), "%d/%d" % (s["verdict"], s["named_of"]),
            "%d/%d" % (s["rank"], s["rank_of"]), "%d/%d" % (s["sharp"], s["sharp_of"]), "%d/%d" % (s["quiet"], s["quiet_of"])))


if __name__ == "__main__":
    main()
