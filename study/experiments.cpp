// experiments.cpp — the flags of `poslab experiments`, and its steps: prepare the corpora,
// make the runs, gather them, write the report. See experiments.h.
#include "study/experiments.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <unistd.h>

#include "data/atomic_file.h"
#include "study/archive.h"
#include "study/collect.h"
#include "study/eta.h"
#include "study/report.h"
#include "study/runner.h"
#include "study/schedule.h"
#include "study/tables.h"
#include "study/timing.h"
#include "study/tune.h"
#include "tensor/device.h"
#include "train/args.h"
#include "train/commands.h"
#include "train/progress.h"

namespace poslab {
namespace fs = std::filesystem;

namespace {

std::vector<FlagSpec> experiment_flags() {
  return {
      {"out", "DIR  results folder (default results, or results-<scale>)"},
      {"scale", "full|quick|tiny|large  how big a study (default full; docs/cli.md)"},
      {"quick", "the same pipeline, small: 1-3 minutes (= --scale quick)", true},
      {"tiny", "the same pipeline at toy size: seconds, to test it (= --scale tiny)", true},
      {"steps",
       "N  training steps B of each main run; branches and ablations take B/4 or B/2 (default: "
       "of the scale)"},
      {"seeds", "N  seeds per scheme of the main runs (default: 3 full, 5 large, 2 quick)"},
      {"force", "redo every run and evaluation", true},
      {"gpus",
       "G  with --jobs N: pin the runs made at once to GPUs 0..G-1 (CUDA_VISIBLE_DEVICES), run k "
       "on GPU k % G (default 0: not pinned)"},
      {"time-limit",
       "MIN  make only the runs whose expected time fits MIN minutes since the start, in the "
       "plan's order; the next invocation continues (default 0: no limit)"},
      {"device", "cpu|cuda (default cpu)"},
      {"jobs",
       "N  runs made at once, each in its own process with cores/N threads (default: measured, "
       "1 or one per core; 1 with --device cuda)"},
      {"plan", "print each pending run as a standalone command (for GNU parallel, Slurm)", true},
      {"job", "NAME  make one run of the study (a line of --plan)"},
      {"report", "only gather the finished runs and write the report", true},
      {"tune",
       "only the learning-rate x batch-size tuning: short runs -> tuning.csv (the full and large "
       "studies make it first)",
       true}};
}

StudySize size_from_flags(const Args& a) {
  const bool quick = a.boolean("quick", false), tiny = a.boolean("tiny", false);
  if (quick + tiny + a.has("scale") > 1) fail("--quick, --tiny and --scale: choose one");
  if (quick) return StudySize::quick;
  if (tiny) return StudySize::tiny;
  return parse_study_size(a.choice("scale", "full", {"full", "quick", "tiny", "large"}));
}

StudyConfig config_from_flags(const Args& a) {
  StudyConfig c = study_config(size_from_flags(a));
  c.device = device_option(a);
  if (c.device == Device::cuda) c.assumed_tokens_per_s = 100000;
  c.force = a.boolean("force", false);
  c.out = a.str("out", c.out);
  c.steps = a.integer("steps", c.steps, 1, 10000000);
  c.main_seeds = a.integer("seeds", c.main_seeds, 1, 16);
  c.time_limit_min = a.number("time-limit", c.time_limit_min, 0, 1e6);
  c.gpus = a.integer("gpus", 0, 1, 4096);
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
  const std::string size = study_size_name(c.size);
  info.title = c.size == StudySize::full ? "poslab study" : "poslab study (" + size + ")";
  info.command = c.size == StudySize::full    ? "make experiments"
                 : c.size == StudySize::quick ? "make experiments-quick"
                 : c.size == StudySize::large ? "make experiments SCALE=large"
                                              : "poslab experiments --tiny";
  if (c.device == Device::cuda)
    info.command += c.size == StudySize::tiny ? " --device cuda" : " DEVICE=cuda";
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  info.date = date;
  info.machine = std::to_string(std::thread::hardware_concurrency()) + " CPU threads";
  if (const std::string cpu = machine_description(); !cpu.empty()) info.machine += ", " + cpu;
  if (c.device == Device::cuda) info.machine += ", " + cuda_device_name();
  info.quick = c.quick;
  info.total_seconds = seconds;
  write_report(c.out, info);
}

// The first pending runs whose expected time (planned tokens over the throughput) fits the
// seconds left; the rest are left out, and named.
std::vector<const RunSpec*> fitting_runs(const StudyConfig& c, const StudyPlan& p,
                                         const std::vector<const RunSpec*>& runs,
                                         double tokens_per_s, double seconds_left) {
  std::vector<const RunSpec*> kept;
  double need = 0;
  for (const RunSpec* r : runs) {
    need += job_tokens(c, p, *r) / tokens_per_s;
    if (need > seconds_left) break;
    kept.push_back(r);
  }
  if (kept.size() < runs.size())
    std::fprintf(stderr,
                 "--time-limit %g min: %zu of %zu pending runs fit (%s left); left for a later "
                 "invocation, which reuses what is done: %s ... %s\n",
                 c.time_limit_min, kept.size(), runs.size(), format_duration(seconds_left).c_str(),
                 runs[kept.size()]->name.c_str(), runs.back()->name.c_str());
  return kept;
}

// How this invocation makes runs: how many at once, and the throughput it measured (0: none),
// decided by the first round that has runs to make.
struct Jobs {
  int jobs = 0;  // 0: not decided yet
  double measured = 0;
};

// Without --jobs on the CPU, measures which makes more tokens per second on this machine now:
// one run on every core, or one run per core on one thread each (a few seconds; see
// measure_jobs). On a GPU, one run at a time.
void decide_jobs(const StudyConfig& c, const StudyPlan& p, const std::vector<const RunSpec*>& runs,
                 int64_t jobs_flag, int cores, Jobs& how) {
  int jobs = static_cast<int>(jobs_flag);
  double measured = 0;
  if (jobs == 0 && c.gpus > 0) jobs = static_cast<int>(c.gpus);  // one run per GPU
  if (jobs == 0 && (c.device == Device::cuda || runs.size() <= 1)) jobs = 1;
  if (jobs == 0) {
    double load = NAN;
    if (std::ifstream in("/proc/loadavg"); in) in >> load;
    const JobChoice choice = measure_jobs(c, p.runs.front(), cores);
    jobs = choice.jobs, measured = choice.tokens_per_s;
    // kept beside the results: the report sets the study's own throughput against these
    const std::string path = c.out + "/throughput.csv";
    std::vector<ThroughputRow> rows;
    if (fs::exists(path)) rows = read_rows<ThroughputRow>(path);
    std::string machine = machine_description();
    std::replace(machine.begin(), machine.end(), ',', ';');
    rows.push_back(
        {study_invocation(), machine, cores, jobs, choice.one_run, choice.runs_at_once, load});
    write_rows(path, rows);
  }
  how.jobs = jobs, how.measured = measured;
}

// One round: makes the pending runs of p that fit the time limit, in this process (--jobs 1)
// or as child processes; prints the expected time first (eta.h). Returns false when the time
// limit left some for a later invocation.
bool make_runs(const StudyConfig& c, const StudyPlan& p, std::vector<const RunSpec*> runs,
               int64_t jobs_flag, Jobs& how, double elapsed) {
  std::fprintf(stderr, "%zu of %zu runs to make\n", runs.size(), p.runs.size());
  // Nothing to train: no expected time (the earlier runs' speed says nothing of how many ran
  // at once, so a figure for "all runs" would be a guess).
  if (runs.empty()) return true;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (how.jobs == 0) decide_jobs(c, p, runs, jobs_flag, cores, how);
  const Throughput speed = study_throughput(c, p, how.measured, how.jobs);
  std::fputs(eta_text(c, p, runs, speed).c_str(), stderr);
  const size_t pending = runs.size();
  if (c.time_limit_min > 0)
    runs = fitting_runs(c, p, runs, speed.tokens_per_s, c.time_limit_min * 60 - elapsed);
  if (runs.empty()) return false;
  const int jobs = std::min<int>(how.jobs, static_cast<int>(runs.size()));
  if (jobs <= 1)
    run_in_process(c, p, runs);
  else
    run_as_jobs(c, runs, jobs, std::max(1, cores / jobs));
  return runs.size() == pending;
}

// The plan as the results in c.out stand, the archived runs brought back: the tuning's runs
// first, whose choices the rest of the plan trains at (tune.h), then the whole plan. With
// `prepare`, the corpora it trains on are prepared (again with --force); `prepare` is the
// config that says whether.
StudyPlan current_plan(StudyConfig& c, const StudyConfig* prepare) {
  StudyPlan tuning;
  if (c.tune_first) tuning_runs(c, tuning);
  if (prepare && !tuning.runs.empty()) prepare_study_data(*prepare, tuning);
  import_archived_runs(c, tuning);
  choose_learning_rates(c);
  StudyPlan p = study_plan(c);
  import_archived_runs(c, p);
  if (prepare) prepare_study_data(*prepare, p);
  return p;
}

// Runs that still wait when a round has nothing to make wait on results no run of the plan
// makes (a bug of the plan): named, so the study does not end silently short.
void say_waiting(const StudyConfig& c, const StudyPlan& p) {
  std::string names;
  for (const RunSpec& r : p.runs)
    if (!r.waits.empty() && !run_done(c, p, r))
      names += (names.empty() ? "" : ", ") + r.name + " (" + r.waits + ")";
  if (!names.empty())
    std::fprintf(stderr, "these runs wait on results no run makes: %s\n", names.c_str());
}

// Makes the study round after round, since a round's results decide what the next makes (the
// tuning the main runs' learning rates, the screening the promotions), each run once, until
// none is left or the time limit binds.
void make_study(StudyConfig& c, int64_t jobs_flag, std::chrono::steady_clock::time_point t0) {
  Jobs how;
  std::set<std::string> made;
  StudyConfig prepare = c;
  for (;;) {
    const StudyPlan p = current_plan(c, &prepare);
    prepare.force = false;  // the corpora once
    // the pending runs before the first that waits: the plan's order holds (the main runs
    // wait for the tuning, and what comes after them in the plan is not made before them);
    // none there, every pending run (what a waiting run waits for may come after it)
    const auto waiting = std::find_if(p.runs.begin(), p.runs.end(),
                                      [](const RunSpec& r) { return !r.waits.empty(); });
    const RunSpec* stop = p.runs.data() + (waiting - p.runs.begin());
    std::vector<const RunSpec*> before, all;
    for (const RunSpec* r : pending_runs(c, p))
      if (!made.count(r->name)) (r < stop ? before : all).push_back(r);
    std::vector<const RunSpec*> runs = before.empty() ? all : before;
    for (const RunSpec* r : runs) made.insert(r->name);
    if (runs.empty()) return say_waiting(c, p);
    if (!make_runs(c, p, runs, jobs_flag, how, seconds_since(t0))) return;
  }
}

}  // namespace

int cmd_experiments(int argc, char** argv) {
  Args a("experiments", experiment_flags(), argc, argv);
  if (a.help()) return std::puts(a.usage().c_str()), 0;
  auto t0 = std::chrono::steady_clock::now();
  study_invocation();  // set once here: the jobs of this invocation share it
  StudyConfig c = config_from_flags(a);
  const int64_t jobs = a.integer("jobs", 0, 1, 1024);  // 0: the default of make_runs
  make_output_dirs(c);
  if (a.boolean("tune", false)) return tune_study(c), 0;
  // The plan starts with the tuning (tune.h): each scheme's learning rate, shown in the report;
  // --plan, --job and --report read the tuning made so far (the archive's too).
  StudyConfig keep = c;  // a job prepares only missing corpora: --force redoes the run, and
  keep.force = false;    // other jobs may be reading the corpora right now
  if (a.has("job")) {
    const StudyPlan p = current_plan(c, &keep);
    make_job(c, p, p.run(a.str("job", "")));
    return 0;
  }
  if (a.boolean("plan", false)) {
    const StudyPlan p = current_plan(c, &c);
    const std::vector<const RunSpec*> pending = pending_runs(c, p);
    for (const RunSpec* r : pending) std::printf("%s\n", job_command_line(c, *r).c_str());
    std::fputs(eta_text(c, p, pending, study_throughput(c, p, 0, 1)).c_str(), stderr);
    return 0;
  }
  if (!a.boolean("report", false)) make_study(c, jobs, t0);
  std::fprintf(stderr, "gathering the results, writing the report\n");
  const StudyPlan p = current_plan(c, nullptr);
  collect_results(c, p);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_study_report(c, secs);
  std::fprintf(stderr, "done in %s: %s/REPORT.md\n", format_duration(secs).c_str(), c.out.c_str());
  return 0;
}

}  // namespace poslab
