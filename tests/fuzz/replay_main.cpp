// A main() for the fuzz targets in builds without libFuzzer (GCC, or clang
// without DENPEX_FUZZ): runs LLVMFuzzerTestOneInput once on each file named
// on the command line, so the seed corpus and tests/fuzz/regressions/ are
// replayed by CTest (under ASan/UBSan in build/asan).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE...\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot open\n", argv[i]);
      return 2;
    }
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Named first, so the input that crashes is the last one printed.
    std::printf("%s\n", argv[i]);
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  }
  std::printf("replayed %d inputs\n", argc - 1);
  return 0;
}
