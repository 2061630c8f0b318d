#!/usr/bin/env python3
"""Generate a realistic multi-rank distributed-training log for benchmarking denpex.

The log is what `torchrun ... 2>&1 | tee train.log` gives for a multi-node job
with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL (the per-collective COLL
lines are what makes real logs reach gigabytes):

  * torchrun's start-up banner (glog format, no rank prefix);
  * per rank, NCCL communicator set-up: Bootstrap, NET/Plugin, comm ... rank N
    nRanks M, Channel NN/0 lines, Connected all rings/trees, NVLS comm,
    Connected NVLS, Init COMPLETE, and PyTorch's ProcessGroupNCCL glog lines;
  * the training body: per step and rank, NCCL INFO AllReduce/AllGather/
    ReduceScatter COLL lines, rank 0's progress through Python logging,
    absl/glog-format throughput lines, and rare benign warnings;
  * at the end a failure cascade: one rank's `NCCL WARN Cuda failure 700 'an
    illegal memory access was encountered'` and the watchdog abort it causes,
    watchdog timeouts on every other rank, then torchrun's SIGTERMs and the
    ChildFailedError block.

Formats (every line shape below was taken from a real log or a source):
  - NCCL `host:pid:tid [dev] NCCL INFO Channel 03/0 : 7[3] -> 5[1] via P2P/CUMEM`
    and `Connected all rings`: NVIDIA/nccl#1814, NVIDIA/nccl-tests#252,
    tinygrad/open-gpu-kernel-modules#22 (`Connected all trees`).
  - NCCL COLL line: src/enqueue.cc ncclEnqueueCheck,
    INFO(NCCL_COLL, "%s: opCount %lx sendbuff %p recvbuff %p count %zu
    datatype %d op %d root %d comm %p [nranks=%d] stream %p", ...).
  - NCCL `comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId
    0x%llx - Init COMPLETE`: src/init.cc.
  - NCCL's `[%F %T] ` line timestamp: NCCL_DEBUG_TIMESTAMP_FORMAT (2.26+);
    the same shape as testdata/sample/train.log.
  - `[rank0]:[W1028 04:48:19.843866299 ProcessGroupNCCL.cpp:4115] [PG ID 0 PG
    GUID 0 Rank 0]  using GPU 0 to perform barrier as devices used by this
    process are currently unknown. ...`: bmaltais/kohya_ss#2933 (benign).
  - Watchdog timeout / exception / "Some NCCL operations have failed", the
    Cuda failure 700 block and the ChildFailedError block: as in
    testdata/sample/train.log (itself from pytorch/pytorch issue logs);
    ChildFailedError layout also in hiyouga/LlamaFactory#5769.
  - torchrun's OMP_NUM_THREADS banner: torch/distributed/run.py.

Shapes (--shape), the workloads tests/bench/run.sh compares:
  sparse  the training body above: a few hundred matching lines per GiB;
  dense   the same, with NCCL init lines of communicators created throughout
          the run (`comm ... rank N nRanks M`, `NVLS comm ... headRank`,
          `Connected NVLS`, `... - Init COMPLETE`, the shapes of init())
          making up --init-fraction of all lines (default 7%): context and
          identity entries match three in four of them, over 5% of all lines;
  real    real NCCL_DEBUG=INFO output of multi-node runs, repeated: the
          files in tests/bench/data/ (their README names the sources), in
          place of the generated body;
  megatron  a Megatron-LM pre-training log (issue 35): 80% of lines are the
          per-iteration line, the rest NCCL COLL lines and Megatron's memory
          and timer reports; no body line matches an entry;
  mixed   30% Megatron iteration lines, 25% NCCL `Channel` lines, 5% NCCL
          init lines (as in dense), the rest DeepSpeed step and timer lines,
          Hugging Face datasets progress lines and Trainer metric lines.

Line shapes of the megatron and mixed bodies:
  - Megatron-LM's iteration line: megatron/training/training.py
    training_log() (` iteration {:8d}/{:8d} | consumed samples: {:12d} |
    elapsed time per iteration (ms): {:.1f} | learning rate: {:.6E} | global
    batch size: {:5d} | lm loss: {:.6E} | loss scale: {:.1f} | grad norm:
    {:.3f} | number of skipped iterations: {:3d} | number of nan
    iterations: {:3d} |`), printed by the last rank after a `[%F %T]` stamp;
    its report_memory() line (`[Rank N] (after N iterations) memory (MB) |
    allocated: ... | max allocated: ... | reserved: ... | max reserved: ...`)
    and timers (`    forward-backward ...: (min, max)`).
  - DeepSpeed: deepspeed/utils/logging.py log_dist (`[%F %T,ms] [INFO]
    [logging.py:96:log_dist] [Rank 0] step=N, skipped=0, lr=[...],
    mom=[(0.9, 0.95)]`) and deepspeed/utils/timer.py ThroughputTimer.stop
    (`epoch=0/micro_step=N/global_step=N, RunningAvgSamplesPerSec=...,
    CurrSamplesPerSec=..., MemAllocated=...GB, MaxMemAllocated=...GB`).
  - Hugging Face: datasets' tqdm map progress (`Map (num_proc=16):  45%|...|
    4500/10000 [00:01<00:02, 2345.67 examples/s]`) and Trainer's logged
    metrics dict (`{'loss': 1.2345, 'grad_norm': 0.87, 'learning_rate':
    1.9e-05, 'epoch': 0.12}`).
Every shape ends with the same failure cascade.

Usage:
  gen_log.py --size 1G --ranks 64 --seed 1 -o /tmp/train.log
  gen_log.py --size 256M --ranks 16 --shape dense -o /tmp/dense.log
  gen_log.py --size 1M > small.log

The size is a target: the body stops at the first step boundary past
(size - tail), so the file overshoots it by at most one step (~50 KB at 64 ranks).
Deterministic per seed.
"""

