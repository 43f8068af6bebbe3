// schedule.h — who makes the runs: this process one after another, several child processes
// of this program at once (--jobs N), or any scheduler a user already runs (--plan).
//
// Every run is one standalone command, `poslab experiments --out DIR --job NAME` with the
// study's settings, whose outputs land in the run's own folder (runner.h). So
//   poslab experiments --plan | parallel -j 8                  (GNU parallel, one machine)
//   poslab experiments --plan > jobs.txt; sbatch --array=1-$(wc -l < jobs.txt) ...   (Slurm)
// make the pending runs anywhere the results folder is shared, and a final
// `poslab experiments --report` gathers them and writes the report.
#pragma once
#include <string>
#include <vector>

#include "study/study.h"
#include "train/log.h"

namespace poslab {

// The jobs that are not done yet (all of them with --force), in the plan's order: each pending
// run that starts from no other (its job makes its children too: runner.h, make_job), and each
// pending run whose parent is done; not the runs that wait (RunSpec::waits).
std::vector<const RunSpec*> pending_runs(const StudyConfig& c, const StudyPlan& p);

// The command line that makes one run: this program, "experiments", the study's settings,
// "--job", the run's name. Quoted for a POSIX shell when printed by job_command_line.
std::vector<std::string> job_command(const StudyConfig& c, const RunSpec& r);
std::string job_command_line(const StudyConfig& c, const RunSpec& r);

// The training tokens/s between the first and the last row of a log.csv, leaving out the steps
// up to the first row: the first steps (thread pool, first touch of every buffer) are slower
// than the rest, so counting them would make every run look slower than it trains.
// tokens_per_s at step k counts every step since the start: T_k = k * tokens_per_step / tps_k,
// so the rate between rows k0 and k1 is
//   (k1 - k0) * tokens_per_step / (T_k1 - T_k0) = (k1 - k0) / (k1 / tps_k1 - k0 / tps_k0).
// One row: its tokens_per_s; none: 0.
double steady_throughput(const std::vector<LogRow>& rows);

// The faster way to use `cores` cores, measured now with short copies of run `probe`: one run
// on every core (jobs 1), or one run per core on one thread each (jobs = cores), and the
// tokens/s of the faster. The tokens/s of both go to stderr.
struct JobChoice {
  int jobs = 1;
  double tokens_per_s = 0;               // the whole machine's; 0 when the probes failed
  double one_run = 0, runs_at_once = 0;  // both ways' tokens/s (throughput.csv)
};
JobChoice measure_jobs(const StudyConfig& c, const RunSpec& probe, int cores);

// Makes `runs` one after another in this process, with a progress line per run.
void run_in_process(const StudyConfig& c, const StudyPlan& p,
                    const std::vector<const RunSpec*>& runs);
// Makes `runs` as child processes, `jobs` at a time, each with OMP_NUM_THREADS = `threads`;
// a child's output goes to runs/<name>/job.log. Throws naming the runs that failed.
void run_as_jobs(const StudyConfig& c, const std::vector<const RunSpec*>& runs, int jobs,
                 int threads);

}  // namespace poslab
