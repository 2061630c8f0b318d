// Stand-alone microbenchmark of denpex's hot path, outside denpex: read a log
// in chunks that end on a line boundary and run one RE2::Set (the exported
// catalog patterns, each prefixed with "(?m)" as src/matcher does) over each
// chunk. It isolates the costs that docs/performance.md discusses: read()
// copies vs mmap, chunk size, the Set's DFA budget. Not built by CMake:
//
//   g++ -O2 -std=c++20 tests/bench/set_bench.cpp -lre2 -o /tmp/set_bench
//   denpex signatures export --format patterns > /tmp/patterns.txt
//   /tmp/set_bench /tmp/patterns.txt train.log read 1024 64
//
// Modes: read (read() into a buffer of CHUNK KiB, as LineReader does),
// mmap (map the file, match CHUNK-KiB windows), io (read() and count newlines
// with memchr, no matching: the I/O floor). Prints CPU seconds (getrusage),
// wall seconds, GB/s of wall, chunks with a Set hit.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <re2/re2.h>
#include <re2/set.h>

namespace {

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

std::size_t count_newlines(const char* p, std::size_t n) {
  std::size_t count = 0;
  const char* end = p + n;
  while (p < end) {
    const auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    if (nl == nullptr) {
      break;
    }
    ++count;
    p = nl + 1;
  }
  return count;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s PATTERNS LOG read|mmap|io [CHUNK_KIB=1024] [MAX_MEM_MIB=64]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[3];
  const std::size_t chunk = (argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1024) << 10;
  const std::int64_t max_mem = (argc > 5 ? std::strtoll(argv[5], nullptr, 10) : 64) << 20;

  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(max_mem);
  RE2::Set set(opts, RE2::UNANCHORED);
  std::ifstream pf(argv[1]);
  std::string pat;
  int npat = 0;
  while (std::getline(pf, pat)) {
    if (!pat.empty() && set.Add("(?m)" + pat, nullptr) >= 0) {
      ++npat;
    }
  }
  if (!set.Compile()) {
    std::fprintf(stderr, "Set::Compile failed\n");
    return 2;
  }

  const int fd = open(argv[2], O_RDONLY);
  if (fd < 0) {
    std::perror(argv[2]);
    return 2;
  }
  struct stat st{};
  fstat(fd, &st);
  const auto size = static_cast<std::size_t>(st.st_size);

  std::size_t hits = 0;
  std::size_t lines = 0;
  std::size_t oom = 0;
  std::vector<int> v;
  auto match = [&](const char* p, std::size_t n) {
    v.clear();
    RE2::Set::ErrorInfo info{};
    if (set.Match(re2::StringPiece(p, n), &v, &info)) {
      ++hits;
    } else if (info.kind != RE2::Set::kNoError) {
      ++oom;
    }
  };

  const double c0 = cpu_seconds();
  const auto w0 = std::chrono::steady_clock::now();
  if (mode == "mmap") {
    const char* base = static_cast<const char*>(mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0));
    if (base == MAP_FAILED) {
      std::perror("mmap");
      return 2;
    }
    std::size_t pos = 0;
    while (pos < size) {
      std::size_t n = std::min(chunk, size - pos);
      if (pos + n < size) {
        const void* nl = memrchr(base + pos, '\n', n);
        if (nl != nullptr) {
          n = static_cast<std::size_t>(static_cast<const char*>(nl) - (base + pos)) + 1;
        }
      }
      lines += count_newlines(base + pos, n);
      match(base + pos, n);
      pos += n;
    }
  } else {
    std::vector<char> buf(chunk);
    std::size_t have = 0;
    for (;;) {
      const ssize_t got = read(fd, buf.data() + have, buf.size() - have);
      if (got < 0) {
        std::perror("read");
        return 2;
      }
      have += static_cast<std::size_t>(got);
      if (have == 0) {
        break;
      }
      std::size_t n = have;
      if (got > 0) {
        const void* nl = memrchr(buf.data(), '\n', have);
        if (nl != nullptr) {
          n = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data()) + 1;
        }
      }
      lines += count_newlines(buf.data(), n);
      if (mode != "io") {
        match(buf.data(), n);
      }
      std::memmove(buf.data(), buf.data() + n, have - n);
      have -= n;
      if (got == 0 && have == 0) {
        break;
      }
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const double cpu = cpu_seconds() - c0;
  std::printf("mode=%s chunk=%zuKiB max_mem=%lldMiB patterns=%d bytes=%zu lines=%zu cpu=%.3fs wall=%.3fs "
              "GB/s(wall)=%.3f GB/s(cpu)=%.3f chunks_with_hits=%zu dfa_oom=%zu\n",
              mode.c_str(), chunk >> 10, static_cast<long long>(max_mem >> 20), npat, size, lines, cpu, wall,
              static_cast<double>(size) / 1e9 / wall, static_cast<double>(size) / 1e9 / cpu, hits, oom);
  return 0;
}
