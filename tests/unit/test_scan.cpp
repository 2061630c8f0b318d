// scan::run end to end on one big source: the result must not depend on -j
// (one file on several cores is matched in double-buffered batches).
#include <catch2/catch.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/matcher/matcher.hpp>
#include <denpex/matcher/prefilter.hpp>
#include <denpex/scan/scan.hpp>
#include <denpex/source/input.hpp>
#include <denpex/util/diagnostics.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace denpex;

namespace {

// `text` as one source, train.log, on one core.
scan::ScanResult scan_one(const catalog::Catalog& cat, const matcher::Matcher& m, const std::string& text) {
  auto opener = source::make_memory_opener({{"train.log", text}});
  scan::ScanOptions so;
  so.jobs = 1;
  so.catalog = &cat;
  Diagnostics d;
  return scan::run(*opener, {"train.log"}, m, so, d);
}

// How many hits of entry `id` a scan of `text` keeps.
std::size_t hits_of(const catalog::Catalog& cat, const matcher::Matcher& m, const std::string& text,
                    const std::string& id) {
  const auto r = scan_one(cat, m, text);
  std::size_t n = 0;
  for (const auto& h : r.hits) {
    n += cat.at(h.signature).id == id ? 1 : 0;
  }
  return n;
}

} // namespace

