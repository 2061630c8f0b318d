// Unit tests for context::find_timestamp and context::to_epoch_micros.
//
// Table-driven (RE2's simple_tests style): every row is a real log line with
// the source it was copied from.
#include <catch2/catch.hpp>

#include <denpex/context/context.hpp>

#include <optional>
#include <string>

using denpex::context::ClockKind;
using denpex::context::find_timestamp;
using denpex::context::to_epoch_micros;
using denpex::context::WallTime;

namespace {

struct WallCase {
  const char* name;
  const char* source; // where the line comes from
  const char* line;
  const char* format;
  int year, month, day, hour, minute, second, micros;
  std::optional<int> tz_minutes;
};

const WallCase k_wall_cases[] = {
    {"ISO-8601 T, millis, Z", "aws/aws-ofi-nccl#715", "2024-12-04T07:19:22.472Z", "iso8601", 2024, 12, 4, 7, 19, 22,
     472000, 0},
    {"ISO-8601 T, +02:00", "Slurm/pyxis cgroup warning (GitHub, find_string 'Failed to remove cgroup')",
     "time=\"2024-10-09T23:25:32+02:00\" level=warning msg=\"Failed to remove cgroup (will retry)\"", "iso8601", 2024,
     10, 9, 23, 25, 32, 0, 120},
    {"ISO-8601 space, no fraction", "facebookresearch/metaseq#291",
     "2022-08-05 08:44:41 | INFO | metaseq.distributed.utils | initialized host fairwus3-1-htc-337 as rank 0",
     "iso8601", 2022, 8, 5, 8, 44, 41, 0, std::nullopt},
    // journalctl -o short-iso prints "%Y-%m-%dT%H:%M:%S%z" (journalctl(1),
    // https://manpath.be/f31/1/journalctl); the message is the real Xid 79
    // line of signatures/driver/driver.nvrm.gpu-lost.json.
    {"journalctl short-iso +0000", "journalctl(1) short-iso format + NVRM Xid 79 message",
     "2024-11-29T17:59:59+0000 node-017 kernel: NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.",
     "iso8601", 2024, 11, 29, 17, 59, 59, 0, 0},
    {"Python logging after an Open MPI prefix", "horovod trainer log (GitHub, find_string '[1,1]<stderr>:I1002')",
     "[1,0]<stderr>:2024-10-02 00:21:29,533 - INFO [hooks.py:264 - after_run] - 2024-10-02 00:21:29.533615: step "
     "2800, auc = 0.6706 (63.9 it/sec; 65430.9 examples/sec)",
     "python", 2024, 10, 2, 0, 21, 29, 533000, std::nullopt},
    {"DeepSpeed bracketed stamp with comma millis", "deepspeedai/DeepSpeed#736",
     "[2021-02-08 22:59:18,790] [INFO] [launch.py:71:main] 0 NCCL_IB_DISABLE 1", "iso8601", 2021, 2, 8, 22, 59, 18,
     790000, std::nullopt},
    {"Slurm [ISO.millis]", "slurmstepd oom_kill line (GitHub, find_string 'Detected 1 oom_kill event')",
     "[2025-11-16T10:03:44.655] error: Detected 1 oom_kill event in StepId=28911.batch. Some of the step tasks have "
     "been OOM Killed.",
     "iso8601", 2025, 11, 16, 10, 3, 44, 655000, std::nullopt},
    {"vLLM level, month-day, no year", "vLLM issue log (find_string 'Automatically detected platform cuda.')",
     "INFO 08-01 12:38:45 [__init__.py:241] Automatically detected platform cuda.", "level-month-day", 0, 8, 1, 12, 38,
     45, 0, std::nullopt},
    {"vLLM after its process prefix", "vLLM issue log (find_string 'Automatically detected platform cuda.')",
     "(APIServer pid=6828) INFO 08-01 12:38:48 [api_server.py:1774] vLLM API server version 0.1.dev8168+g475c1a0",
     "level-month-day", 0, 8, 1, 12, 38, 48, 0, std::nullopt},
    {"glog, microseconds", "aws/aws-ofi-nccl#715",
     "W1204 07:19:24.745000 18465 site-packages/torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment "
     "variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the "
     "variable for optimal performance in your application as needed.",
     "glog", 0, 12, 4, 7, 19, 24, 745000, std::nullopt},
    {"c10 glog after [rankN]:, nanoseconds truncated", "signatures/framework/pytorch.nccl.ops-failed-or-timed-out.json",
     "[rank0]:[E1206 18:44:16.994957078 ProcessGroupNCCL.cpp:621] [Rank 0] Some NCCL operations have failed or timed "
     "out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
     "corrupted/incomplete data.",
     "glog", 0, 12, 6, 18, 44, 16, 994957, std::nullopt},
    {"glog after an Open MPI prefix", "horovod trainer log (GitHub, find_string '[1,1]<stderr>:I1002')",
     "[1,1]<stderr>:I1002 00:21:28.179744  1326 run_status.cc:71] [RunStatus]: OpsEmbeddingLookup statistics => "
     "count: 1553  P50: 41644.387001  P95: 57511.261261  P99: 68023.000000  Max: 68023.000000",
     "glog", 0, 10, 2, 0, 21, 28, 179744, std::nullopt},
    {"syslog, space-padded day, wins over the dmesg stamp after it",
     "signatures/driver/driver.nvrm.rminitadapter-failed.json (NVIDIA/gpu-operator#1146)",
     "Dec  2 11:49:53 worker4 kernel: [  885.242168] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)",
     "syslog", 0, 12, 2, 11, 49, 53, 0, std::nullopt},
    {"syslog, zero-padded day", "signatures/nvlink/nvlink.fabric-manager.restart.json",
     "Mar 03 18:39:19 tpgds-aihub0007 systemd[1]: Started NVIDIA fabric manager service.", "syslog", 0, 3, 3, 18, 39,
     19, 0, std::nullopt},
    {"dmesg -T", "signatures/nvlink/nvlink.fabric-manager.xid31-nvls-cascade.json (NVIDIA Xid docs)",
     "[Fri Nov 29 17:59:58 2024] NVRM: Xid (PCI:0000:18:00): 31, pid=1234, name=python, Ch 00000008, intr 00000000. "
     "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f12_34560000. Fault is of type FAULT_PDE "
     "ACCESS_TYPE_VIRT_READ",
     "dmesg-T", 2024, 11, 29, 17, 59, 58, 0, std::nullopt},
    {"mpirun --timestamp-output", "sgl-project/sglang (issue log, find_string 'Thu Jan 23 11:55:50 2025')",
     "Thu Jan 23 11:55:50 2025[1,1]<stderr>:    scheduler.event_loop_overlap()", "dmesg-T", 2025, 1, 23, 11, 55, 50,
     0, std::nullopt},
};

struct MonoCase {
  const char* name;
  const char* source;
  const char* line;
  std::int64_t mono_micros;
};

const MonoCase k_mono_cases[] = {
    {"raw dmesg", "signatures/driver/driver.nvrm.rminitadapter-failed.json",
     "[ 1097.650222] NVRM: GPU 0000:04:01.0: RmInitAdapter failed! (0x11:0x45:2525)", 1097650222},
    {"raw dmesg, padded", "signatures/driver/driver.nvrm.rminitadapter-failed.json",
     "[   88.585226] NVRM: GPU 0000:a1:00.0: rm_init_adapter failed, device minor number 7", 88585226},
};

// Lines that carry no timestamp; a parser that finds one here is wrong.
struct NoneCase {
  const char* name;
  const char* source;
  const char* line;
};

const NoneCase k_none_cases[] = {
    {"old c10 glog without a date", "signatures/framework/pytorch.nccl.async-error.json",
     "[E ProcessGroupNCCL.cpp:852] [Rank 16] NCCL watchdog thread terminated with exception: NCCL error: remote "
     "process exited or there was a network error, NCCL version 2.19.3"},
    {"NVRM line without a stamp", "signatures/driver/driver.nvrm.gpu-lost.json",
     "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus."},
    {"NCCL line", "facebookresearch/deit#28", "gpu-dev006:25486:25486 [0] NCCL INFO Using network IB"},
    {"progress bar with [mm:ss<mm:ss]", "spellml/examples#17 (Lightning progress bar)",
     "Epoch 8: 100% 16/16 [00:16<00:00,  1.04s/it, loss=0.33, v_num=0, train_loss=0.295, val_loss=0.337, "
     "val_acc=0.910]"},
    {"torchrun traceback", "skypilot log (GitHub, find_string '[rank1]: [rank1]: Traceback')",
     "[rank1]: [rank1]: Traceback (most recent call last):"},
    {"empty line", "-", ""},
};

} // namespace

