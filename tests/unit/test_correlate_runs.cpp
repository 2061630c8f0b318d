// Pass runs (src/correlate/runs.cpp; issue 32): logs of separate runs read
// together are named as such, and one run's progress never marks another
// run's failure as recovered from.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <denpex/catalog/catalog.hpp>
#include <denpex/correlate/correlate.hpp>
#include <denpex/correlate/describe.hpp>

#include "../../src/correlate/passes.hpp"

using denpex::scan::Hit;
using denpex::scan::SourceRef;
using denpex::correlate::detail::job_of_path;

TEST_CASE("correlate::job_of_path: the scheduler's job id in a path", "[correlate][runs]") {
  struct Case {
    const char* path;
    const char* job;
  };
  const Case cases[] = {
      {"logs/slurm-1832555.out", "1832555"},     // Slurm's default %j
      {"slurm-4711_3.out", "4711"},              // an array job's %A_%a
      {"runs/train.o98765", "98765"},            // PBS/SGE stdout
      {"runs/train.e98765", "98765"},            // ... and stderr
      {"job_4711/rank0.log", "4711"},            // a directory per job
      {"JobID-20431/node-017/dmesg.log", "20431"},
      {"train.log", ""},
      {"node-017/rank3.log", ""},
      {"job_12/rank0.log", ""},                  // too short to be a job id
      {"model.onnx", ""},                        // ".o" followed by no digits
      {"results/eval.out", ""},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.path) { CHECK(job_of_path(c.path) == c.job); }
  }
}

namespace {

using denpex::catalog::Catalog;
using denpex::catalog::CatalogFile;

Catalog catalog_of_one_cause() {
  const nlohmann::json e{
      {"id", "t.cause"},
      {"title", "a cause"},
      {"area", "host"},
      {"role", "cause"},
      {"severity", "error"},
      {"priority", 60},
      {"signals", nlohmann::json::array({nlohmann::json{{"id", "s"}, {"pattern", "x"}}})},
      {"root_cause", "test"},
      {"fix", nlohmann::json{{"summary", "test"}}},
      {"verify", nlohmann::json{{"summary", "test"}}},
      {"references", nlohmann::json::array({nlohmann::json{{"title", "t"}, {"url", "https://example.invalid/"}}})},
      {"examples", nlohmann::json{{"match", nlohmann::json::array({"x"})}, {"no_match", nlohmann::json::array({"y"})}}},
  };
  Catalog cat;
  denpex::Diagnostics diags;
  auto sig = denpex::catalog::parse_signature(CatalogFile{"t/t.cause.json", e.dump(), false}, diags);
  REQUIRE(sig);
  REQUIRE(cat.add(std::move(*sig), diags));
  cat.finalize(diags);
  REQUIRE(diags.size() == 0);
  return cat;
}

Hit stamped(const Catalog& cat, std::uint32_t source, std::uint64_t line, int month, int day) {
  Hit h;
  h.signature = static_cast<std::uint32_t>(*cat.find("t.cause"));
  h.source = source;
  h.line_no = line;
  h.last_line_no = line;
  h.text = "x";
  h.ctx.time.kind = denpex::context::ClockKind::wall;
  h.ctx.time.wall = denpex::context::WallTime{2024, month, day, 10, 0, 0, 0, std::nullopt};
  return h;
}

denpex::scan::ProgressMark progress(std::uint32_t source, std::uint64_t line, int month, int day) {
  denpex::scan::ProgressMark m;
  m.source = source;
  m.line_no = line;
  m.time.kind = denpex::context::ClockKind::wall;
  m.time.wall = denpex::context::WallTime{2024, month, day, 11, 0, 0, 0, std::nullopt};
  m.text = "step 100 loss 2.0";
  return m;
}

} // namespace

TEST_CASE("correlate: files with different job ids are separate runs", "[correlate][runs]") {
  const auto cat = catalog_of_one_cause();
  const auto d = denpex::correlate::correlate({stamped(cat, 0, 5, 6, 11), stamped(cat, 1, 5, 6, 11)},
                                              {SourceRef{"slurm-4711.out", {}}, SourceRef{"slurm-4802.out", {}}}, cat);
  REQUIRE(d.runs.size() == 2);
  CHECK(d.runs[0].job == "4711");
  CHECK(d.runs[1].job == "4802");
  CHECK(denpex::correlate::describe_runs(d).find("2 separate runs") != std::string::npos);
}

TEST_CASE("correlate: files of one run, or of one job, are not separate runs", "[correlate][runs]") {
  const auto cat = catalog_of_one_cause();
  // Overlapping stamps, no job ids: one run.
  auto d = denpex::correlate::correlate({stamped(cat, 0, 5, 6, 11), stamped(cat, 1, 5, 6, 11)},
                                        {SourceRef{"rank0.log", {}}, SourceRef{"rank1.log", {}}}, cat);
  CHECK(d.runs.empty());
  CHECK(denpex::correlate::describe_runs(d).empty());
  // One job id and a file with no id inside its span: one run.
  d = denpex::correlate::correlate({stamped(cat, 0, 5, 6, 11), stamped(cat, 1, 5, 6, 11)},
                                   {SourceRef{"slurm-4711.out", {}}, SourceRef{"dmesg.log", {}}}, cat);
  CHECK(d.runs.empty());
}

TEST_CASE("correlate: stamps months apart are separate runs, the later run's progress recovers nothing of the earlier",
          "[correlate][runs]") {
  const auto cat = catalog_of_one_cause();
  const std::vector<Hit> hits{stamped(cat, 0, 5, 6, 11), stamped(cat, 1, 5, 11, 29)};
  const std::vector<SourceRef> sources{SourceRef{"a/train.log", {}}, SourceRef{"b/train.log", {}}};
  // Run b trained on after its own failure... and long after run a's.
  const auto d = denpex::correlate::correlate(hits, sources, cat, {}, {progress(1, 9, 11, 29)});
  REQUIRE(d.runs.size() == 2);
  CHECK(d.runs[0].job.empty());
  REQUIRE(d.runs[0].sources == std::vector<std::uint32_t>{0});
  for (const auto& inc : d.incidents) {
    if (inc.first.source == 0) {
      CHECK_FALSE(inc.recovered); // b's progress is not a's
    }
  }
}
