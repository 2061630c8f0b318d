// Unit tests for context::parse_line, parse_path and SourceContext.
//
// Table-driven (RE2's simple_tests style): each row is a real log line, the
// source it was copied from, and every field parse_line must find. A field
// not named in the row must be absent, so false positives fail too.
#include <catch2/catch.hpp>

#include <denpex/context/context.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

using denpex::context::ClockKind;
using denpex::context::LineContext;
using denpex::context::normalize_pci;
using denpex::context::Origin;
using denpex::context::parse_line;
using denpex::context::parse_path;
using denpex::context::SourceContext;

namespace {

constexpr int k_no = -1;

struct LineCase {
  const char* name;
  const char* source;
  const char* line;
  int rank = k_no;
  Origin rank_origin = Origin::prefix;
  int local_rank = k_no;
  int nranks = k_no;
  const char* host = nullptr;
  std::int64_t pid = k_no;
  int gpu = k_no;
  const char* pci = nullptr;
};

// Designated initialisers keep the rows readable; absent fields stay k_no/nullptr.
const LineCase k_cases[] = {
    {.name = "torchrun [rankN]: with c10d [PG ID .. Rank N]",
     .source = "signatures/framework/pytorch.nccl.heartbeat-monitor-abort.json (xdit-project/xDiT#147)",
     .line = "[rank2]:[E704 13:48:58.260494728 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
             "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
             "collectives.",
     .rank = 2},
    {.name = "torchrun --tee [defaultN]: then [rankN]:",
     .source = "NeMo/Megatron run log (GitHub, find_string '[default0]:[rank0]:')",
     .line = "[default0]:[rank0]: Traceback (most recent call last):",
     .rank = 0,
     .local_rank = 0},
    {.name = "torchrun [rankN]: stacked twice",
     .source = "skypilot log (GitHub, find_string '[rank1]: [rank1]: Traceback')",
     .line = "[rank1]: [rank1]: Traceback (most recent call last):",
     .rank = 1},
    {.name = "c10d [Rank N] in the body",
     .source = "signatures/framework/pytorch.nccl.async-error.json",
     .line = "[E ProcessGroupNCCL.cpp:852] [Rank 16] NCCL watchdog thread terminated with exception: NCCL error: "
             "remote process exited or there was a network error, NCCL version 2.19.3",
     .rank = 16,
     .rank_origin = Origin::body},
    {.name = "c10d [Rank N] watchdog timeout in the body",
     .source = "signatures/framework/pytorch.nccl.watchdog-timeout.json",
     .line = "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
             "OpType=BROADCAST, Timeout(ms)=1800000) ran for 1806449 milliseconds before timing out.",
     .rank = 1,
     .rank_origin = Origin::body},
    {.name = "Ray (Name pid=N) then [rankN]: and [PG ID .. Rank N]",
     .source = "verl issue log (GitHub, find_string '(WorkerDict pid=26106)')",
     .line = "(WorkerDict pid=26106) [rank3]:[W1120 01:13:20.892446889 ProcessGroupNCCL.cpp:1662] [PG ID 0 PG GUID "
             "0(default_pg) Rank 3] Failed to check the \"should dump\" flag on TCPStore, (maybe TCPStore server has "
             "shut down too early), with error: Connection reset by peer",
     .rank = 3,
     .pid = 26106},
    // See: #32. Launchers' and servers' own rank tags.
    {.name = "Lightning's [rank: N] prefix",
     .source = "Lightning-AI/pytorch-lightning#18599 (rank_prefixed_message)",
     .line = "[rank: 2] Global seed set to 1",
     .rank = 2},
    {.name = "horovodrun's Gloo [N]<stderr>: tag after mpirun's ctime stamp",
     .source = "horovod/horovod#1364",
     .line = "Thu Aug 29 21:45:09 2019[2]<stderr>:Fatal Python error: Aborted",
     .rank = 2},
    {.name = "SGLang's [stamp TPn] prefix",
     .source = "SGLang server log (docs/research: find_string '[2026-05-15 08:39:36 TP0]')",
     .line = "[2026-05-15 08:39:36 TP0] Load weight begin.",
     .rank = 0},
    {.name = "vLLM's (VllmWorker rank=N pid=P) prefix",
     .source = "vllm-project/vllm#19186",
     .line = "(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470] RuntimeError: CUDA error: "
             "out of memory",
     .rank = 3,
     .pid = 1090},
    {.name = "vLLM V1's (Worker_TPn pid=P) prefix",
     .source = "vllm-project/vllm multiproc_executor worker names (find_string '(Worker_PP1_TP')",
     .line = "(Worker_TP2 pid=160) ERROR 05-20 20:54:32 [multiproc_executor.py:962] torch.OutOfMemoryError: CUDA out of "
             "memory. Tried to allocate 136.00 MiB.",
     .rank = 2,
     .pid = 160},
    {.name = "vLLM V1's (Worker_PP1_TPn pid=P): a later stage's TP index is not a global rank",
     .source = "a vLLM issue thread (find_string '(Worker_PP1_TP'): -tp 2 -pp 2",
     .line = "(Worker_PP1_TP0 pid=3954408) ERROR 02-27 00:29:48 [multiproc_executor.py:863] "
             "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:94",
     .pid = 3954408},
    {.name = "vLLM V1's (Worker_PP1) with no TP: the stage is the rank",
     .source = "vLLM worker naming (find_string '(Worker_PP1_TP'), no pid",
     .line = "(Worker_PP1) ERROR torch._dynamo.exc.Unsupported: Data-dependent assertion failed",
     .rank = 1},
    {.name = "a Ray actor named with its rank, then [rankN]:, then a subgroup's [PG ID .. Rank N]",
     .source = "NeMo-RL-style log (find_string 'MegatronPolicyWorker[rank=9]')",
     .line = "(MegatronPolicyWorker[rank=9] pid=3098846) [rank9]:[E129 16:38:47.714849575 ProcessGroupNCCL.cpp:2241] "
             "[PG ID 5 PG GUID 37(TENSOR_MODEL_PARALLEL_GROUP) Rank 1]  failure detected by watchdog at work sequence "
             "id: 49387 PG status: last enqueued work: 49406, last completed work: 49386",
     .rank = 9,
     .pid = 3098846},
    {.name = "a subgroup's [PG N Rank R] is not a global rank",
     .source = "constructed: hiyouga/LlamaFactory#7396's line without its [80748] [rank0]: prefixes",
     .line = "[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or "
             "timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579."},
    {.name = "the default group's [PG 0 (default_pg) Rank R] is",
     .source = "mila-iqia/milabench#269 (the prefix; constructed message)",
     .line = "[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 12] Exception (either an "
             "error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL "
             "work: 1579.",
     .rank = 12,
     .rank_origin = Origin::body},
    {.name = "srun -l's task number before torchrun's [defaultN]: a node index, not a rank",
     .source = "constructed: srun -l (Slurm io.c '%0*d: ') over torchrun --tee's [default3]: prefix",
     .line = "1: [default3]:Traceback (most recent call last):",
     .local_rank = 3},
    {.name = "Slurm srun -l 'N: ' prefix",
     .source = "NVIDIA nvidia-resiliency-ext restart-agent test log (find_string '0: [rank0]:')",
     .line = "0: [2026-02-02 12:00:00] iteration 10/100 | consumed samples: 100 |",
     .rank = 0},
    {.name = "Open MPI [job,rank]<stderr>:",
     .source = "PyTorch error notes (GitHub, find_string '[1,1]<stderr>:RuntimeError: cuda runtime error (710)')",
     .line = "[1,1]<stderr>:RuntimeError: cuda runtime error (710) : device-side assert triggered at "
             "/tmp/pip-req-build-l1dtn3mo/aten/src/THC/THCReduceAll.cuh:321",
     .rank = 1},
    {.name = "Open MPI prefix then an NCCL comm line",
     .source = "signatures/nccl/nccl.comm-init.json",
     .line = "[1,0]<stdout>:test-nccl-worker-0:21:28 [0] NCCL INFO comm 0x55c4c398fed0 rank 0 nRanks 1 nNodes 1 "
             "localRanks 1 localRank 0 MNNVL 0",
     .rank = 0,
     .nranks = 1,
     .host = "test-nccl-worker-0",
     .pid = 21,
     .gpu = 0},
    {.name = "pdsh 'host: ' prefix then an NCCL line",
     .source = "huggingface/accelerate#1317",
     .line = "104.171.201.171: lambda-scalar02:95756:96916 [6] NCCL INFO NET/IB : No device found.",
     .host = "104.171.201.171",
     .pid = 95756,
     .gpu = 6},
    {.name = "an interpreter's name before glibc's assert message is not a host",
     .source = "signatures/host/host.native-assertion-failed.json",
     .line = "python3: /opt/src/csrc/ops/moe_align.cpp:118: void moe_align_block_size(int64_t, int64_t): Assertion "
             "`num_experts <= 1024' failed."},
    {.name = "DeepSpeed pdsh 'host: ' then a bracketed stamp",
     .source = "huggingface/transformers#22363",
     .line = "gpu1504: [2023-03-24 10:26:51,118] [INFO] [launch.py:142:main] WORLD INFO DICT: {'gpu1504': [0], "
             "'gpu1505': [0]}",
     .host = "gpu1504"},
    {.name = "NCCL host:pid:tid [dev] NCCL WARN",
     .source = "signatures/nccl/nccl.ib.completion-error.json",
     .line = "kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.0.35.1<49189> "
             "with error 4, opcode 5327, len 5327, vendor err 81 (Send)",
     .host = "kolyoz2",
     .pid = 25146,
     .gpu = 0},
    {.name = "NCCL 2.4 host:pid:tid [dev] without the word NCCL",
     .source = "signatures/nccl/nccl.socket.connect-failed.json",
     .line = "gpu-bql-144-103:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out",
     .host = "gpu-bql-144-103",
     .pid = 18553,
     .gpu = 0},
    {.name = "NCCL WARN on device 4",
     .source = "signatures/nccl/nccl.ib.create-resource-failed.json",
     .line = "hai-a100-3:3778851:3779883 [4] ibvwrap.c:130 NCCL WARN Call to ibv_create_qp failed",
     .host = "hai-a100-3",
     .pid = 3778851,
     .gpu = 4},
    {.name = "NCCL comm .. rank N nranks M (pre-2.19)",
     .source = "huggingface/accelerate#2246",
     .line = "qgpu2017:4305:4329 [1] NCCL INFO comm 0x52589c20 rank 7 nranks 8 cudaDev 1 nvmlDev 1 busId 4b000 "
             "commId 0x26b3ece72ee71028 - Init START",
     .rank = 7,
     .rank_origin = Origin::body,
     .nranks = 8,
     .host = "qgpu2017",
     .pid = 4305,
     .gpu = 1},
    {.name = "NCCL comm .. rank N nRanks M (2.19+)",
     .source = "signatures/nccl/nccl.comm-init.json",
     .line = "compute-gpu-st-distributed-ml-1:7614:7691 [0] NCCL INFO comm 0x573f9cb382e0 rank 0 nRanks 2 nNodes 2 "
             "localRanks 1 localRank 0 MNNVL 0",
     .rank = 0,
     .rank_origin = Origin::body,
     .nranks = 2,
     .host = "compute-gpu-st-distributed-ml-1",
     .pid = 7614,
     .gpu = 0},
    {.name = "NCCL comm .. Abort COMPLETE",
     .source = "signatures/framework/pytorch.nccl.communicator-aborted.json (PeterGriffinJin/Search-R1#170)",
     .line = "node-1:178:828 [0] NCCL INFO comm 0x55555da97ba0 rank 16 nranks 32 cudaDev 0 busId 1b000 - Abort "
             "COMPLETE",
     .rank = 16,
     .rank_origin = Origin::body,
     .nranks = 32,
     .host = "node-1",
     .pid = 178,
     .gpu = 0},
    {.name = "NCCL WARN naming a peer rank is not this line's rank",
     .source = "signatures/nccl/nccl.proxy.operation-failed.json",
     .line = "ubuntu:39964:40075 [0] proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute operation Connect "
             "from rank 0, retcode 2",
     .host = "ubuntu",
     .pid = 39964,
     .gpu = 0},
    {.name = "NVRM Xid (PCI:dddd:bb:dd)",
     .source = "signatures/driver/driver.nvrm.gpu-lost.json",
     .line = "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.",
     .pci = "0000:06:00"},
    {.name = "NVRM: GPU dddd:bb:dd.f: after raw dmesg",
     .source = "signatures/driver/driver.nvrm.rminitadapter-failed.json",
     .line = "[ 1097.650222] NVRM: GPU 0000:04:01.0: RmInitAdapter failed! (0x11:0x45:2525)",
     .pci = "0000:04:01"},
    {.name = "syslog host, then dmesg stamp and NVRM bus id",
     .source = "signatures/driver/driver.nvrm.rminitadapter-failed.json (NVIDIA/gpu-operator#1146)",
     .line = "Dec  2 11:49:53 worker4 kernel: [  885.242168] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! "
             "(0x24:0x72:1568)",
     .host = "worker4",
     .pci = "0000:0a:00"},
    {.name = "syslog host with proc[pid]",
     .source = "signatures/nvlink/nvlink.fabric-manager.restart.json",
     .line = "Mar 03 18:39:19 tpgds-aihub0007 systemd[1]: Started NVIDIA fabric manager service.",
     .host = "tpgds-aihub0007"},
    {.name = "no context: bare Python exception",
     .source = "signatures/cuda (PyTorch c10 CUDA error text)",
     .line = "RuntimeError: CUDA error: an illegal memory access was encountered"},
    {.name = "no context: traceback header",
     .source = "CPython traceback",
     .line = "Traceback (most recent call last):"},
    {.name = "no context: Lightning progress bar",
     .source = "spellml/examples#17",
     .line = "Epoch 8: 100% 16/16 [00:16<00:00,  1.04s/it, loss=0.33, v_num=0, train_loss=0.295, val_loss=0.337, "
             "val_acc=0.910]"},
};

void check_line(const LineCase& c) {
  INFO(c.line);
  const LineContext ctx = parse_line(c.line);
  if (c.rank == k_no) {
    CHECK_FALSE(ctx.rank);
  } else {
    REQUIRE(ctx.rank);
    CHECK(ctx.rank->value == c.rank);
    CHECK(to_string(ctx.rank->origin) == to_string(c.rank_origin));
  }
  if (c.local_rank == k_no) {
    CHECK_FALSE(ctx.local_rank);
  } else {
    REQUIRE(ctx.local_rank);
    CHECK(ctx.local_rank->value == c.local_rank);
  }
  if (c.nranks == k_no) {
    CHECK_FALSE(ctx.nranks);
  } else {
    REQUIRE(ctx.nranks);
    CHECK(ctx.nranks->value == c.nranks);
  }
  if (c.host == nullptr) {
    CHECK_FALSE(ctx.host);
  } else {
    REQUIRE(ctx.host);
    CHECK(ctx.host->value == c.host);
  }
  if (c.pid == k_no) {
    CHECK_FALSE(ctx.pid);
  } else {
    REQUIRE(ctx.pid);
    CHECK(ctx.pid->value == c.pid);
  }
  if (c.gpu == k_no) {
    CHECK_FALSE(ctx.gpu);
  } else {
    REQUIRE(ctx.gpu);
    CHECK(ctx.gpu->value == c.gpu);
  }
  if (c.pci == nullptr) {
    CHECK_FALSE(ctx.pci);
  } else {
    REQUIRE(ctx.pci);
    CHECK(ctx.pci->value == c.pci);
  }
}

} // namespace