TEST_CASE("scan::run: one big file gives the same hits, samples and totals at -j1 and -j3", "[scan]") {
  Diagnostics diags;
  const auto cat = catalog::load_catalog({}, diags);
  matcher::MatcherOptions mo;
  mo.prebuilt_prefilter = matcher::builtin_prefilter_blob();
  mo.extra_patterns = scan::error_line_patterns();
  auto m = matcher::Matcher::compile(cat, mo);
  REQUIRE(m);

  // The bundled 8-rank sample, 40 times over: many 4 KiB chunks, hits spread
  // through batches, the failure cascade at the end of each copy.
  std::ifstream in(DENPEX_SOURCE_DIR "/testdata/sample/train.log", std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text;
  for (int i = 0; i < 40; ++i) {
    text += ss.str();
  }
  REQUIRE(text.size() > 40 * 4096);

  auto run = [&](unsigned jobs) {
    auto opener = source::make_memory_opener({{"train.log", text}});
    scan::ScanOptions so;
    so.jobs = jobs;
    so.reader.buffer_size = 4096;
    Diagnostics d;
    auto r = scan::run(*opener, {"train.log"}, *m, so, d);
    CHECK(d.size() == 0);
    return r;
  };
  const auto one = run(1);
  const auto three = run(3);
  REQUIRE(one.hits.size() > 10);
  REQUIRE(three.hits.size() == one.hits.size());
  for (std::size_t k = 0; k < one.hits.size(); ++k) {
    const auto& a = one.hits[k];
    const auto& b = three.hits[k];
    CHECK(std::tie(a.signature, a.signal, a.line_no, a.count, a.last_line_no) ==
          std::tie(b.signature, b.signal, b.line_no, b.count, b.last_line_no));
  }
  REQUIRE(three.error_lines.size() == one.error_lines.size());
  for (std::size_t k = 0; k < one.error_lines.size(); ++k) {
    CHECK(three.error_lines[k].line_no == one.error_lines[k].line_no);
  }
  CHECK(three.totals.lines == one.totals.lines);
  CHECK(three.totals.bytes == text.size());
  CHECK(three.progress.size() == one.progress.size());
}

TEST_CASE("scan::run: training progress is recognised in each trainer's own form, never on a NaN loss", "[scan]") {
  Diagnostics diags;
  const auto cat = catalog::load_catalog({}, diags);
  auto m = matcher::Matcher::compile(cat, {});
  REQUIRE(m);
  auto last_progress = [&](const std::string& text) -> std::uint64_t {
    auto opener = source::make_memory_opener({{"train.log", text}});
    scan::ScanOptions so;
    so.jobs = 1;
    Diagnostics d;
    auto r = scan::run(*opener, {"train.log"}, *m, so, d);
    return r.progress.empty() ? 0 : r.progress.front().line_no;
  };
  // The forms the trainers print (their format strings), on line 2 after a header.
  for (const std::string line : {
           "iter 16 step 1: loss 2.0308, iter time: 1489.61ms (optimizer.step)", // lit-gpt
           " iteration     1200/  500000 | consumed samples:       1228800 | lm loss: 3.2E+00 |", // Megatron
           " 22%|##2       | 11/50 [1:55:26<6:49:05, 629.37s/it]",                                 // tqdm
           "{'loss': 1.6747, 'grad_norm': 0.91, 'learning_rate': 0.0001956, 'epoch': 0.1}",       // HF Trainer
           "Thu Mar 11 01:54:58 2021[1]<stdout>:Step #50\tLoss: 0.207741", // Horovod's elastic examples via horovodrun
       }) {
    INFO(line);
    CHECK(last_progress("starting\n" + line + "\n") == 2);
  }
  for (const std::string line : {
           "{'loss': nan, 'grad_norm': nan, 'learning_rate': 2.0e-05, 'epoch': 0.27}",
           "iter 16 step 1: loss nan, iter time: 1405.01ms",
           "{'train_runtime': 1234.5, 'train_samples_per_second': 10.1, 'epoch': 1.0}",
       }) {
    INFO(line);
    CHECK(last_progress("starting\n" + line + "\n") == 0);
  }
}

TEST_CASE("scan::run: distinct messages of one entry are kept up to a bound, the rest counted", "[scan]") {
  // A generic entry keeps evidence per distinct message; a log with endless
  // distinct messages (a warning naming another file each step) must not
  // keep them all.
  Diagnostics diags;
  const auto cat = catalog::load_catalog({}, diags);
  auto m = matcher::Matcher::compile(cat, {});
  REQUIRE(m);
  std::string text;
  const int n = 3000;
  for (int i = 0; i < n; ++i) {
    std::string word;
    for (int x = i + 1; x > 0; x /= 26) {
      word += static_cast<char>('a' + x % 26); // distinct letters: numbers would be masked alike
    }
    text += "[rank0]: ValueError: unknown option " + word + " in config\n";
  }
  const auto r = scan_one(cat, *m, text);
  std::uint64_t counted = 0;
  for (const auto& h : r.hits) {
    counted += h.count;
  }
  CHECK(r.totals.matches == static_cast<std::uint64_t>(n));
  CHECK(counted == static_cast<std::uint64_t>(n)); // every line counted once
  CHECK(r.hits.size() <= 256 + scan::ScanOptions{}.keep_per_key);   // 256 messages, then one shared slot
  CHECK(r.hits.size() >= 256);
}

// torch._dynamo logs the compile it fell back from as a WARNING traceback
// (real lines from an LSF job that then reported "Successfully completed.":
// MrCogito/Deep_learning_2023 outputs/WorkingSetup/Markdown/WorkingSetup_2.md):
// the exception was caught, so no python.exception evidence. The same
// exception printed bare still is.
TEST_CASE("scan::run: an exception logged at WARNING level is not evidence", "[scan]") {
  Diagnostics diags;
  const auto cat = catalog::load_catalog({}, diags);
  auto m = matcher::Matcher::compile(cat, {});
  REQUIRE(m);
  const std::string logged =
      "[2023-12-01 06:22:31,450] torch._dynamo.convert_frame: [WARNING] torch._dynamo.exc.BackendCompilerFailed: "
      "backend='inductor' raised:\n"
      "[2023-12-01 06:22:31,450] torch._dynamo.convert_frame: [WARNING] FileNotFoundError: [Errno 2] No such file "
      "or directory: 'ldconfig'\n";
  const std::string bare = "FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'\n";
  auto exceptions = [&](const std::string& text) { return hits_of(cat, *m, text, "python.exception"); };
  CHECK(exceptions(logged) == 0);
  CHECK(exceptions(bare) == 1);
}

TEST_CASE("scan::run: an exception Python printed and went on from is not evidence", "[scan]") {
  Diagnostics diags;
  const auto cat = catalog::load_catalog({}, diags);
  auto m = matcher::Matcher::compile(cat, {});
  REQUIRE(m);
  auto exceptions = [&](const std::string& text) { return hits_of(cat, *m, text, "python.exception"); };
  const std::string frames = "Traceback (most recent call last):\n"
                             "  File \"/opt/conda/lib/python3.7/site-packages/wandb/lib/redirect.py\", line 161, in "
                             "_redirect\n"
                             "    fp.close()\n"
                             "AttributeError: 'TeeHandler' object has no attribute 'close'\n";
  // wandb-allennlp#10: an atexit handler's exception after a finished run (before Python 3.12).
  CHECK(exceptions("Error in atexit._run_exitfuncs:\n" + frames) == 0);
  // Python 3.12 and later, and an exception raised in __del__.
  CHECK(exceptions("Exception ignored in atexit callback: <function _atexit_cleanup at 0x7f>\n" + frames) == 0);
  CHECK(exceptions("Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f>\n" + frames) == 0);
  // Without a traceback: the exception right under the note.
  CHECK(exceptions("Exception ignored in atexit callback: <nanobind.nb_func object at 0x2ac5e7999360>\n"
                   "RuntimeError: cudaMemAdvise(data_, small_pool_size, cudaMemAdviseSetReadMostly, 0) failed: "
                   "invalid argument\n") == 0);
  // The same traceback raised for real counts, and so does one under an unrelated line.
  CHECK(exceptions(frames) == 1);
  CHECK(exceptions("Epoch 3: 100%|##########| 50/50\n" + frames) == 1);
}

TEST_CASE("scan::run: a file that several runs appended to marks where each began again", "[scan]") {
  Diagnostics diags;
  const auto cat = catalog::load_catalog({}, diags);
  auto m = matcher::Matcher::compile(cat, {});
  REQUIRE(m);
  auto relaunch_lines = [&](const std::string& text) {
    const auto r = scan_one(cat, *m, text);
    std::vector<std::uint64_t> lines;
    for (const auto& p : r.progress) {
      if (p.relaunch) {
        lines.push_back(p.line_no);
      }
    }
    return lines;
  };
  // Environment-module lines an LSF job prints first (a real appended .err file).
  const std::string preamble = "Loaded module: python3/3.7.5\n"
                               "Loaded dependency [cudnn/v7.6.5.32-prod-cuda-10.0]: cuda/10.0\n"
                               "Loaded module: cudnn/v7.6.5.32-prod-cuda-10.0\n";
  const std::string crash = "Traceback (most recent call last):\n"
                            "  File \"train.py\", line 137, in train\n"
                            "ValueError: too many values to unpack (expected 2)\n";
  CHECK(relaunch_lines(preamble + crash + preamble + crash) == std::vector<std::uint64_t>{7});
  CHECK(relaunch_lines(preamble + crash + preamble + crash + preamble) == std::vector<std::uint64_t>{7, 13});
  // Not a run: the block repeated inside a line, part of it, or stamped lines.
  CHECK(relaunch_lines(preamble + crash + "echo " + preamble).empty());
  CHECK(relaunch_lines(preamble + crash + "Loaded module: python3/3.7.5\n").empty());
  CHECK(relaunch_lines(crash + crash).empty()); // a file of crashes begins with a traceback
  const std::string stamped = "2024-05-03 22:51:04 INFO starting the run now\n"
                              "2024-05-03 22:51:04 INFO loading the model now\n"
                              "2024-05-03 22:51:04 INFO loading the data now\n";
  CHECK(relaunch_lines(stamped + crash + stamped + crash).empty());
}