import argparse
import gzip
import os
import random
import sys
from datetime import datetime, timedelta

GPUS_PER_NODE = 8
NCCL_VERSION = "2.26.2+cuda12.8"
COLL_OPS = (
    # (opName, datatype, op): ncclDataType_t 7 = bf16 on 2.26 (ncclBfloat16 = 9
    # on older enums; both appear in the wild), ncclRedOp_t 0 = sum.
    ("AllReduce", 7, 0),
    ("AllGather", 7, 0),
    ("ReduceScatter", 7, 0),
    ("AllGather", 7, 0),
)


def parse_size(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().rstrip("B").rstrip("I")
    suffix = t[-1] if t and t[-1] in units else ""
    number = t[: -1] if suffix else t
    return int(float(number) * units[suffix])


class Rank:
    __slots__ = ("rank", "node", "host", "dev", "pid", "tid", "comm", "stream", "sbuf", "rbuf", "busid")

    def __init__(self, rank, rng, base_pid):
        self.rank = rank
        self.node = rank // GPUS_PER_NODE
        self.host = "node-%03d" % (17 + self.node)
        self.dev = rank % GPUS_PER_NODE
        self.pid = base_pid + 17 * self.node + self.dev
        self.tid = self.pid + 41
        self.comm = 0x55D0A3C00000 + (rng.getrandbits(20) << 8)
        self.stream = 0x55D0B1000000 + (rng.getrandbits(20) << 8)
        self.sbuf = 0x7F3A00000000 + (rng.getrandbits(24) << 12)
        self.rbuf = self.sbuf + 0x10000000
        self.busid = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)[self.dev]


def glog_stamp(t, us=True):
    # glog/PyTorch c10 format: I1129 17:58:09.123456 (the year is not printed)
    return t.strftime("%m%d %H:%M:%S.") + ("%06d" % t.microsecond if us else "%06d" % 0)


def nccl_stamp(t):
    return t.strftime("[%Y-%m-%d %H:%M:%S] ")