TEST_CASE("context::parse_line: launcher prefixes, c10d, NCCL, NVRM and syslog", "[context]") {
  const auto& c = GENERATE(from_range(std::begin(k_cases), std::end(k_cases)));
  DYNAMIC_SECTION(c.name << " (" << c.source << ")") { check_line(c); }
}

// Regression (found by the unit tests, fixed): Open MPI's `mpirun --timestamp-output` puts the stamp before the
// "[job,rank]<stderr>:" prefix; strip_prefixes (src/context/context.cpp)
// stops at the stamp's first token, so the rank is lost.
TEST_CASE("context::parse_line: Open MPI prefix after --timestamp-output", "[context]") {
  // sgl-project/sglang issue log (find_string 'Thu Jan 23 11:55:50 2025[1,1]')
  const auto ctx = parse_line("Thu Jan 23 11:55:50 2025[1,1]<stderr>:    scheduler.event_loop_overlap()");
  CHECK(ctx.time.kind == ClockKind::wall);
  REQUIRE(ctx.rank);
  CHECK(ctx.rank->value == 1);
}

TEST_CASE("context::parse_line: the line's own stamp is kept", "[context]") {
  const auto ctx = parse_line("[1,1]<stderr>:I1002 00:21:28.179744  1326 run_status.cc:71] [RunStatus]: "
                              "OpsEmbeddingLookup statistics => count: 1553");
  CHECK(ctx.time.kind == ClockKind::wall);
  CHECK(ctx.time.format == "glog");
  CHECK(ctx.time.origin == Origin::body);
  REQUIRE(ctx.rank);
  CHECK(ctx.rank->value == 1);
}

