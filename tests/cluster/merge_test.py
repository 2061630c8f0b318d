#!/usr/bin/env python3
"""Whole-cluster diagnosis from per-node runs (issue 18): merging findings
decides like one run over all the raw logs.

    merge_test.py DENPEX [--nodes N] [--gpus G] [--keep DIR]

On a cluster written by gen_cluster.py (one node's GPU falls off the bus,
every other rank's watchdog fires), this runs

  1. one `denpex diagnose --format json` over all the raw logs;
  2. per node, from inside the node's directory as a job step would:
     `denpex diagnose --node node-XXXX --format jsonl . > findings/node-XXXX.jsonl`;
  3. the merge, `denpex diagnose --format json findings/`;
  4. a merge of merges: the nodes in two racks, each rack merged with
     `--format jsonl`, then the two racks' findings merged;
  5. the node findings concatenated into one file (`cat`), merged;
  6. a larger job written straight as findings by scale_findings.py (from
     this job's node findings; --scaled nodes, 400 by default) in two racks
     of 200: each rack's merge holds 1,800 sources named ./rank_N.log, one
     per node, and a summary record longer than the reader's 64 KiB line
     limit; the merge of the two racks' merges must equal the flat merge;

and requires every merge to give the one-pass answer: the initiating
signature, its rule, first line (file name, line, rank, host, GPU, time,
text), ranks, hosts and signals, every collateral and context group
(signature, count, ranks, hosts, first line), the unexplained groups and the
inference; and the summary's sources, bytes, lines and matches (what the
nodes read, not the JSON Lines records). It also checks the answer itself:
xid.79 on the failing node's GPU and rank, every other rank's watchdog as its
collateral, and that the merged JSON Lines summary says how many findings
files it merged.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_cluster  # noqa: E402  (the bus ids and host names the fixture uses)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def run(cmd, cwd=None, stdout=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode not in (0, 1):  # 1: a failure was diagnosed
        sys.exit("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace")))
    if p.stderr:
        sys.exit("%s wrote to stderr: %s" % (" ".join(cmd), p.stderr.decode(errors="replace")))
    return p


def diagnose_json(denpex, paths):
    return json.loads(run([denpex, "diagnose", "--format", "json"] + paths).stdout)


def where(w):
    """A line as the report shows it; the file by its name (the node runs saw ./rank_3.log)."""
    return {"file": os.path.basename(w["file"]), "line": w["line"], "rank": w["rank"], "host": w["host"],
            "pci": w["pci"], "time": w["time"], "text": w["text"]}


def group(g):
    return {"signature": g["signature"], "count": g["count"], "ranks": g["ranks"], "hosts": g["hosts"],
            "first": where(g["first"])}


def answer(doc):
    """What must not depend on how the logs were read."""
    s = doc["summary"]
    out = {
        "summary": {k: s[k] for k in ("failures", "initiating", "sources", "bytes", "lines", "matches")},
        "incidents": [],
        "unexplained": [group(g) for g in doc["unexplained"]],
        "inference": doc["inference"],
    }
    for inc in doc["incidents"]:
        w = inc["where"]
        out["incidents"].append({
            "signature": inc["signature"], "initiating": inc["initiating"], "rule_id": inc["rule_id"],
            "confidence": inc["confidence"], "where": where(w), "pci": inc["pci"], "count": inc["count"],
            "ranks": inc["ranks"], "hosts": inc["hosts"],
            "signals": [{"id": s["id"], "count": s["count"], "first": s["first"] and where(s["first"])}
                        for s in inc["signals"]],
            "collateral": [group(g) for g in inc["collateral"]], "context": [group(g) for g in inc["context"]],
            "missing": inc["missing"],
        })
    return out


def same(name, got, want):
    if got == want:
        print("ok: %s gives the one-pass answer" % name)
        return
    g = json.dumps(got, indent=1, sort_keys=True).splitlines()
    w = json.dumps(want, indent=1, sort_keys=True).splitlines()
    import difflib
    print("\n".join(difflib.unified_diff(w, g, "one pass", name, lineterm="", n=2)))
    check(False, "%s differs from the one-pass run" % name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("denpex")
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--keep", help="work in this directory and keep it")
    ap.add_argument("--scaled", type=int, default=400, help="nodes of the findings-only job (0: skip)")
    a = ap.parse_args()
    denpex = os.path.abspath(a.denpex)
    work = a.keep or tempfile.mkdtemp(prefix="denpex-cluster-")
    try:
        logs = os.path.join(work, "logs")
        fail_node, fail_gpu = a.nodes // 2, 3 % a.gpus
        subprocess.run([sys.executable, os.path.join(HERE, "gen_cluster.py"), logs, "--nodes", str(a.nodes), "--gpus",
                        str(a.gpus), "--fail-node", str(fail_node), "--fail-gpu", str(fail_gpu)],
                       check=True, stdout=subprocess.DEVNULL)
        nodes = sorted(os.listdir(logs))

        one = diagnose_json(denpex, [logs + "/"])
        want = answer(one)

        # The answer itself.
        init = one["incidents"][0]
        check(init["signature"] == "xid.79" and init["initiating"], "one pass: xid.79 initiates")
        check(init["where"]["host"] == gen_cluster.host(fail_node), "one pass: on the failing node")
        check(init["pci"] == "0000:%s:00" % gen_cluster.BUS_IDS[fail_gpu], "one pass: on the failing GPU")
        check(init["where"]["rank"] == fail_node * a.gpus + fail_gpu, "one pass: the failing GPU's rank")
        watchdog = [g for g in init["collateral"] if g["signature"] == "pytorch.nccl.watchdog-timeout"]
        check(len(watchdog) == 1 and len(watchdog[0]["ranks"]) == a.nodes * a.gpus - 1,
              "one pass: every other rank's watchdog is collateral")
        check(len(one["incidents"]) == 1, "one pass: one incident")

        # Per node, from inside its directory, then the merge.
        findings = os.path.join(work, "findings")
        os.makedirs(findings, exist_ok=True)
        for n in nodes:
            with open(os.path.join(findings, n + ".jsonl"), "wb") as out:
                run([denpex, "diagnose", "--node", n, "--format", "jsonl", "."], cwd=os.path.join(logs, n), stdout=out)
        same("merge of %d node findings" % len(nodes), answer(diagnose_json(denpex, [findings + "/"])), want)

        merged = [json.loads(l) for l in run([denpex, "diagnose", "--format", "jsonl", findings + "/"]).stdout.splitlines()]
        summary = merged[-1]
        check(summary["type"] == "summary" and summary["findings_files"] == len(nodes),
              "the merged summary says it merged %d findings files" % len(nodes))
        check(summary["lines"] == one["summary"]["lines"], "the merged summary counts the nodes' log lines")

        # A merge of merges: two racks, each merged to findings, then the job.
        racks = os.path.join(work, "racks")
        os.makedirs(racks, exist_ok=True)
        half = len(nodes) // 2
        for name, part in (("rack-a", nodes[:half]), ("rack-b", nodes[half:])):
            if not part:
                continue
            with open(os.path.join(racks, name + ".jsonl"), "wb") as out:
                run([denpex, "diagnose", "--format", "jsonl"] + [os.path.join(findings, n + ".jsonl") for n in part],
                    stdout=out)
        same("merge of two racks' merges", answer(diagnose_json(denpex, [racks + "/"])), want)

        # The node findings concatenated into one file.
        cat = os.path.join(work, "all.jsonl")
        with open(cat, "wb") as out:
            for n in nodes:
                with open(os.path.join(findings, n + ".jsonl"), "rb") as f:
                    shutil.copyfileobj(f, out)
        same("merge of the concatenated findings", answer(diagnose_json(denpex, [cat])), want)

        # A larger job, as findings only: racks whose merges repeat every
        # node's file names and whose summaries outgrow the line limit.
        if a.scaled:
            scaled = os.path.join(work, "scaled")
            subprocess.run([sys.executable, os.path.join(HERE, "scale_findings.py"), findings, scaled, "--nodes",
                            str(a.scaled), "--gpus", str(a.gpus), "--racks", "2"], check=True,
                           stdout=subprocess.DEVNULL)
            flat = diagnose_json(denpex, [scaled + "/"])
            check(len(flat["incidents"]) == 1 and flat["incidents"][0]["signature"] == "xid.79",
                  "scaled job: one incident, xid.79")
            rack_out = os.path.join(work, "scaled-racks")
            os.makedirs(rack_out, exist_ok=True)
            for rack in sorted(os.listdir(scaled)):
                with open(os.path.join(rack_out, rack + ".jsonl"), "wb") as out:
                    run([denpex, "diagnose", "--format", "jsonl", os.path.join(scaled, rack)], stdout=out)
            longest = max(len(l) for r in os.listdir(rack_out) for l in open(os.path.join(rack_out, r), "rb"))
            check(longest > 64 * 1024, "scaled job: a rack's findings hold a record longer than 64 KiB")
            got = diagnose_json(denpex, [rack_out + "/"])
            same("merge of two %d-node racks' merges (vs their flat merge)" % (a.scaled // 2), answer(got),
                 answer(flat))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed (%d nodes x %d GPUs)" % (a.nodes, a.gpus))
    return 0


if __name__ == "__main__":
    sys.exit(main())
