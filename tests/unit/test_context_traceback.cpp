// The look-back above exception lines (context/traceback.hpp), on real
// traceback shapes: plain, launcher-prefixed and interleaved, chained, cut by
// a chunk boundary, and C++ terminate.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include <denpex/context/traceback.hpp>

using denpex::context::ChainLink;
using denpex::context::TracebackReader;

namespace {

// Feeds `text` to `reader` and asks about the line starting with `last`
// (the exception line), as the scanner would.
std::optional<denpex::context::Traceback> ending_at(TracebackReader& reader, const std::string& text,
                                                    std::string_view last, std::uint64_t line_no) {
  const auto pos = text.find(last);
  REQUIRE(pos != std::string::npos);
  return reader.ending_at(text, pos, line_no);
}

} // namespace

TEST_CASE("traceback: frames, the raising frame and the caller's own code", "[context][traceback]") {
  const std::string text = "Traceback (most recent call last):\n"
                           "  File \"/workspace/train.py\", line 240, in <module>\n"
                           "    batch = next(loader)\n"
                           "            ^^^^^^^^^^^^\n"
                           "  File \"/workspace/data.py\", line 57, in __next__\n"
                           "    shard = np.load(path)\n"
                           "  File \"/usr/local/lib/python3.10/dist-packages/numpy/lib/npyio.py\", line 427, in load\n"
                           "    fid = stack.enter_context(open(os_fspath(file), \"rb\"))\n"
                           "FileNotFoundError: [Errno 2] No such file or directory: '/data/x.npy'\n";
  TracebackReader reader;
  const auto tb = ending_at(reader, text, "FileNotFoundError", 9);
  REQUIRE(tb);
  CHECK(tb->frame_count == 3);
  REQUIRE(tb->raising());
  CHECK(tb->raising()->file == "/usr/local/lib/python3.10/dist-packages/numpy/lib/npyio.py");
  CHECK(tb->raising()->line == 427);
  CHECK(tb->raising()->function == "load");
  REQUIRE(tb->user_frame());
  CHECK(tb->user_frame()->file == "/workspace/data.py");
  CHECK(tb->chain.empty());
}

TEST_CASE("traceback: interleaved ranks keep to the exception's own rank", "[context][traceback]") {
  const std::string text = "[rank1]:Traceback (most recent call last):\n"
                           "[rank0]:Traceback (most recent call last):\n"
                           "[rank1]:  File \"/w/a.py\", line 1, in one\n"
                           "[rank0]:  File \"/w/b.py\", line 2, in two\n"
                           "[rank0]:  File \"/w/c.py\", line 3, in three\n"
                           "[rank1]:ValueError: one\n";
  TracebackReader reader;
  const auto tb = ending_at(reader, text, "[rank1]:ValueError", 6);
  REQUIRE(tb);
  REQUIRE(tb->frames.size() == 1);
  CHECK(tb->frames[0].file == "/w/a.py");
}

TEST_CASE("traceback: a chain carries its earlier exceptions, root first", "[context][traceback]") {
  const std::string text = "Traceback (most recent call last):\n"
                           "  File \"/w/ckpt.py\", line 40, in load\n"
                           "KeyError: 'w'\n"
                           "\n"
                           "During handling of the above exception, another exception occurred:\n"
                           "\n"
                           "Traceback (most recent call last):\n"
                           "  File \"/w/train.py\", line 9, in main\n"
                           "ValueError: bad checkpoint\n"
                           "\n"
                           "The above exception was the direct cause of the following exception:\n"
                           "\n"
                           "Traceback (most recent call last):\n"
                           "  File \"/w/run.py\", line 3, in <module>\n"
                           "RuntimeError: could not resume\n";
  TracebackReader reader;
  REQUIRE(ending_at(reader, text, "KeyError", 3));
  const auto mid = ending_at(reader, text, "ValueError", 9);
  REQUIRE(mid);
  REQUIRE(mid->chain.size() == 1);
  CHECK(mid->chain[0].text == "KeyError: 'w'");
  CHECK(mid->chain[0].line_no == 3);
  CHECK(mid->chain[0].link == ChainLink::during_handling);
  const auto last = ending_at(reader, text, "RuntimeError", 15);
  REQUIRE(last);
  REQUIRE(last->chain.size() == 2);
  CHECK(last->chain[0].text == "KeyError: 'w'");
  CHECK(last->chain[1].text == "ValueError: bad checkpoint");
  CHECK(last->chain[1].link == ChainLink::direct_cause);
}

