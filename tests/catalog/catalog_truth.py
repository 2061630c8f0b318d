#!/usr/bin/env python3
"""Catalog truth checks: how each claim in the catalog is known.

    catalog_truth.py xid-buckets  REPO
    catalog_truth.py origins      REPO DENPEX
    catalog_truth.py doc-verbatim REPO

xid-buckets   Every Xid entry's role, severity and fix follow NVIDIA's resolution
              buckets, read from tools/xid/catalog_facts.tsv (the catalog's facts,
              committed by tools/xid/gen_xid_signatures.py): IGNORE is context,
              never a cause; an action bucket (RESTART_APP, RESET_GPU,
              CONTACT_SUPPORT ...) is a cause whose fix starts with that action; a
              code without a bucket does not claim one.
origins       Every match example's `origin` is log, source, doc or synthetic. An
              example without one is accepted only while the loader rejects
              "synthetic" (probed with DENPEX); from then on a made-up line must say
              it is synthetic. Xid examples taken from tools/xid/real_lines.json
              carry that file's origin and cite its URL.
doc-verbatim  Every example labelled `doc` is found verbatim in the repository's
              reference data for a document the entry cites: the files under
              tests/catalog/reference/ and tools/xid/catalog_facts.tsv, each
              naming its document with "# source: URL" header lines.

Only files inside the repository are read (CI runs on a clean clone without
../shared). Python 3 standard library only. Exit 0 when the check passes, 1
with one line per problem otherwise, 2 on a usage error.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile

ORIGINS = {"log", "source", "doc", "synthetic"}

# NVIDIA's immediate resolution buckets that ask for an action: the entry is
# a cause and its fix opens with the bucket ("Catalog immediate action X: ...").
ACTION_BUCKETS = {"RESTART_APP", "RESET_GPU", "RESTART_BM", "RESTART_VM", "CONTACT_SUPPORT",
                  "CHECK_MECHANICALS", "UPDATE_SWFW", "CHECK_UVM", "WORKFLOW_XID_48",
                  "WORKFLOW_NVLINK_ERR", "WORKFLOW_NVLINK5_ERR"}


def load_entries(repo):
    entries = []
    for path in sorted(glob.glob(os.path.join(repo, "signatures", "*", "*.json"))):
        with open(path, encoding="utf-8") as f:
            entries.append((os.path.relpath(path, repo), json.load(f)))
    return entries


def match_examples(entry):
    for i, ex in enumerate(entry["examples"]["match"]):
        if isinstance(ex, str):
            yield i, ex, None
        else:
            yield i, ex["line"], ex.get("origin")


def norm_url(url):
    return url.split("#", 1)[0].rstrip("/")


# --- xid-buckets ------------------------------------------------------------

def read_facts(repo):
    path = os.path.join(repo, "tools", "xid", "catalog_facts.tsv")
    rows = {}
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if not l.startswith("#")]
    header = lines[0].split("\t")
    for line in lines[1:]:
        cells = line.split("\t")
        row = dict(zip(header, cells + [""] * (len(header) - len(cells))))
        rows[int(row["code"])] = row
    return rows


def check_xid_buckets(repo):
    problems = []
    facts = read_facts(repo)
    entries = {e["id"]: (p, e) for p, e in load_entries(repo) if e["id"].startswith("xid.")}
    for code, row in sorted(facts.items()):
        eid = "xid.%d" % code
        if eid not in entries:
            problems.append("%s: catalog code %d in use but no entry" % (eid, code))
            continue
        path, e = entries.pop(eid)
        imm, inv = row["immediate"], row["investigatory"]
        role, sev = e["role"], e["severity"]
        fix = e["fix"]["summary"]
        where = "%s: %s (immediate %s, investigatory %s)" % (path, eid, imm or "none", inv or "none")
        if imm == "IGNORE":
            if role != "context":
                problems.append("%s: role %s; an IGNORE Xid needs no action, so it is context, never a cause" % (where, role))
            want = ("info",) if inv in ("IGNORE", "") else ("info", "warning")
            if sev not in want:
                problems.append("%s: severity %s, expected %s" % (where, sev, " or ".join(want)))
        elif imm == "XID_154":
            if role != "context":
                problems.append("%s: role %s; Xid 154 summarises another Xid's recovery action (context)" % (where, role))
        elif imm == "WORKFLOW_XID_45":
            if role != "symptom":
                problems.append("%s: role %s; Xid 45 follows another Xid (symptom)" % (where, role))
        elif imm in ACTION_BUCKETS:
            if role != "cause":
                problems.append("%s: role %s; bucket %s asks for an action, so it is a cause" % (where, role, imm))
            if sev not in ("warning", "error", "critical"):
                problems.append("%s: severity %s for a cause with an action" % (where, sev))
        elif imm == "":
            pass
        else:
            problems.append("%s: immediate bucket %r has no rule here (extend ACTION_BUCKETS or the rules)" % (where, imm))
            continue
        prefix = "Catalog immediate action %s:" % (imm or "(none listed)")
        if not fix.startswith(prefix):
            problems.append("%s: fix summary does not start with %r: %r" % (where, prefix, fix[:80]))
        if not imm and "names no recovery action" not in fix:
            problems.append("%s: the catalog lists no action; the fix must say so" % where)
        if role != "cause" and e.get("explains"):
            problems.append("%s: a %s explains nothing" % (where, role))
    for eid, (path, _) in sorted(entries.items()):
        problems.append("%s: %s is not a code in use in tools/xid/catalog_facts.tsv" % (path, eid))
    return problems, "%d Xid codes in use checked against their resolution buckets" % len(facts)


# --- origins ----------------------------------------------------------------

PROBE_ENTRY = {
    "id": "probe.synthetic-origin",
    "title": "probe",
    "area": "host",
    "role": "cause",
    "severity": "info",
    "signals": [{"id": "probe", "pattern": "catalog-truth-probe"}],
    "root_cause": "probe",
    "fix": {"summary": "probe"},
    "verify": {"summary": "probe"},
    "references": [{"title": "probe", "url": "https://example.invalid/"}],
    "examples": {"match": [{"line": "catalog-truth-probe", "origin": "synthetic"}], "no_match": ["probe"]},
}


def loader_accepts_synthetic(denpex):
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "host"))
        with open(os.path.join(d, "host", "probe.synthetic-origin.json"), "w", encoding="utf-8") as f:
            json.dump(PROBE_ENTRY, f)
        r = subprocess.run([denpex, "signatures", "test", "--no-builtin", "--signatures", d],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        return r.returncode == 0


def check_origins(repo, denpex):
    problems = []
    strict = loader_accepts_synthetic(denpex)
    with open(os.path.join(repo, "tools", "xid", "real_lines.json"), encoding="utf-8") as f:
        real = {r["line"]: r for r in json.load(f)["lines"]}
    unlabelled = 0
    total = 0
    for path, e in load_entries(repo):
        urls = {norm_url(r["url"]) for r in e["references"]}
        for i, line, origin in match_examples(e):
            total += 1
            where = "%s: /examples/match/%d" % (path, i)
            if origin is None:
                unlabelled += 1
                if strict:
                    problems.append("%s: no origin (log, source, doc, or synthetic for a made-up line)" % where)
                continue
            if origin not in ORIGINS:
                problems.append("%s: origin %r is not one of %s" % (where, origin, ", ".join(sorted(ORIGINS))))
            if e["id"].startswith("xid.") and line in real:
                r = real[line]
                if origin != r["origin"]:
                    problems.append("%s: origin %s, but tools/xid/real_lines.json says %s" % (where, origin, r["origin"]))
                if norm_url(r["url"]) not in urls:
                    problems.append("%s: the line's source %s is not among the entry's references" % (where, r["url"]))
    mode = "strict: the loader accepts 'synthetic'" if strict else \
        "the loader rejects 'synthetic', so %d made-up lines carry no origin" % unlabelled
    return problems, "%d match examples checked (%s)" % (total, mode)


# --- doc-verbatim -----------------------------------------------------------

def read_references(repo):
    """[(path, {source urls}, body)] for every reference-data file."""
    paths = sorted(glob.glob(os.path.join(repo, "tests", "catalog", "reference", "*.txt")))
    paths.append(os.path.join(repo, "tools", "xid", "catalog_facts.tsv"))
    refs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        sources = set()
        k = 0
        while k < len(lines) and lines[k].startswith("#"):
            if lines[k].startswith("# source: "):
                sources.add(norm_url(lines[k][len("# source: "):].strip()))
            k += 1
        if not sources:
            sys.exit("%s: reference data without a '# source: URL' header line" % os.path.relpath(path, repo))
        refs.append((os.path.relpath(path, repo), sources, "\n".join(lines[k:])))
    return refs


def check_doc_verbatim(repo):
    problems = []
    refs = read_references(repo)
    checked = 0
    for path, e in load_entries(repo):
        urls = {norm_url(r["url"]) for r in e["references"]}
        cited = [(p, body) for p, sources, body in refs if sources & urls]
        for i, line, origin in match_examples(e):
            if origin != "doc":
                continue
            checked += 1
            where = "%s: /examples/match/%d" % (path, i)
            if not cited:
                problems.append("%s: labelled doc, but none of the documents the entry cites has reference data "
                                "in the repository (tests/catalog/reference/): %s" % (where, line))
            elif not any(line in body for _, body in cited):
                problems.append("%s: labelled doc, but not found verbatim in %s: %s"
                                % (where, ", ".join(p for p, _ in cited), line))
    return problems, "%d doc examples checked against %d reference files" % (checked, len(refs))


def main(argv):
    checks = {"xid-buckets": (2, check_xid_buckets), "origins": (3, check_origins),
              "doc-verbatim": (2, check_doc_verbatim)}
    if len(argv) < 2 or argv[1] not in checks or len(argv) != checks[argv[1]][0] + 1:
        print(__doc__, file=sys.stderr)
        return 2
    problems, summary = checks[argv[1]][1](*argv[2:])
    for p in problems:
        print(p)
    print("%s: %s, %d problem(s)" % (argv[1], summary, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
