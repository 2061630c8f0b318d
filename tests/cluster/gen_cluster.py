#!/usr/bin/env python3
"""Writes the logs of a simulated multi-node training job (issue 18).

    gen_cluster.py OUT [--nodes N] [--gpus G] [--fail-node K] [--fail-gpu I]

OUT/node-XXXX/ holds what one node keeps: kern.log (its kernel log as
`dmesg -T` prints it: no host name in the lines) and rank_R.log for each of
its G ranks (global rank R = node * G + local rank). The story, the shape of
a real GPU loss in a large job:

- every rank logs NCCL's communicator init line (host:pid, rank R of N*G,
  the GPU's bus id) and training progress up to 17:49:41;
- at 17:59:58 GPU I of node K falls off the bus: the kernel logs Xid 79 for
  its bus id, and the rank on that GPU logs NCCL's CUDA failure and
  PyTorch's `CUDA error: unspecified launch failure` within a second;
- every other rank, on every node, is stuck in the next all-reduce and its
  NCCL watchdog fires ten minutes later (18:09:58, Timeout(ms)=600000), with
  PyTorch's follow-up lines and the what() of the watchdog's exception.

Everything is deterministic: the same arguments write the same bytes. The
expected diagnosis: xid.79 initiating, on node K, GPU I's bus id, rank
K * G + I (from NCCL's init line), the N * G - 1 watchdog timeouts as its
collateral. tests/cluster/merge_test.py checks it; docs/cluster.md shows how
to run denpex per node and merge.
"""
import argparse
import os

BUS_IDS = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db", "1b", "2b", "3b", "4b", "5b", "6b", "7b", "8b"]
SEQ = 48211  # the all-reduce every surviving rank is stuck in


def host(n):
    return "node-%04d" % n


def pid(node, local):
    return 20000 + (node * 37) % 9000 + local


def kern_log(node, gpus, failing):
    lines = [
        "[Fri Nov 29 16:02:11 2024] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024",
    ]
    for g in range(gpus):
        lines.append("[Fri Nov 29 16:02:18 2024] NVRM: GPU at PCI:0000:%s:00: GPU-%08x-2b7d-4e1f-9d0c-%012x"
                     % (BUS_IDS[g], 0x6a1c0000 + node, node * 16 + g))
    if failing is not None:
        bus = BUS_IDS[failing]
        lines += [
            "[Fri Nov 29 17:59:58 2024] NVRM: Xid (PCI:0000:%s:00): 79, pid='<unknown>', name=<unknown>, "
            "GPU has fallen off the bus." % bus,
            "[Fri Nov 29 17:59:58 2024] NVRM: GPU 0000:%s:00.0: GPU has fallen off the bus." % bus,
        ]
    return "\n".join(lines) + "\n"


def rank_log(node, local, gpus, nodes, failing):
    world = nodes * gpus
    rank = node * gpus + local
    p = pid(node, local)
    h = host(node)
    pre = "[rank%d]:" % rank
    lines = [
        "%s%s:%d:%d [%d] NCCL INFO ncclCommInitRank comm 0x55%06x rank %d nranks %d cudaDev %d nvmlDev %d "
        "busId %s000 commId 0x7f3a9c1e5d2b4a60 - Init COMPLETE" % (pre, h, p, p + 41, local, rank, rank, world, local,
                                                                   local, BUS_IDS[local]),
    ]
    for step in (4700, 4750, 4800):
        minute = 47 + (step - 4700) // 50
        lines.append("%s2024-11-29 17:%02d:41,118 INFO train.py:212 step %d loss %.4f"
                     % (pre, minute, step, 2.1 - step / 10000.0))
    if failing == local:
        lines += [
            "%s%s:%d:%d [%d] enqueue.cc:1556 NCCL WARN Cuda failure 'unspecified launch failure'"
            % (pre, h, p, p + 41, local),
            "%s2024-11-29 17:59:58,604 ERROR train.py:250 step 4821 failed" % pre,
            "%sRuntimeError: CUDA error: unspecified launch failure" % pre,
        ]
    else:
        usec = (rank * 7919) % 900000  # each rank's watchdog fires at its own microsecond

        def stamp(after_us):  # the watchdog thread's next lines follow within a millisecond
            return "E1129 18:09:58.%06d %d" % (usec + after_us, p)

        where = "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp"
        work = ("WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000)"
                % SEQ)
        lines += [
            "%s[%s %s:616] [Rank %d] Watchdog caught collective operation timeout: %s ran for %d milliseconds "
            "before timing out." % (pre, stamp(0), where, rank, work, 600000 + (rank * 13) % 97),
            "%s[%s %s:1659] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature "
            "of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data."
            % (pre, stamp(118), where, rank),
            "%s[%s %s:1665] [Rank %d] To avoid data inconsistency, we are taking the entire process down."
            % (pre, stamp(301), where, rank),
            "%sterminate called after throwing an instance of 'c10::DistBackendError'" % pre,
            "%s  what():  [PG 0 (default_pg) Rank %d] Process group watchdog thread terminated with exception: "
            "[Rank %d] Watchdog caught collective operation timeout: %s ran for %d milliseconds before timing out."
            % (pre, rank, rank, work, 600000 + (rank * 13) % 97),
        ]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--fail-node", type=int, default=None, help="default: nodes // 2")
    ap.add_argument("--fail-gpu", type=int, default=3)
    a = ap.parse_args()
    if not 1 <= a.gpus <= len(BUS_IDS):
        ap.error("--gpus must be 1..%d" % len(BUS_IDS))
    fail_node = a.nodes // 2 if a.fail_node is None else a.fail_node
    if not (0 <= fail_node < a.nodes and 0 <= a.fail_gpu < a.gpus):
        ap.error("--fail-node/--fail-gpu out of range")
    for n in range(a.nodes):
        d = os.path.join(a.out, host(n))
        os.makedirs(d, exist_ok=True)
        failing = a.fail_gpu if n == fail_node else None
        with open(os.path.join(d, "kern.log"), "w") as f:
            f.write(kern_log(n, a.gpus, failing))
        for g in range(a.gpus):
            with open(os.path.join(d, "rank_%d.log" % (n * a.gpus + g)), "w") as f:
                f.write(rank_log(n, g, a.gpus, a.nodes, failing))
    print("%s: %d nodes x %d GPUs; failing: %s GPU %d (bus 0000:%s:00), rank %d"
          % (a.out, a.nodes, a.gpus, host(fail_node), a.fail_gpu, BUS_IDS[a.fail_gpu], fail_node * a.gpus + a.fail_gpu))


if __name__ == "__main__":
    main()
