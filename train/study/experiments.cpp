// experiments.cpp — the flags of `poslab experiments`, and its steps: prepare the corpora,
// make the runs, gather them, write the report. See experiments.h.
#include "train/study/experiments.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>

#include <unistd.h>

#include "data/atomic_file.h"
#include "tensor/device.h"
#include "train/args.h"
#include "train/commands.h"
#include "train/progress.h"
#include "train/study/collect.h"
#include "train/study/report.h"
#include "train/study/runner.h"
#include "train/study/schedule.h"

namespace poslab {
namespace fs = std::filesystem;

namespace {

std::vector<FlagSpec> experiment_flags() {
  return {
      {"out", "DIR  results folder (default results, results-quick, results-tiny)"},
      {"quick", "the same pipeline, small: a few minutes", true},
      {"tiny", "the same pipeline at toy size: seconds (to test the pipeline)", true},
      {"steps", "N  training steps of each main run (default: 480 full, 20 quick)"},
      {"seeds", "N  seeds per scheme in the main table (default 2)"},
      {"force", "redo every run and evaluation", true},
      {"device", "cpu|cuda (default cpu)"},
      {"jobs",
       "N  runs made at once, each in its own process with cores/N threads (default: measured, "
       "1 or one per core; 1 with --device cuda)"},
      {"plan", "print each pending run as a standalone command (for GNU parallel, Slurm)", true},
      {"job", "NAME  make one run of the study (a line of --plan)"},
      {"report", "only gather the finished runs and write the report", true}};
}

StudyConfig config_from_flags(const Args& a) {
  if (a.boolean("quick", false) && a.boolean("tiny", false)) fail("--quick and --tiny: choose one");
  StudyConfig c = study_config(a.boolean("tiny", false)    ? StudySize::tiny
                               : a.boolean("quick", false) ? StudySize::quick
                                                           : StudySize::full);
  c.device = device_option(a);
  c.force = a.boolean("force", false);
  c.out = a.str("out", c.out);
  c.steps = a.integer("steps", c.steps, 1, 10000000);
  int64_t nseeds = a.integer("seeds", 2, 1, 16);
  c.seeds.clear();
  for (int64_t i = 1; i <= nseeds; ++i) c.seeds.push_back(static_cast<uint64_t>(i));
  return c;
}

void make_output_dirs(const StudyConfig& c) {
  std::error_code ec;
  fs::create_directories(c.out + "/runs", ec);
  fs::create_directories(c.out + "/curves", ec);
  if (ec) fail("--out ", c.out, ": cannot create it: ", ec.message());
  const std::string probe = c.out + "/.write_test." + std::to_string(getpid());
  write_file_atomic(probe, "ok");
  fs::remove(probe, ec);
}

void write_study_report(const StudyConfig& c, double seconds) {
  ReportInfo info;
  const bool tiny = c.size == StudySize::tiny;
  info.title = tiny ? "poslab study (tiny)" : c.quick ? "poslab study (quick)" : "poslab study";
  info.command = tiny      ? "poslab experiments --tiny"
                 : c.quick ? "make experiments-quick"
                           : "make experiments";
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  info.date = date;
  info.machine = std::to_string(std::thread::hardware_concurrency()) + " CPU threads";
  if (c.device == Device::cuda) info.machine += ", " + cuda_device_name();
  info.quick = c.quick;
  info.total_seconds = seconds;
  write_report(c.out, info);
}

// Makes the pending runs: in this process (--jobs 1) or as child processes. Without --jobs on
// the CPU, measures which makes more tokens per second on this machine now: one run on every
// core, or one run per core on one thread each (a few seconds; see measure_jobs). On a GPU,
// one run at a time.
void make_runs(const StudyConfig& c, const StudyPlan& p, int64_t jobs_flag) {
  std::vector<const RunSpec*> runs = pending_runs(c, p);
  std::fprintf(stderr, "%zu of %zu runs to make\n", runs.size(), p.runs.size());
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int jobs = static_cast<int>(jobs_flag);
  if (jobs == 0)
    jobs =
        c.device == Device::cuda || runs.size() <= 1 ? 1 : measure_jobs(c, p.runs.front(), cores);
  jobs = std::min<int>(jobs, static_cast<int>(runs.size()));
  if (jobs <= 1) return run_in_process(c, p, runs);
  run_as_jobs(c, runs, jobs, std::max(1, cores / jobs));
}

}  // namespace

int cmd_experiments(int argc, char** argv) {
  Args a("experiments", experiment_flags(), argc, argv);
  if (a.help()) return std::puts(a.usage().c_str()), 0;
  auto t0 = std::chrono::steady_clock::now();
  const StudyConfig c = config_from_flags(a);
  const StudyPlan p = study_plan(c);
  const int64_t jobs = a.integer("jobs", 0, 1, 1024);  // 0: the default of make_runs
  make_output_dirs(c);
  if (a.has("job")) {
    StudyConfig keep = c;  // a job prepares only missing corpora: --force redoes the run, and
    keep.force = false;    // other jobs may be reading the corpora right now
    prepare_study_data(keep, p);
    make_run(c, p, p.run(a.str("job", "")));
    return 0;
  }
  if (!a.boolean("report", false)) prepare_study_data(c, p);
  if (a.boolean("plan", false)) {
    for (const RunSpec* r : pending_runs(c, p))
      std::printf("%s\n", job_command_line(c, *r).c_str());
    return 0;
  }
  if (!a.boolean("report", false)) make_runs(c, p, jobs);
  std::fprintf(stderr, "gathering the results, writing the report\n");
  collect_results(c, p);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_study_report(c, secs);
  std::fprintf(stderr, "done in %s: %s/REPORT.md\n", format_duration(secs).c_str(), c.out.c_str());
  return 0;
}

}  // namespace poslab