TEST_CASE("traceback: the header may lie in an earlier chunk", "[context][traceback]") {
  const std::string first = "Traceback (most recent call last):\n  File \"/w/a.py\", line 1, in one\n";
  const std::string second = "  File \"/w/b.py\", line 2, in two\nOSError: disk\n";
  TracebackReader reader;
  reader.end_chunk(first);
  const auto tb = reader.ending_at(second, second.find("OSError"), 4);
  REQUIRE(tb);
  REQUIRE(tb->frames.size() == 2);
  CHECK(tb->frames[0].file == "/w/a.py");
  CHECK(tb->frames[1].file == "/w/b.py");
}

TEST_CASE("traceback: no header above means no traceback, deep ones keep their ends", "[context][traceback]") {
  TracebackReader reader;
  const std::string bare = "some output\nValueError: x\n";
  CHECK_FALSE(reader.ending_at(bare, bare.find("ValueError"), 2));

  std::string deep = "Traceback (most recent call last):\n";
  for (int i = 1; i <= 30; ++i) {
    deep += "  File \"/w/f" + std::to_string(i) + ".py\", line " + std::to_string(i) + ", in f\n";
  }
  deep += "RecursionError: maximum recursion depth exceeded\n";
  const auto tb = reader.ending_at(deep, deep.find("RecursionError"), 32);
  REQUIRE(tb);
  CHECK(tb->frame_count == 30);
  REQUIRE(tb->frames.size() == denpex::context::Traceback::k_head + denpex::context::Traceback::k_tail);
  CHECK(tb->frames.front().file == "/w/f1.py");
  CHECK(tb->frames.back().file == "/w/f30.py");
}

TEST_CASE("traceback: a C++ what() line takes its type from the terminate line above", "[context][traceback]") {
  const std::string text = "[rank1]:terminate called after throwing an instance of 'c10::Error'\n"
                           "[rank0]:other output\n"
                           "[rank1]:  what():  CUDA error\n";
  TracebackReader reader;
  CHECK(reader.thrown_type(text, text.find("[rank1]:  what")) == std::optional<std::string>("c10::Error"));
  const std::string other = "[rank0]:terminate called after throwing an instance of 'std::bad_alloc'\n"
                            "[rank1]:  what():  x\n";
  CHECK_FALSE(reader.thrown_type(other, other.find("[rank1]:  what")));
}

TEST_CASE("traceback: frame lines and library files", "[context][traceback]") {
  const auto f = denpex::context::parse_frame("    File \"/w/a.py\", line 12, in main");
  REQUIRE(f);
  CHECK(f->line == 12);
  CHECK(f->function == "main");
  CHECK_FALSE(denpex::context::parse_frame("File \"/w/a.py\", line x"));
  CHECK(denpex::context::library_file("/usr/lib/python3.10/threading.py"));
  CHECK(denpex::context::library_file("/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py"));
  CHECK_FALSE(denpex::context::library_file("/workspace/train.py"));
}

TEST_CASE("traceback: a Ray task's remote traceback starts at its ray:: line", "[context][traceback]") {
  const std::string text = "ray.exceptions.RayTaskError(ValueError): ray::WorkerDict.actor_init() (pid=2213, ip=10.0.0.5)\n"
                           "  File \"/w/worker.py\", line 31, in actor_init\n"
                           "    raise ValueError(\"bad\")\n"
                           "ValueError: bad\n";
  TracebackReader reader;
  const auto tb = reader.ending_at(text, text.find("ValueError: bad"), 4);
  REQUIRE(tb);
  REQUIRE(tb->raising());
  CHECK(tb->raising()->file == "/w/worker.py");
}

TEST_CASE("traceback: a walk that stops at an earlier headerless exception finds what a fresh walk finds",
          "[context][traceback]") {
  // Exception lines with and without tracebacks above them, one speaker and
  // two interleaved ranks; each asked in order (earlier walks reused) and by
  // a reader that never walked.
  std::string text;
  std::vector<std::size_t> ends;
  for (int i = 0; i < 60; ++i) {
    const std::string who = i % 3 == 0 ? "[rank1]:" : "";
    if (i % 7 == 3) {
      text += who + "Traceback (most recent call last):\n";
      text += who + "  File \"train.py\", line " + std::to_string(i) + ", in <module>\n";
      text += who + "    main()\n";
    }
    if (i % 5 == 1) {
      text += "step " + std::to_string(i) + " loss 1.0\n";
    }
    ends.push_back(text.size());
    text += who + "ValueError: bad value " + std::to_string(i) + "\n";
  }
  TracebackReader walking;
  for (std::size_t k = 0; k < ends.size(); ++k) {
    TracebackReader fresh;
    const auto want = fresh.ending_at(text, ends[k], k + 1);
    const auto got = walking.ending_at(text, ends[k], k + 1);
    INFO("exception " << k);
    REQUIRE(got.has_value() == want.has_value());
    if (want) {
      CHECK(got->frame_count == want->frame_count);
    }
  }
}
