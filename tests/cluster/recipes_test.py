#!/usr/bin/env python3
"""The cluster recipes in deploy/ (docs/cluster.md) run as written.

    recipes_test.py DENPEX REPO

- Kubernetes: deploy/kubernetes/*.yaml parse (python3-yaml) and say what the
  docs say: an indexed Job with one pod per node (required pod anti-affinity
  on the host name), the node's /var/log mounted read-only from the host, the
  node's name from the downward API passed as --node, findings written to a
  shared volume that the merge Job reads.
- Shell: deploy/slurm/*.sh, *.sbatch, tests/cluster/*.sh and the scripts
  inside the manifests pass shellcheck.
- Slurm, simulated on this machine: deploy/slurm/diagnose-step.sbatch and
  deploy/slurm/epilogue.sh run unchanged over a 3-node job from gen_cluster.py
  with stand-ins for srun (one task per node or per rank, each in its own
  node's directory), hostname and journalctl (the node's kernel log), and the
  real denpex; the merge names the failing node's Xid 79.

Exits 77 (skipped) when python3-yaml or shellcheck is missing, after running
what it can; `make test` installs both.
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
failures = []
skipped = []


def check(cond, what, detail=""):
    if not cond:
        failures.append(what)
        print("FAIL: " + what + ("\n" + detail if detail else ""))
    else:
        print("ok: " + what)


def walk(obj):
    """Every dict in a YAML document, depth first."""
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from walk(v)


def shell_scripts_of(doc):
    """The `sh -c SCRIPT` scripts of a manifest's containers."""
    for d in walk(doc):
        cmd = d.get("command")
        if isinstance(cmd, list) and len(cmd) >= 3 and cmd[0].endswith("sh") and cmd[1] == "-c":
            yield cmd[2]


def kubernetes(repo):
    try:
        import yaml
    except ImportError:
        skipped.append("python3-yaml is not installed: the manifests were not checked")
        return []
    docs = {}
    for name in sorted(os.listdir(os.path.join(repo, "deploy", "kubernetes"))):
        if name.endswith((".yaml", ".yml")):
            with open(os.path.join(repo, "deploy", "kubernetes", name)) as f:
                docs[name] = [d for d in yaml.safe_load_all(f) if d]
    check(docs, "deploy/kubernetes holds manifests")
    objs = [d for ds in docs.values() for d in ds]
    for d in objs:
        check("apiVersion" in d and "kind" in d and d.get("metadata", {}).get("name"),
              "%s %s has apiVersion, kind and a name" % (d.get("kind"), d.get("metadata", {}).get("name")))
    jobs = {d["metadata"]["name"]: d for d in objs if d.get("kind") == "Job"}
    claims = {d["metadata"]["name"] for d in objs if d.get("kind") == "PersistentVolumeClaim"}
    nodes, merge = jobs.get("denpex-nodes"), jobs.get("denpex-merge")
    check(nodes is not None and merge is not None, "a per-node Job and a merge Job")
    if nodes is None or merge is None:
        return []
    spec = nodes["spec"]
    check(spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism"),
          "the per-node Job is indexed, all pods at once")
    pod = spec["template"]["spec"]
    terms = pod.get("affinity", {}).get("podAntiAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", [])
    labels = spec["template"]["metadata"]["labels"]
    check(any(t.get("topologyKey") == "kubernetes.io/hostname" and
              all(labels.get(k) == v for k, v in t.get("labelSelector", {}).get("matchLabels", {}).items())
              for t in terms), "one pod per node (required anti-affinity on its own label, per host)")
    volumes = {v["name"]: v for v in pod["volumes"]}
    container = pod["containers"][0]
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    check(any(v.get("hostPath", {}).get("path") == "/var/log" and mounts.get(n, {}).get("readOnly")
              for n, v in volumes.items()), "the node's /var/log is mounted read-only")
    env = {e["name"]: e for e in container.get("env", [])}
    check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName",
          "NODE_NAME is the node's name (downward API)")
    script = "\n".join(shell_scripts_of(nodes))
    check('--node "$NODE_NAME"' in script and "--format jsonl" in script and '/findings/$NODE_NAME.jsonl' in script,
          "each pod writes its findings with --node to /findings/NODE.jsonl")
    shared = [v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v]
    merge_pod = merge["spec"]["template"]["spec"]
    merge_claims = [v["persistentVolumeClaim"]["claimName"] for v in merge_pod["volumes"] if "persistentVolumeClaim" in v]
    check(shared and shared == merge_claims and shared[0] in claims, "the merge Job reads the per-node Job's volume")
    check("denpex diagnose" in "\n".join(shell_scripts_of(merge)) and "/findings/" in "\n".join(shell_scripts_of(merge)),
          "the merge Job diagnoses /findings/")
    return [s for doc in objs for s in shell_scripts_of(doc)]