TEST_CASE("context::find_timestamp: wall-clock formats", "[context]") {
  const auto& c = GENERATE(from_range(std::begin(k_wall_cases), std::end(k_wall_cases)));
  DYNAMIC_SECTION(c.name << " (" << c.source << ")") {
    INFO(c.line);
    auto t = find_timestamp(c.line);
    REQUIRE(t);
    CHECK(t->kind == ClockKind::wall);
    CHECK(t->format == c.format);
    CHECK(t->wall.year == c.year);
    CHECK(t->wall.month == c.month);
    CHECK(t->wall.day == c.day);
    CHECK(t->wall.hour == c.hour);
    CHECK(t->wall.minute == c.minute);
    CHECK(t->wall.second == c.second);
    CHECK(t->wall.micros == c.micros);
    CHECK(t->wall.tz_minutes == c.tz_minutes);
  }
}

TEST_CASE("context::find_timestamp: raw dmesg is monotonic", "[context]") {
  const auto& c = GENERATE(from_range(std::begin(k_mono_cases), std::end(k_mono_cases)));
  DYNAMIC_SECTION(c.name << " (" << c.source << ")") {
    auto t = find_timestamp(c.line);
    REQUIRE(t);
    CHECK(t->kind == ClockKind::monotonic);
    CHECK(t->format == "dmesg");
    CHECK(t->mono_micros == c.mono_micros);
  }
}