TEST_CASE("context::normalize_pci: the bus-id spellings", "[context]") {
  CHECK(normalize_pci("3B:00.0") == "0000:3b:00");
  CHECK(normalize_pci("0000:3b:00") == "0000:3b:00");
  CHECK(normalize_pci("00000000:3B:00.0") == "0000:3b:00"); // nvidia-smi's 8-digit domain
  CHECK(normalize_pci("0000:3b:00.0:") == "0000:3b:00");
  CHECK(normalize_pci("0001:b3:00.0") == "0001:b3:00");
  CHECK(normalize_pci("").empty());
  CHECK(normalize_pci("3b").empty());
  CHECK(normalize_pci("xyz:00").empty());
  CHECK(normalize_pci("0000:3:00").empty());
}

TEST_CASE("context::parse_path: rank and host from file names", "[context]") {
  struct Case {
    const char* path;
    int rank;
    const char* host;
  };
  const Case cases[] = {
      {"rank_3.log", 3, ""},
      {"logs/rank3.log", 3, ""},
      {"logs/rank-12.txt", 12, ""},
      {"node-017/rank3.log", 3, "node-017"},
      {"node-017/dmesg", k_no, "node-017"},
      {"dump/node-017.tar.gz:var/log/dmesg", k_no, "node-017"},
      {"gpu-node-3/nvidia-bug-report.log.gz", k_no, "gpu-node-3"},
      {"train.log", k_no, ""},
      {"dmesg", k_no, ""},
      {"<stdin>", k_no, ""},
      {"logs/frank3.log", k_no, ""}, // "rank" inside a word is not a rank
  };
  for (const auto& c : cases) {
    INFO(c.path);
    const auto pc = parse_path(c.path);
    if (c.rank == k_no) {
      CHECK_FALSE(pc.rank);
    } else {
      REQUIRE(pc.rank);
      CHECK(*pc.rank == c.rank);
    }
    CHECK(pc.host == c.host);
  }
}

