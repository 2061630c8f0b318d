#!/usr/bin/env python3
"""Builds the node-dump fixture (testdata/README.md): the same node-017 tree as
a directory, a .tar.gz and a .zip, plus a truncated .gz. Deterministic (fixed
mtimes, sorted members), so rerunning it changes nothing."""
import bz2, gzip, io, lzma, os, tarfile, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "node-017")
MTIME = 1732903200  # 2024-11-29 18:00:00 UTC

DMESG = """[Fri Nov 29 17:41:02 2024] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024
[Fri Nov 29 17:41:09 2024] NVRM: GPU at PCI:0000:3b:00: GPU-6a1c8f1e-2b7d-4e1f-9d0c-5f3e2a9b8c71
[Fri Nov 29 17:59:58 2024] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[Fri Nov 29 17:59:58 2024] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.
[Fri Nov 29 17:59:58 2024] NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)
"""

def rank_log(r):
    lines = ["node-017:%d:%d [%d] NCCL INFO comm 0x5586a3c0 rank %d nRanks 8 nNodes 1 localRanks 8 localRank %d MNNVL 0"
             % (2336 + r, 2377 + r, r, r, r),
             "2024-11-29 17:59:41,118 INFO train.py:212 step 4800 loss 1.9921"]
    if r == 3:
        lines += ["2024-11-29 17:59:58,604 ERROR train.py:250 step 4821 failed",
                  "RuntimeError: CUDA error: unspecified launch failure"]
    else:
        lines += ["[E1129 18:09:58.%06d %d torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught "
                  "collective operation timeout: WorkNCCL(SeqNum=4821, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, "
                  "Timeout(ms)=600000) ran for 600012 milliseconds before timing out." % (100000 + r * 911, 2336 + r, r)]
    return "\n".join(lines) + "\n"

def files():
    out = {"var/log/dmesg.gz": gzip.compress(DMESG.encode(), mtime=MTIME)}
    for r in range(8):
        out["logs/rank_%d.log" % r] = rank_log(r).encode()
    return out

def main():
    fs = files()
    for name, data in fs.items():
        path = os.path.join(ROOT, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(fs):
            info = tarfile.TarInfo("node-017/" + name)
            info.size, info.mtime, info.mode = len(fs[name]), MTIME, 0o644
            tar.addfile(info, io.BytesIO(fs[name]))
    with open(os.path.join(HERE, "node-017.tar.gz"), "wb") as f:
        f.write(gzip.compress(buf.getvalue(), mtime=MTIME))
    with zipfile.ZipFile(os.path.join(HERE, "node-017.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(fs):
            zi = zipfile.ZipInfo("node-017/" + name, date_time=(2024, 11, 29, 18, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, fs[name])
    # The same tar as .tar.xz and a rank log as .bz2 (libarchive reads both).
    with open(os.path.join(HERE, "node-017.tar.xz"), "wb") as f:
        f.write(lzma.compress(buf.getvalue(), preset=6))
    with open(os.path.join(HERE, "rank_3.log.bz2"), "wb") as f:
        f.write(bz2.compress(fs["logs/rank_3.log"]))
    # A crash-truncated compressed log: the first 60% of a gzip stream.
    with open(os.path.join(HERE, "..", "sample", "train.log"), "rb") as f:
        whole = gzip.compress(f.read(), mtime=MTIME)
    os.makedirs(os.path.join(HERE, "truncated"), exist_ok=True)
    with open(os.path.join(HERE, "truncated", "train.log.gz"), "wb") as f:
        f.write(whole[: len(whole) * 6 // 10])

if __name__ == "__main__":
    main()