def shellcheck(repo, embedded):
    if shutil.which("shellcheck") is None:
        skipped.append("shellcheck is not installed: the shell recipes were not checked")
        return
    files = []
    for d in (os.path.join(repo, "deploy", "slurm"), HERE):
        files += [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith((".sh", ".sbatch"))]
    for f in files:
        p = subprocess.run(["shellcheck", f], capture_output=True, text=True)
        check(p.returncode == 0, "shellcheck " + os.path.relpath(f, repo), p.stdout)
    for i, script in enumerate(embedded):
        p = subprocess.run(["shellcheck", "-s", "sh", "-"], input=script, capture_output=True, text=True)
        check(p.returncode == 0, "shellcheck of the manifests' script %d" % (i + 1), p.stdout)


FAKE_SRUN = r'''#!/bin/sh
# srun stand-in: one task per node (--ntasks-per-node=1) or per rank, each in
# its node's own directory (its "local disk"), with SLURM_PROCID and the node
# name that the hostname stand-in prints.
per_node=0
while [ $# -gt 0 ]; do
  case "$1" in
    --ntasks-per-node=1) per_node=1; shift ;;
    --*) shift ;;
    *) break ;;
  esac
done
status=0
proc=0
for node in $FAKE_NODES; do
  g=0
  while [ "$g" -lt "$FAKE_GPUS" ]; do
    mkdir -p "$FAKE_ROOT/$node"
    (cd "$FAKE_ROOT/$node" && FAKE_NODE=$node SLURM_PROCID=$proc "$@") || status=1
    proc=$((proc + 1))
    g=$((g + 1))
    [ "$per_node" = 1 ] && break
  done
done
exit $status
'''


def slurm(denpex, repo):
    work = tempfile.mkdtemp(prefix="denpex-recipes-")
    try:
        cluster = os.path.join(work, "cluster")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_cluster.py"), cluster, "--nodes", "3"], check=True,
                       stdout=subprocess.DEVNULL)
        nodes = sorted(os.listdir(cluster))
        fake = os.path.join(work, "bin")
        os.makedirs(fake)
        stubs = {
            "srun": FAKE_SRUN,
            "hostname": '#!/bin/sh\necho "$FAKE_NODE"\n',
            "journalctl": '#!/bin/sh\ncat "$FAKE_CLUSTER/$FAKE_NODE/kern.log"\n',
        }
        for name, text in stubs.items():
            with open(os.path.join(fake, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(fake, name), 0o755)
        os.symlink(os.path.abspath(denpex), os.path.join(fake, "denpex"))
        env = dict(os.environ, PATH=fake + os.pathsep + os.environ["PATH"], FAKE_NODES=" ".join(nodes), FAKE_GPUS="8",
                   FAKE_CLUSTER=cluster, SLURM_JOB_ID="4242")

        # The job script: training fails, each node's step writes findings, the batch host merges.
        root = os.path.join(work, "nodes")
        findings = os.path.join(work, "shared", "findings")
        train = "sh -c 'cat \"$FAKE_CLUSTER/$FAKE_NODE/rank_$SLURM_PROCID.log\"; exit 1'"
        p = subprocess.run(["bash", os.path.join(repo, "deploy", "slurm", "diagnose-step.sbatch")], cwd=work,
                           env=dict(env, FAKE_ROOT=root, LOG_DIR="logs", FINDINGS=findings, TRAIN=train),
                           capture_output=True, text=True)
        check(p.returncode == 1, "diagnose-step.sbatch exits with the training step's status (1), got %d" % p.returncode)
        check(sorted(os.listdir(findings)) == [n + ".jsonl" for n in nodes] if os.path.isdir(findings) else False,
              "diagnose-step.sbatch: one findings file per node")
        failing = nodes[len(nodes) // 2]
        check("INITIATING FAILURE  [critical] xid.79" in p.stdout and "host %s" % failing in p.stdout,
              "diagnose-step.sbatch: the merge names xid.79 on %s" % failing, p.stdout[:800] + p.stderr[-800:])

        # The epilogue on every node, findings to a shared directory, then the merge.
        shared = os.path.join(work, "epilogue")
        for n in nodes:
            textfile = os.path.join(work, "textfile", n)
            os.makedirs(textfile)
            p = subprocess.run(["sh", os.path.join(repo, "deploy", "slurm", "epilogue.sh")],
                               env=dict(env, FAKE_NODE=n, DENPEX_FINDINGS_DIR=shared, DENPEX_TEXTFILE_DIR=textfile,
                                        DENPEX_JOB_LOGS=os.path.join(cluster, n)),
                               capture_output=True, text=True)
            check(p.returncode == 0 and os.path.exists(os.path.join(shared, "4242", n + ".jsonl")) and
                  os.path.exists(os.path.join(textfile, "denpex.prom")),
                  "epilogue.sh on %s writes its findings and metrics" % n, p.stderr)
        p = subprocess.run([denpex, "diagnose", os.path.join(shared, "4242") + "/"], capture_output=True, text=True)
        check(p.returncode == 1 and "xid.79" in p.stdout and "host %s" % failing in p.stdout,
              "the epilogues' findings merge to xid.79 on %s" % failing, p.stdout[:800] + p.stderr[-800:])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    denpex, repo = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    embedded = kubernetes(repo)
    shellcheck(repo, embedded)
    slurm(denpex, repo)
    for s in skipped:
        print("SKIPPED: " + s)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 77 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