TEST_CASE("context::SourceContext: a line without a stamp inherits the nearest earlier one in the chunk", "[context]") {
  // aws/aws-ofi-nccl#715: a collector stamped each line on the line before it.
  const std::string chunk = "2024-12-04T07:19:22.472Z\n"
                            "file locks (-x) unlimited\n"
                            "2024-12-04T07:19:25.473Z\n"
                            "gpu-dev006:25486:25486 [0] NCCL INFO Using network IB\n"
                            "gpu-dev006:25486:25486 [0] NCCL INFO NET/IB : Using [0]mlx4_0:1/RoCE\n";
  SourceContext sc("train.log");
  const auto pos = chunk.find("gpu-dev006:25486:25486 [0] NCCL INFO NET/IB");
  const auto line = std::string_view(chunk).substr(pos, chunk.find('\n', pos) - pos);
  const auto ctx = sc.context_for(chunk, pos, line);
  REQUIRE(ctx.time.kind == ClockKind::wall);
  CHECK(ctx.time.origin == Origin::neighbour);
  CHECK(ctx.time.wall.second == 25); // the nearer stamp, not 07:19:22
  CHECK(ctx.time.wall.micros == 473000);
  // The first line of the chunk has nothing before it.
  const auto first = sc.context_for(chunk, 0, std::string_view(chunk).substr(0, 24));
  CHECK(first.time.origin == Origin::body);
  CHECK(first.time.wall.second == 22);
}