def pylog_stamp(t):
    return t.strftime("%Y-%m-%d %H:%M:%S,") + "%03d" % (t.microsecond // 1000)


class Generator:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.nranks = args.ranks
        self.nnodes = (self.nranks + GPUS_PER_NODE - 1) // GPUS_PER_NODE
        self.ranks = [Rank(r, self.rng, 2336) for r in range(self.nranks)]
        self.t = datetime(2024, 11, 29, 17, 58, 1, 112000)
        self.agent_pid = 2301
        self.written = 0
        self.out = args.out
        self.buf = []
        self.buf_bytes = 0
        self.opcount = 0
        self.step = 0
        self.loss = 2.9
        self.lines = 0       # lines emitted
        self.init_lines = 0  # of which dense-shape init lines

    # -- output ------------------------------------------------------------
    def emit(self, line):
        self.lines += 1
        self.buf.append(line)
        self.buf_bytes += len(line) + 1
        if self.buf_bytes >= 4 << 20:
            self.flush()

    def flush(self):
        if self.buf:
            data = ("\n".join(self.buf) + "\n").encode()
            self.out.write(data)
            self.written += len(data)
            self.buf = []
            self.buf_bytes = 0

    def size(self):
        return self.written + self.buf_bytes

    def tick(self, ms):
        self.t += timedelta(milliseconds=ms)

    # -- sections ------------------------------------------------------------
    def banner(self):
        stamp = glog_stamp(self.t)
        self.emit("W%s %d torch/distributed/run.py:793] " % (stamp, self.agent_pid) + "*" * 41)
        self.emit(
            "W%s %d torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each "
            "process to be 1 in default, to avoid your system being overloaded, please further tune the "
            "variable for optimal performance in your application as needed." % (stamp, self.agent_pid)
        )
        self.emit("W%s %d torch/distributed/run.py:793] " % (stamp, self.agent_pid) + "*" * 41)

    def nccl(self, r, text, tid=None):
        return "[rank%d]:%s%s:%d:%d [%d] NCCL INFO %s" % (
            r.rank, nccl_stamp(self.t), r.host, r.pid, r.tid if tid is None else tid, r.dev, text)

    def init(self):
        self.tick(8000)
        n = self.nranks
        for r in self.ranks:
            ip = "10.1.%d.%d" % (7 + r.node, 17 + r.node)
            self.emit(self.nccl(r, "Bootstrap : Using eth0:%s<0>" % ip, tid=r.pid))
        self.emit(self.nccl(self.ranks[0], "NCCL version %s" % NCCL_VERSION, tid=self.ranks[0].pid))
        for r in self.ranks:
            self.emit(self.nccl(r, "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.", tid=r.pid))
            self.emit(
                "[rank%d]:[I%s %d torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:946] [PG ID 0 PG GUID 0 Rank %d] "
                "ProcessGroupNCCL initialization options: size: %d, global rank: %d, TIMEOUT(ms): 600000, "
                "USE_HIGH_PRIORITY_STREAM: 0, SPLIT_FROM: 0, SPLIT_COLOR: 0, PG Name: 0"
                % (r.rank, glog_stamp(self.t), r.pid, r.rank, n, r.rank)
            )
        self.tick(1000)
        for r in self.ranks:
            self.emit(self.nccl(r, "comm 0x%x rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0"
                                % (r.comm, r.rank, n, self.nnodes, min(GPUS_PER_NODE, n), r.dev)))
        for ch in range(16):
            for r in self.ranks:
                nxt = self.ranks[(r.rank + 1) % n]
                if nxt.node == r.node:
                    via = "via P2P/CUMEM/read"
                else:
                    via = "[send] via NET/IB/%d/GDRDMA" % (r.dev // 2)
                self.emit(self.nccl(r, "Channel %02d/0 : %d[%d] -> %d[%d] %s" % (ch, r.rank, r.dev, nxt.rank, nxt.dev, via)))
        for r in self.ranks:
            self.emit(self.nccl(r, "Connected all rings"))
        for r in self.ranks:
            self.emit(self.nccl(r, "NVLS comm 0x%x headRank %d nHeads %d buffSize 4194304 memSize 2097152 "
                                "nvlsPerRankSize 301989888 nvlsTotalSize 2415919104"
                                % (r.comm, r.dev, min(GPUS_PER_NODE, n))))
        for r in self.ranks:
            self.emit(self.nccl(r, "Connected NVLS"))
            self.emit(self.nccl(r, "Connected all trees"))
        self.tick(900)
        for r in self.ranks:
            self.emit(self.nccl(r, "comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x%x - Init COMPLETE"
                                % (r.comm, r.rank, n, r.dev, r.dev, r.busid, 0x9E3779B97F4A7C15)))
        for r in self.ranks:
            # Benign: PyTorch 2.5 warns when barrier() guesses the device.
            self.emit(
                "[rank%d]:[W%s ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank %d]  using GPU %d to perform "
                "barrier as devices used by this process are currently unknown. This can potentially cause a hang "
                "if this rank to GPU mapping is incorrect.Specify device_ids in barrier() to force use of a "
                "particular device,or call init_process_group() with a device_id."
                % (r.rank, self.t.strftime("%m%d %H:%M:%S.") + "%09d" % (self.rng.getrandbits(29)), r.rank, r.dev)
            )

    def dense_init_lines(self):
        # Top the init lines up to --init-fraction of everything so far: one
        # rank's lines for a communicator it just created (a new group).
        rng = self.rng
        while self.init_lines < self.args.init_fraction * self.lines:
            r = self.ranks[rng.randrange(self.nranks)]
            comm = 0x55D0A3C00000 + (rng.getrandbits(24) << 8)
            size = (8, 16, self.nranks)[rng.randrange(3)]
            for text in ("comm 0x%x rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0"
                         % (comm, r.rank % size, size, max(1, size // GPUS_PER_NODE), min(GPUS_PER_NODE, size), r.dev),
                         "NVLS comm 0x%x headRank %d nHeads %d buffSize 4194304 memSize 2097152 "
                         "nvlsPerRankSize 301989888 nvlsTotalSize 2415919104" % (comm, r.dev, min(GPUS_PER_NODE, size)),
                         "Connected NVLS",
                         "comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x%x - Init COMPLETE"
                         % (comm, r.rank % size, size, r.dev, r.dev, r.busid, rng.getrandbits(64))):
                self.emit(self.nccl(r, text))
                self.init_lines += 1

    def real_body(self, target, tail):
        # Real NCCL_DEBUG=INFO output, file after file, until the size is reached.
        files = sorted(os.path.join(self.args.data, f) for f in os.listdir(self.args.data) if f.endswith(".log.gz"))
        if not files:
            raise SystemExit("gen_log: no *.log.gz in %s" % self.args.data)
        texts = []
        for f in files:
            with gzip.open(f, "rt", encoding="utf-8", errors="surrogateescape") as z:
                texts.append(z.read().splitlines())
        while True:
            for lines in texts:
                for line in lines:
                    if self.size() + tail >= target:
                        return
                    self.emit(line)

    def train_step(self):
        self.step += 1
        rng = self.rng
        n = self.nranks
        self.tick(380 + rng.getrandbits(6))
        stamp = nccl_stamp(self.t)
        for name, dtype, op in COLL_OPS:
            count = 262144 << rng.getrandbits(3)
            for r in self.ranks:
                self.emit(
                    "[rank%d]:%s%s:%d:%d [%d] NCCL INFO %s: opCount %x sendbuff 0x%x recvbuff 0x%x count %d "
                    "datatype %d op %d root 0 comm 0x%x [nranks=%d] stream 0x%x"
                    % (r.rank, stamp, r.host, r.pid, r.pid, r.dev, name, self.opcount, r.sbuf, r.rbuf, count,
                       dtype, op, r.comm, n, r.stream)
                )
            self.opcount += 1
        self.loss = max(1.2, self.loss - 0.00002 + (rng.random() - 0.5) * 0.01)
        if self.step % 10 == 0:
            self.emit("[rank0]:%s INFO train.py:212 step %d loss %.4f lr 3.0e-04 grad_norm %.3f tokens/s %d"
                      % (pylog_stamp(self.t), self.step, self.loss, 0.8 + rng.random(), 410000 + rng.getrandbits(12)))
        if self.step % 50 == 0:
            # absl-py (glog format) throughput lines from every node's first rank.
            for node in range(self.nnodes):
                r = self.ranks[node * GPUS_PER_NODE]
                self.emit("[rank%d]:I%s %d metrics.py:88] step=%d samples/s=%.1f mfu=%.3f mem_alloc_gb=%.2f"
                          % (r.rank, glog_stamp(self.t), r.pid, self.step, 1580 + rng.random() * 20,
                             0.41 + rng.random() * 0.02, 61 + rng.random()))
        if self.step % 2000 == 0:
            # Benign deprecation warning from one rank (torch 2.4 checkpoint.py).
            r = self.ranks[rng.randrange(n)]
            self.emit("[rank%d]:/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:1399: FutureWarning: "
                      "`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` "
                      "instead." % r.rank)
            self.emit("[rank%d]:  with device_autocast_ctx, torch.cpu.amp.autocast(**cpu_autocast_kwargs), "
                      "recompute_context:  # type: ignore[attr-defined]" % r.rank)

    # -- megatron and mixed bodies (one line at a time, by weighted kind) -------
    def megatron_iteration(self):
        self.step += 1
        rng = self.rng
        self.tick(1200 + rng.getrandbits(7))
        self.loss = max(1.2, self.loss - 0.00002 + (rng.random() - 0.5) * 0.01)
        self.emit(" [%s] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f | "
                  "learning rate: %.6E | global batch size: %5d | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | "
                  "number of skipped iterations: %3d | number of nan iterations: %3d |"
                  % (self.t.strftime("%Y-%m-%d %H:%M:%S"), self.step, 500000, self.step * 1024,
                     1180 + rng.random() * 60, 3e-4 * min(1.0, self.step / 2000.0), 1024, self.loss,
                     0.8 + rng.random() * 0.4, 0, 0))

    def megatron_report(self):
        rng = self.rng
        if rng.getrandbits(1):
            self.emit("[Rank %d] (after %d iterations) memory (MB) | allocated: %.1f | max allocated: %.1f | "
                      "reserved: %.1f | max reserved: %.1f"
                      % (rng.randrange(self.nranks), self.step, 21000 + rng.random() * 900, 48000 + rng.random() * 900,
                         52000.0, 52000.0))
        else:
            name = ("forward-backward", "forward-compute", "backward-compute", "batch-generator", "layernorm-grads-all-reduce",
                    "embedding-grads-all-reduce", "all-grads-sync", "optimizer-copy-to-main-grad", "optimizer")[rng.randrange(9)]
            low = 5 + rng.random() * 1100
            self.emit("    %s %s: (%.2f, %.2f)" % (name, "." * (40 - len(name)), low, low + rng.random() * 20))

    def coll_line(self):
        rng = self.rng
        r = self.ranks[rng.randrange(self.nranks)]
        name, dtype, op = COLL_OPS[rng.randrange(len(COLL_OPS))]
        self.opcount += 1
        self.emit("[rank%d]:%s%s:%d:%d [%d] NCCL INFO %s: opCount %x sendbuff 0x%x recvbuff 0x%x count %d "
                  "datatype %d op %d root 0 comm 0x%x [nranks=%d] stream 0x%x"
                  % (r.rank, nccl_stamp(self.t), r.host, r.pid, r.pid, r.dev, name, self.opcount, r.sbuf, r.rbuf,
                     262144 << rng.getrandbits(3), dtype, op, r.comm, self.nranks, r.stream))

    def channel_line(self):
        rng = self.rng
        r = self.ranks[rng.randrange(self.nranks)]
        peer = self.ranks[(r.rank + 1 + rng.randrange(GPUS_PER_NODE - 1)) % self.nranks]
        via = ("P2P/CUMEM/read", "P2P/IPC", "NET/IB/0/GDRDMA", "NVLS")[rng.randrange(4)]
        self.emit(self.nccl(r, "Channel %02d/%d : %d[%d] -> %d[%d] via %s"
                            % (rng.randrange(32), rng.randrange(2), r.rank, r.dev, peer.rank, peer.dev, via)))

    def init_line(self):
        rng = self.rng
        r = self.ranks[rng.randrange(self.nranks)]
        comm = 0x55D0A3C00000 + (rng.getrandbits(24) << 8)
        size = (8, 16, self.nranks)[rng.randrange(3)]
        texts = ("comm 0x%x rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0"
                 % (comm, r.rank % size, size, max(1, size // GPUS_PER_NODE), min(GPUS_PER_NODE, size), r.dev),
                 "comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x%x - Init COMPLETE"
                 % (comm, r.rank % size, size, r.dev, r.dev, r.busid, rng.getrandbits(64)))
        self.emit(self.nccl(r, texts[rng.getrandbits(1)]))

    def deepspeed_line(self):
        rng = self.rng
        stamp = "[%s] [INFO]" % pylog_stamp(self.t)
        if rng.getrandbits(1):
            self.emit("%s [logging.py:96:log_dist] [Rank 0] step=%d, skipped=0, lr=[%.10f], mom=[(0.9, 0.95)]"
                      % (stamp, self.step, 3e-4 * min(1.0, (self.step + 1) / 2000.0)))
        else:
            self.emit("%s [timer.py:260:stop] epoch=0/micro_step=%d/global_step=%d, RunningAvgSamplesPerSec=%.12f, "
                      "CurrSamplesPerSec=%.12f, MemAllocated=%.2fGB, MaxMemAllocated=%.2fGB"
                      % (stamp, self.step * 8, self.step, 47 + rng.random(), 46 + rng.random() * 3,
                         6 + rng.random(), 11 + rng.random()))

    def dataloader_line(self):
        rng = self.rng
        done = rng.randrange(10001)
        pct = done * 100 // 10000
        bar = ("\u2588" * (pct // 10)).encode().decode("unicode_escape") + " " * (10 - pct // 10)
        self.emit("Map (num_proc=16): %3d%%|%s| %d/10000 [00:%02d<00:%02d, %.2f examples/s]"
                  % (pct, bar, done, rng.randrange(60), rng.randrange(60), 2000 + rng.random() * 900))

    def metric_line(self):
        rng = self.rng
        self.emit("{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.4e, 'epoch': %.2f}"
                  % (self.loss, 0.5 + rng.random(), 1.9e-05 * rng.random(), self.step / 50000.0))

    def weighted_body(self, target, tail, weights):
        kinds = [k for k, _ in weights]
        cum = []
        total = 0.0
        for _, w in weights:
            total += w
            cum.append(total)
        rng = self.rng
        while self.size() + tail < target:
            x = rng.random() * total
            for kind, c in zip(kinds, cum):
                if x < c:
                    kind()
                    break

    def cascade(self):
        rng = self.rng
        bad = self.ranks[self.args.failing_rank if self.args.failing_rank is not None else rng.randrange(self.nranks)]
        self.tick(200)
        seq = self.opcount
        self.emit("[rank%d]:%s%s:%d:%d [%d] enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'"
                  % (bad.rank, nccl_stamp(self.t), bad.host, bad.pid, bad.tid, bad.dev))
        self.emit("[rank%d]:%s:%d:%d [%d] NCCL INFO enqueue.cc:1573 -> 1" % (bad.rank, bad.host, bad.pid, bad.tid, bad.dev))
        self.emit("[rank%d]:[E%s %d torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) "
                  "Rank %d] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access "
                  "was encountered" % (bad.rank, glog_stamp(self.t), bad.pid, bad.rank))
        for text in ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                     "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                     "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
                     "terminate called after throwing an instance of 'c10::DistBackendError'"):
            self.emit("[rank%d]:%s" % (bad.rank, text))
        self.tick(600000)
        others = [r for r in self.ranks if r is not bad]
        for r in others:
            self.tick(1)
            self.emit("[rank%d]:[E%s %d torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught "
                      "collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, "
                      "Timeout(ms)=600000) ran for 600012 milliseconds before timing out."
                      % (r.rank, glog_stamp(self.t), r.pid, r.rank, seq))
        for r in others:
            self.emit("[rank%d]:[E%s %d torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1664] [PG ID 0 PG GUID 0(default_pg) "
                      "Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL "
                      "work: %d, last completed NCCL work: %d." % (r.rank, glog_stamp(self.t), r.pid, r.rank, seq, seq, seq - 1))
            self.emit("[rank%d]:[E%s %d torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:630] [Rank %d] Some NCCL operations "
                      "have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations "
                      "might run on corrupted/incomplete data." % (r.rank, glog_stamp(self.t), r.pid, r.rank))
        self.tick(3000)
        for r in others:
            if r.node == bad.node:
                self.emit("W%s %d torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM"
                          % (glog_stamp(self.t), self.agent_pid, r.pid))
        self.tick(2000)
        self.emit("E%s %d torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: %d (pid: %d) of binary: /usr/bin/python3"
                  % (glog_stamp(self.t), self.agent_pid, bad.dev, bad.pid))
        for text in (
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/torchrun", line 8, in <module>',
            "    sys.exit(main())",
            '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/run.py", line 919, in main',
            "    run(args)",
            '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
            "    return f(*args, **kwargs)",
            '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/launcher/api.py", line 263, in launch_agent',
            "    raise ChildFailedError(",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "=" * 60,
            "train.py FAILED",
            "-" * 60,
            "Failures:",
            "  <NO_OTHER_FAILURES>",
            "-" * 60,
            "Root Cause (first observed failure):",
            "[0]:",
            "  time      : %s" % self.t.strftime("%Y-%m-%d_%H:%M:%S"),
            "  host      : %s" % bad.host,
            "  rank      : %d (local_rank: %d)" % (bad.rank, bad.dev),
            "  exitcode  : -6 (pid: %d)" % bad.pid,
            "  error_file: <N/A>",
            "  traceback : Signal 6 (SIGABRT) received by PID %d" % bad.pid,
            "=" * 60,
        ):
            self.emit(text)
        return bad

    def run(self):
        target = self.args.size
        # The cascade is ~ (3 * 330 + 2000) bytes per rank; keep room for it.
        tail = 400 * self.nranks + 4096
        self.banner()
        self.init()
        if self.args.shape == "real":
            self.real_body(target, tail)
        elif self.args.shape == "megatron":
            self.weighted_body(target, tail, [(self.megatron_iteration, 0.80), (self.coll_line, 0.10),
                                              (self.megatron_report, 0.10)])
        elif self.args.shape == "mixed":
            self.weighted_body(target, tail, [(self.megatron_iteration, 0.30), (self.channel_line, 0.25),
                                              (self.init_line, 0.05), (self.deepspeed_line, 0.15),
                                              (self.dataloader_line, 0.10), (self.metric_line, 0.15)])
        while self.size() + tail < target:
            self.train_step()
            if self.args.shape == "dense":
                self.dense_init_lines()
        bad = self.cascade()
        self.flush()
        return bad


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="64M", help="target size: bytes or with K/M/G suffix (binary), e.g. 1G")
    p.add_argument("--ranks", type=int, default=64, help="world size (8 GPUs per node)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--failing-rank", type=int, default=None, help="rank that hits error 700 (default: random)")
    p.add_argument("--shape", choices=("sparse", "dense", "real", "megatron", "mixed"), default="sparse",
                   help="workload shape (see the top of this file; default sparse)")
    p.add_argument("--init-fraction", type=float, default=0.07,
                   help="dense: the share of lines that are NCCL init lines (default 0.07: three in four match an entry)")
    p.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"),
                   help="real: the folder of real logs (*.log.gz; default tests/bench/data)")
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    args = p.parse_args(argv)
    args.size = parse_size(args.size)
    if args.ranks < 2:
        p.error("--ranks must be at least 2")
    if args.failing_rank is not None and not 0 <= args.failing_rank < args.ranks:
        p.error("--failing-rank out of range")
    if args.output == "-":
        args.out = sys.stdout.buffer
        bad = Generator(args).run()
    else:
        with open(args.output, "wb") as f:
            args.out = f
            g = Generator(args)
            bad = g.run()
    print("gen_log: %s shape, %d ranks, failing rank %d (%s GPU %d)" % (args.shape, args.ranks, bad.rank, bad.host, bad.dev),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