TEST_CASE("context::find_timestamp: lines without a stamp", "[context]") {
  const auto& c = GENERATE(from_range(std::begin(k_none_cases), std::end(k_none_cases)));
  DYNAMIC_SECTION(c.name << " (" << c.source << ")") {
    auto t = find_timestamp(c.line);
    CHECK_FALSE(t);
  }
}

// Regression (found by the unit tests, fixed): c10's logger prints the month without zero padding
// (`(tm_mon + 1) * 100 + tm_mday` in c10/util/Logging.cpp), so January to
// September give a 3-digit MDD: "[E704 13:48:58.260494728 ...". parse_glog in
// src/context/timestamp.cpp demands exactly 4 digits, so every PyTorch stamp
// from January to September is missed (and the line falls back to a
// neighbour's stamp).
TEST_CASE("context::find_timestamp: c10 glog with a 3-digit month-day", "[context]") {
  struct Case {
    const char* line;
    int month, day, hour, minute, second, micros;
  };
  const Case cases[] = {
      // signatures/framework/pytorch.nccl.heartbeat-monitor-abort.json (xdit-project/xDiT#147)
      {"[rank2]:[E704 13:48:58.260494728 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
       "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
       "collectives.",
       7, 4, 13, 48, 58, 260494},
      // signatures/framework/pytorch.store.connection-lost.json (sgl-project/sglang#20859)
      {"[rank8]:[W318 10:00:41.929037914 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0 Rank 8] Failed to check the "
       "\"should dump\" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection "
       "reset by peer",
       3, 18, 10, 0, 41, 929037},
  };
  for (const auto& c : cases) {
    INFO(c.line);
    auto t = find_timestamp(c.line);
    REQUIRE(t);
    CHECK(t->format == "glog");
    CHECK(t->wall.month == c.month);
    CHECK(t->wall.day == c.day);
    CHECK(t->wall.hour == c.hour);
    CHECK(t->wall.minute == c.minute);
    CHECK(t->wall.second == c.second);
    CHECK(t->wall.micros == c.micros);
  }
}

TEST_CASE("context::to_epoch_micros: calendar arithmetic and zones", "[context]") {
  auto wall = [](int y, int mo, int d, int h, int mi, int s, int us, std::optional<int> tz) {
    WallTime t;
    t.year = y;
    t.month = mo;
    t.day = d;
    t.hour = h;
    t.minute = mi;
    t.second = s;
    t.micros = us;
    t.tz_minutes = tz;
    return t;
  };
  // Reference values: `date -u -d '2024-11-29 17:59:59' +%s` = 1732903199.
  CHECK(to_epoch_micros(wall(1970, 1, 1, 0, 0, 0, 0, std::nullopt), 0) == 0);
  CHECK(to_epoch_micros(wall(2024, 11, 29, 17, 59, 59, 0, std::nullopt), 0) == 1732903199LL * 1000000);
  CHECK(to_epoch_micros(wall(2024, 11, 29, 17, 59, 59, 0, 0), 0) == 1732903199LL * 1000000);
  CHECK(to_epoch_micros(wall(2024, 11, 29, 17, 59, 59, 123456, std::nullopt), 0) == 1732903199LL * 1000000 + 123456);
  // +02:00 is two hours ahead of UTC: the same instant is 2 h earlier in UTC.
  CHECK(to_epoch_micros(wall(2024, 11, 29, 19, 59, 59, 0, 120), 0) == 1732903199LL * 1000000);
  CHECK(to_epoch_micros(wall(2024, 11, 29, 12, 29, 59, 0, -330), 0) == 1732903199LL * 1000000);
  // Leap day and the day after (date -u -d '2024-02-29 12:00:00' +%s = 1709208000).
  CHECK(to_epoch_micros(wall(2024, 2, 29, 12, 0, 0, 0, std::nullopt), 0) == 1709208000LL * 1000000);
  CHECK(to_epoch_micros(wall(2024, 3, 1, 12, 0, 0, 0, std::nullopt), 0) == (1709208000LL + 86400) * 1000000);
  // A stamp without a year takes the assumed one.
  CHECK(to_epoch_micros(wall(0, 11, 29, 17, 59, 59, 0, std::nullopt), 2024) == 1732903199LL * 1000000);
  CHECK(to_epoch_micros(wall(0, 11, 29, 17, 59, 59, 0, std::nullopt), 2023) ==
        (1732903199LL - 366LL * 86400) * 1000000);
}

TEST_CASE("context::to_epoch_micros: stamps parsed from lines order correctly across zones", "[context]") {
  // The ISO line at +02:00 (23:25:32 local) is 21:25:32 UTC, before a Z stamp
  // at 21:25:33 the same day.
  auto a = find_timestamp("time=\"2024-10-09T23:25:32+02:00\" level=warning msg=\"Failed to remove cgroup (will retry)\"");
  REQUIRE(a);
  WallTime b;
  b.year = 2024;
  b.month = 10;
  b.day = 9;
  b.hour = 21;
  b.minute = 25;
  b.second = 33;
  b.tz_minutes = 0;
  CHECK(to_epoch_micros(a->wall, 0) + 1000000 == to_epoch_micros(b, 0));
}