TEST_CASE("context::SourceContext: no stamp anywhere stays none", "[context]") {
  const std::string chunk = "Traceback (most recent call last):\n"
                            "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  SourceContext sc("train.log");
  const auto pos = chunk.find("RuntimeError");
  const auto ctx = sc.context_for(chunk, pos, std::string_view(chunk).substr(pos, chunk.size() - 1 - pos));
  CHECK(ctx.time.kind == ClockKind::none);
  CHECK_FALSE(ctx.rank);
  CHECK_FALSE(ctx.host);
}

TEST_CASE("context::SourceContext: rank and host from the source's path", "[context]") {
  const std::string chunk = "Traceback (most recent call last):\n";
  const auto line = std::string_view(chunk).substr(0, chunk.size() - 1);
  {
    SourceContext sc("rank_3.log");
    const auto ctx = sc.context_for(chunk, 0, line);
    REQUIRE(ctx.rank);
    CHECK(ctx.rank->value == 3);
    CHECK(ctx.rank->origin == Origin::file_name);
    CHECK_FALSE(ctx.host);
  }
  {
    SourceContext sc("node-017/rank3.log");
    const auto ctx = sc.context_for(chunk, 0, line);
    REQUIRE(ctx.rank);
    CHECK(ctx.rank->value == 3);
    REQUIRE(ctx.host);
    CHECK(ctx.host->value == "node-017");
    CHECK(ctx.host->origin == Origin::file_name);
  }
  {
    // The line's own prefix wins over the file name.
    const std::string own = "[1,1]<stderr>:RuntimeError: cuda runtime error (710) : device-side assert triggered\n";
    SourceContext sc("rank_3.log");
    const auto ctx = sc.context_for(own, 0, std::string_view(own).substr(0, own.size() - 1));
    REQUIRE(ctx.rank);
    CHECK(ctx.rank->value == 1);
    CHECK(ctx.rank->origin == Origin::prefix);
  }
}

