// Pass: runs. Logs of separate runs read together (issue 32): a directory
// that holds unrelated jobs is diagnosed as one, and the report must say so,
// or a reader takes an old job's failure for part of this one's story.
//
// Two things tell runs apart, in this order:
//   - the scheduler's job id in a file's path: Slurm's default
//     `slurm-%j.out` (and `slurm-%A_%a.out`), PBS/SGE's `name.o%j`/`.e%j`,
//     a `job_%j` / `job-%j` / `jobid%j` component. Two files with different
//     ids are different runs, whatever their stamps say.
//   - wall-clock spans: a file's span is its lines' stamps (matched lines and
//     progress marks, the only lines whose time is read). Files whose spans
//     are a day or more apart are different runs; a long pre-training run
//     spans days too, but its files overlap.
// A file with neither (no id, no stamp) belongs to no run and is not
// counted. With one run or none, Diagnosis::runs stays empty.
#include "passes.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace denpex::correlate::detail {

namespace {

constexpr std::int64_t k_run_gap_us = 24LL * 3600 * 1'000'000;

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The digits at the start of `s` (at least `min` of them), or "".
std::string leading_digits(std::string_view s, std::size_t min) {
  std::size_t n = 0;
  while (n < s.size() && is_digit(s[n])) {
    ++n;
  }
  return n >= min ? std::string(s.substr(0, n)) : std::string();
}

bool starts_with_icase(std::string_view s, std::string_view prefix) {
  // `prefix` is lower case.
  return s.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), s.begin(), [](char p, char c) {
           return std::tolower(static_cast<unsigned char>(c)) == p;
         });
}

// The job id one path component names, or "".
std::string job_in_component(std::string_view c) {
  if (starts_with_icase(c, "slurm-")) {
    return leading_digits(c.substr(6), 1);
  }
  for (std::string_view word : {"jobid", "job_id", "job"}) {
    if (starts_with_icase(c, word)) {
      auto rest = c.substr(word.size());
      if (!rest.empty() && (rest.front() == '_' || rest.front() == '-' || rest.front() == '.')) {
        rest.remove_prefix(1);
      }
      if (auto id = leading_digits(rest, 3); !id.empty()) {
        return id;
      }
    }
  }
  // PBS/SGE: "train.o4711", "train.e4711" (the whole rest is the id).
  const auto dot = c.rfind('.');
  if (dot != std::string_view::npos && dot + 2 < c.size() && (c[dot + 1] == 'o' || c[dot + 1] == 'e')) {
    const auto rest = c.substr(dot + 2);
    if (const auto id = leading_digits(rest, 3); id.size() == rest.size()) {
      return id;
    }
  }
  return {};
}

} // namespace

std::string job_of_path(std::string_view path) {
  // The innermost component that names one: a file's own name first, then
  // its directories (job_4711/rank0.log).
  while (!path.empty()) {
    const auto slash = path.find_last_of('/');
    const auto c = slash == std::string_view::npos ? path : path.substr(slash + 1);
    if (auto id = job_in_component(c); !id.empty()) {
      return id;
    }
    if (slash == std::string_view::npos) {
      break;
    }
    path = path.substr(0, slash);
  }
  return {};
}

void pass_runs(State& s) {
  const auto n = s.d.sources.size();
  std::vector<Run> per_source(n);
  auto widen = [](Run& r, const Time& t) {
    if (!t || t->domain != 0) {
      return;
    }
    r.start_us = r.start_us ? std::min(*r.start_us, t->t) : t->t;
    r.end_us = r.end_us ? std::max(*r.end_us, t->t) : t->t;
  };
  for (const auto& r : s.records) {
    if (r.hit->source < n) {
      widen(per_source[r.hit->source], r.stamp);
    }
  }
  for (const auto& m : s.progress) {
    if (m.source < n) {
      widen(per_source[m.source], stamp_of_mark(m, s.ref_year));
    }
  }
  // A findings file's sources are named by the node that read them; their
  // paths still carry the job id where the logs' names did.
  std::map<std::string, Run> by_job;
  std::vector<Run> unnamed;
  for (std::uint32_t i = 0; i < n; ++i) {
    auto& r = per_source[i];
    r.sources.push_back(i);
    r.job = job_of_path(s.d.sources[i].name);
    if (!r.job.empty()) {
      auto& run = by_job[r.job];
      run.job = r.job;
      run.sources.push_back(i);
      widen(run, r.start_us ? Time(Stamp{*r.start_us, 0}) : Time());
      widen(run, r.end_us ? Time(Stamp{*r.end_us, 0}) : Time());
    } else if (r.start_us) {
      unnamed.push_back(r);
    }
  }
  std::vector<Run> runs;
  for (auto& [job, run] : by_job) {
    runs.push_back(std::move(run));
  }
  // A file with no job id joins the run whose span it overlaps (or comes
  // within a day of); the rest merge among themselves by time.
  std::stable_sort(unnamed.begin(), unnamed.end(), [](const Run& a, const Run& b) { return *a.start_us < *b.start_us; });
  auto near = [](const Run& a, const Run& b) {
    return a.start_us && b.start_us && *a.start_us <= *b.end_us + k_run_gap_us && *b.start_us <= *a.end_us + k_run_gap_us;
  };
  for (auto& u : unnamed) {
    auto into = std::find_if(runs.begin(), runs.end(), [&](const Run& r) { return near(r, u); });
    if (into == runs.end()) {
      runs.push_back(std::move(u));
      continue;
    }
    into->sources.push_back(u.sources.front());
    into->start_us = into->start_us ? std::min(*into->start_us, *u.start_us) : u.start_us;
    into->end_us = into->end_us ? std::max(*into->end_us, *u.end_us) : u.end_us;
  }
  if (runs.size() < 2) {
    return;
  }
  for (auto& r : runs) {
    std::sort(r.sources.begin(), r.sources.end());
  }
  // By time where both have one, else by their first file.
  std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
    if (a.start_us && b.start_us && *a.start_us != *b.start_us) {
      return *a.start_us < *b.start_us;
    }
    return a.sources.front() < b.sources.front();
  });
  s.run_of_source.assign(n, -1);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const auto src : runs[i].sources) {
      s.run_of_source[src] = static_cast<int>(i);
    }
  }
  s.d.runs = std::move(runs);
}

} // namespace denpex::correlate::detail
