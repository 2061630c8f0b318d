#!/usr/bin/env python3
"""Findings for a simulated job too large to generate as raw logs (issue 18).

    scale_findings.py SMALL_FINDINGS_DIR OUT_DIR --nodes N [--gpus G] [--racks R]

SMALL_FINDINGS_DIR holds the per-node findings of a small job written by
gen_cluster.py and `denpex diagnose --node NODE --format jsonl .` run inside
each node's directory (bench_merge.sh leaves them in WORKDIR/NODES/findings).
Its failing node (the one whose findings name an Xid) and one healthy node
are the templates: OUT_DIR gets N nodes' findings, node N/2 a copy of the
failing node, every other node a copy of the healthy one, each with its own
host name (node-XXXXXX), its own global ranks (8 per node) and the job's world
size in NCCL's init lines, exactly as the per-node runs of that job would
write them. With --racks R the files go to OUT_DIR/rack-XXXX/ in R racks.

Only the evidence, progress and summary records are written: a merge reads
nothing else from a file that has evidence (docs/cluster.md).
"""
import argparse
import json
import os
import re
import sys

KEEP = {"evidence", "progress", "summary"}


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def templates(small):
    failing = healthy = None
    for name in sorted(os.listdir(small)):
        if not name.endswith(".jsonl"):
            continue
        recs = load(os.path.join(small, name))
        if any(r.get("type") == "evidence" and str(r.get("signature", "")).startswith("xid.") for r in recs):
            failing = failing or (name[:-6], recs)
        else:
            healthy = healthy or (name[:-6], recs)
    if not failing or not healthy:
        sys.exit(f"scale_findings: {small} needs one failing and one healthy node's findings")
    return failing, healthy


def first_rank(recs):
    ranks = [r["rank"] for r in recs if r.get("type") == "evidence" and isinstance(r.get("rank"), int)]
    if not ranks:
        sys.exit("scale_findings: a template node's findings name no rank")
    return min(ranks)


def retarget(recs, old_host, new_host, shift, world):
    """The template's records as node `new_host` would write them."""
    rank_text = [
        (re.compile(r"\[rank(\d+)\]"), lambda m: f"[rank{int(m.group(1)) + shift}]"),
        (re.compile(r"\[Rank (\d+)\]"), lambda m: f"[Rank {int(m.group(1)) + shift}]"),
        (re.compile(r"rank (\d+) nranks (\d+)"), lambda m: f"rank {int(m.group(1)) + shift} nranks {world}"),
    ]
    out = []
    for r in recs:
        if r.get("type") not in KEEP:
            continue
        s = json.dumps(r).replace(old_host, new_host)
        r = json.loads(s)
        if r.get("type") == "evidence":
            if isinstance(r.get("rank"), int):
                r["rank"] += shift
            r["also_ranks"] = [x + shift for x in r.get("also_ranks", [])]
            if r.get("nranks") is not None:
                r["nranks"] = world
            caps = r.get("captures") or {}
            if "rank" in caps:
                caps["rank"] = str(int(caps["rank"]) + shift)
            if "nranks" in caps:
                caps["nranks"] = str(world)
        if isinstance(r.get("text"), str):
            for pattern, repl in rank_text:
                r["text"] = pattern.sub(repl, r["text"])
        out.append(r)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("small")
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--racks", type=int, default=0)
    args = ap.parse_args()
    (fail_host, fail_recs), (ok_host, ok_recs) = templates(args.small)
    fail_first, ok_first = first_rank(fail_recs), first_rank(ok_recs)
    world = args.nodes * args.gpus
    failing = args.nodes // 2
    os.makedirs(args.out, exist_ok=True)
    for n in range(args.nodes):
        host = f"node-{n:06d}"
        src_host, recs, base = (fail_host, fail_recs, fail_first) if n == failing else (ok_host, ok_recs, ok_first)
        shift = n * args.gpus - base
        d = args.out
        if args.racks:
            d = os.path.join(args.out, f"rack-{n * args.racks // args.nodes:04d}")
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, host + ".jsonl"), "w", encoding="utf-8") as f:
            for r in retarget(recs, src_host, host, shift, world):
                f.write(json.dumps(r, separators=(",", ":")) + "\n")
    print(f"{args.nodes} nodes x {args.gpus} GPUs: {world} ranks; {fail_host}'s failure on node-{failing:06d}")


if __name__ == "__main__":
    main()