TEST_CASE("context::SourceContext: host from node-017/dmesg", "[context]") {
  // signatures/driver/driver.nvrm.rminitadapter-failed.json
  const std::string chunk = "[ 1097.650222] NVRM: GPU 0000:04:01.0: RmInitAdapter failed! (0x11:0x45:2525)\n";
  SourceContext sc("node-017/dmesg");
  CHECK(sc.path().host == "node-017");
  const auto ctx = sc.context_for(chunk, 0, std::string_view(chunk).substr(0, chunk.size() - 1));
  REQUIRE(ctx.host);
  CHECK(ctx.host->value == "node-017");
  CHECK(ctx.host->origin == Origin::file_name);
  REQUIRE(ctx.pci);
  CHECK(ctx.pci->value == "0000:04:01");
  CHECK(ctx.time.kind == ClockKind::monotonic);
  CHECK(ctx.time.mono_micros == 1097650222);
}

TEST_CASE("context::SourceContext: end_chunk carries the last stamp into the next chunk", "[context]") {
  // Two chunks of one syslog-style source (signatures/xid/xid.48.json, xid.64.json).
  const std::string chunk1 = "Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, "
                             "pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been "
                             "detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.\n"
                             "Traceback (most recent call last):\n";
  const std::string chunk2 = "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  SourceContext sc("node-017/syslog");
  sc.end_chunk(chunk1);
  const auto ctx = sc.context_for(chunk2, 0, std::string_view(chunk2).substr(0, chunk2.size() - 1));
  REQUIRE(ctx.time.kind == ClockKind::wall);
  CHECK(ctx.time.origin == Origin::neighbour);
  CHECK(ctx.time.format == "syslog");
  CHECK(ctx.time.wall.month == 12);
  CHECK(ctx.time.wall.day == 2);
  CHECK(ctx.time.wall.hour == 11);
  CHECK(ctx.time.wall.minute == 38);
  CHECK(ctx.time.wall.second == 47);

  // A stamp in the new chunk before the line wins over the inherited one.
  const std::string chunk3 = "Dec  2 11:38:48 worker4 kernel: NVRM: Xid (PCI:0000:07:00): 64\n"
                             "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  const auto pos = chunk3.find("RuntimeError");
  const auto ctx3 = sc.context_for(chunk3, pos, std::string_view(chunk3).substr(pos, chunk3.size() - 1 - pos));
  CHECK(ctx3.time.origin == Origin::neighbour);
  CHECK(ctx3.time.wall.second == 48);
}

TEST_CASE("context::SourceContext: end_chunk on a chunk without stamps keeps the older stamp", "[context]") {
  SourceContext sc("train.log");
  sc.end_chunk("[2025-11-16T10:03:44.655] error: Detected 1 oom_kill event in StepId=28911.batch.\n");
  sc.end_chunk("Traceback (most recent call last):\n");
  const std::string chunk = "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  const auto ctx = sc.context_for(chunk, 0, std::string_view(chunk).substr(0, chunk.size() - 1));
  REQUIRE(ctx.time.kind == ClockKind::wall);
  CHECK(ctx.time.origin == Origin::neighbour);
  CHECK(ctx.time.wall.year == 2025);
  CHECK(ctx.time.wall.micros == 655000);
}

TEST_CASE("context::SourceContext: a stamp more than 64 lines back is too far, whatever the chunking", "[context]") {
  // The same answer under every chunk size.
  const std::string stamped = "[2025-11-16T10:03:44.655] error: Detected 1 oom_kill event in StepId=28911.batch.\n";
  std::string filler;
  for (int i = 0; i < 40; ++i) {
    filler += "  File \"train.py\", line 1, in <module>\n";
  }
  const std::string chunk = "RuntimeError: CUDA error: an illegal memory access was encountered\n";
  const auto line = std::string_view(chunk).substr(0, chunk.size() - 1);
  SECTION("63 lines back, over three chunks: found") {
    SourceContext sc("train.log");
    sc.end_chunk(stamped + filler.substr(0, filler.size() / 40 * 22)); // stamp, then 22 lines
    sc.end_chunk(filler);                                             // 40 more
    const auto ctx = sc.context_for(chunk, 0, line);
    CHECK(ctx.time.kind == ClockKind::wall);
  }
  SECTION("65 lines back: not found") {
    SourceContext sc("train.log");
    sc.end_chunk(stamped + filler.substr(0, filler.size() / 40 * 24));
    sc.end_chunk(filler);
    const auto ctx = sc.context_for(chunk, 0, line);
    CHECK(ctx.time.kind == ClockKind::none);
  }
}

// Output of two ranks interleaved on one line (a pasted log, or two processes
// writing to one pipe without line buffering): the message that matched is
// rank 3's, after rank 1's unfinished warning. Line format: ProcessGroupNCCL's
// watchdog timeout as in testdata/sample/train.log.
TEST_CASE("context::SourceContext: a prefix interleaved mid-line names the rank of the message after it", "[context]") {
  const std::string first = "[rank1]:[W1129 17:59:57.100000 2337 ProcessGroupNCCL.cpp:1234] Warning: bucket view ";
  const std::string second = "[rank3]:[E1129 18:09:58.100000 2339 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:616] "
                             "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
                             "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
                             "milliseconds before timing out.";
  const std::string line = first + second;
  const std::string chunk = line + "\n";
  denpex::context::SourceContext sc("train.log");
  const auto at_message = line.find("Watchdog caught");
  const auto ctx = sc.context_for(chunk, 0, line, at_message);
  REQUIRE(ctx.rank);
  CHECK(ctx.rank->value == 3);
  CHECK(ctx.time.wall.hour == 18);
  CHECK(ctx.time.wall.minute == 9);
  // The message at the start of the line keeps rank 1.
  const auto ctx1 = sc.context_for(chunk, 0, line, line.find("Warning:"));
  REQUIRE(ctx1.rank);
  CHECK(ctx1.rank->value == 1);
}

TEST_CASE("context::SourceContext: a stamp found by continuing the last walk is the one a fresh walk finds",
          "[context]") {
  // Lines with and without stamps at every distance; each line asked for in
  // order (the walk before it is reused) and by a context that never walked.
  const std::string stamped = "[2025-11-16T10:03:44.655] error: Detected 1 oom_kill event in StepId=28911.batch.";
  const std::string plain = "  File \"train.py\", line 1, in <module>";
  std::string prev;
  for (int i = 0; i < 30; ++i) {
    prev += plain + "\n"; // the previous chunk ends 30 lines after its stamp
  }
  prev = stamped + "\n" + prev;
  std::string chunk;
  std::vector<std::size_t> starts;
  unsigned x = 7;
  for (int i = 0; i < 400; ++i) {
    starts.push_back(chunk.size());
    x = x * 1103515245u + 12345u;
    // Stamps get rarer down the chunk: gaps from a few lines to more than 64.
    const bool has_stamp = (x >> 16) % static_cast<unsigned>(2 + i / 4) == 0;
    // Each stamp its own milliseconds, so the one found is known.
    const std::string ms = std::to_string(100 + i % 900);
    chunk += (has_stamp ? "[2025-11-16T10:03:44." + ms + "] error: step " + std::to_string(i) : plain) + "\n";
  }
  SourceContext walking("train.log");
  walking.end_chunk(prev);
  std::size_t with_neighbour = 0;
  std::size_t without = 0;
  for (std::size_t k = 0; k < starts.size(); k += 1 + k % 3) {
    const auto line = std::string_view(chunk).substr(starts[k], chunk.find('\n', starts[k]) - starts[k]);
    SourceContext fresh("train.log");
    fresh.end_chunk(prev);
    const auto want = fresh.context_for(chunk, starts[k], line);
    const auto got = walking.context_for(chunk, starts[k], line);
    INFO("line " << k);
    CHECK(got.time.kind == want.time.kind);
    CHECK(got.time.origin == want.time.origin);
    CHECK(got.time.wall.micros == want.time.wall.micros);
    if (want.time.kind == ClockKind::none) {
      ++without;
    } else if (want.time.origin == Origin::neighbour) {
      ++with_neighbour;
    }
  }
  CHECK(with_neighbour > 20); // both answers occur
  CHECK(without > 5);
}

// Real prefixes, each up to where an exception pattern would start.
TEST_CASE("context::logged_below_error: level words and glog letters below ERROR", "[context]") {
  using denpex::context::logged_below_error;
  // torch._dynamo through Python logging (MrCogito/Deep_learning_2023, an LSF job log).
  CHECK(logged_below_error("[2023-12-01 06:22:31,450] torch._dynamo.convert_frame: [WARNING"));
  // Python logging's default format.
  CHECK(logged_below_error("WARNING:root:"));
  // loguru (nv-tlabs/LION#9).
  CHECK(logged_below_error("2023-01-25 00:21:34.569 | INFO     | trainers.base_trainer:train_epochs:256 - [R0] |"));
  // glog W level behind torchrun's prefix.
  CHECK(logged_below_error("[rank0]:W1120 01:13:20.892446889 ProcessGroupNCCL.cpp:1662]"));
  // Not below error: ERROR levels, rank prefixes, words that only contain a level.
  CHECK_FALSE(logged_below_error("[2023-12-01 06:22:31,450] [ERROR"));
  CHECK_FALSE(logged_below_error("[rank3]:"));
  CHECK_FALSE(logged_below_error("[rank0]:E1120 01:13:20.892446889 ProcessGroupNCCL.cpp:1662]"));
  CHECK_FALSE(logged_below_error("INFORMATION "));
  CHECK_FALSE(logged_below_error(""));
}
