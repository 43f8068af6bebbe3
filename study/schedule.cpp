// schedule.cpp — making the study's runs: in this process, as child processes, or as a plan
// of commands for another scheduler. See schedule.h.
#include "study/schedule.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "study/eta.h"
#include "study/runner.h"
#include "study/timing.h"
#include "train/log.h"
#include "train/progress.h"

namespace poslab {
namespace {

// This program's own path, so that a child (or a plan's command) runs the same binary.
std::string self_path() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "poslab";
  return std::string(buf, static_cast<size_t>(n));
}

std::string shell_quote(const std::string& s) {
  if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=") ==
      std::string::npos)
    return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// Starts `cmd` as a child process on `threads` OpenMP threads, its output to `log`; gpu >= 0
// pins it to that GPU (CUDA_VISIBLE_DEVICES, said on the log's first line).
pid_t spawn(std::vector<std::string> cmd, const std::string& log, int threads, int gpu = -1) {
  pid_t pid = fork();
  if (pid < 0) fail("--jobs: fork failed for ", cmd.back());
  if (pid > 0) return pid;
  int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) dup2(fd, 1), dup2(fd, 2), close(fd);
  setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
  if (gpu >= 0) {
    setenv("CUDA_VISIBLE_DEVICES", std::to_string(gpu).c_str(), 1);
    std::printf("CUDA_VISIBLE_DEVICES=%d\n", gpu);
    std::fflush(stdout);
  }
  std::vector<char*> argv;
  for (std::string& a : cmd) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  std::perror("execv");
  _exit(127);
}

// Starts one run of the study as a child: its output to runs/<name>/job.log.
pid_t start_child(const StudyConfig& c, const RunSpec& r, int threads, int gpu) {
  std::error_code ec;
  std::filesystem::create_directories(c.run_dir(r.name), ec);
  return spawn(job_command(c, r), c.run_dir(r.name) + "/job.log", threads, gpu);
}

// A probe's steps, and the steps it leaves out as warm-up (steady_throughput).
constexpr int kProbeSteps = 40, kProbeWarmup = 10;

// The summed steady training throughput (tokens/s, log.csv) of `n` short copies of run `r`
// trained at once, `threads` threads each, after kProbeWarmup steps.
double probe_throughput(const StudyConfig& c, const RunSpec& r, int n, int threads) {
  const TrainOptions& o = r.train;
  const std::string dir = c.out + "/calibrate";
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    const std::string out = dir + "/probe" + std::to_string(i);
    std::filesystem::create_directories(out);
    pids.push_back(spawn({self_path(),    "train",
                          "--data",       o.data,
                          "--out",        out,
                          "--steps",      std::to_string(kProbeSteps),
                          "--eval-every", std::to_string(kProbeWarmup),
                          "--batch",      std::to_string(o.batch),
                          "--ctx",        std::to_string(o.model.block_size),
                          "--d",          std::to_string(o.model.n_embd),
                          "--layers",     std::to_string(o.model.n_layer),
                          "--heads",      std::to_string(o.model.n_head),
                          "--pe",         pe_name(o.model.pe.kind),
                          "--embedding",  embedding_name(o.model.embedding),
                          "--device",     device_name(o.model.device),
                          "--quiet",      "--force"},
                         out + "/probe.log", threads));
  }
  double total = 0;
  for (int i = 0; i < n; ++i) {
    int status = 0;
    waitpid(pids[i], &status, 0);
    const std::string log = dir + "/probe" + std::to_string(i) + "/log.csv";
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !std::filesystem::exists(log)) return 0;
    total += steady_throughput(read_log(log));
  }
  return total;
}

}  // namespace

double steady_throughput(const std::vector<LogRow>& rows) {
  if (rows.empty()) return 0;
  const double t1 = rows.back().tokens_per_s;
  if (rows.size() < 2) return t1;
  const double k0 = static_cast<double>(rows.front().step),
               k1 = static_cast<double>(rows.back().step), t0 = rows.front().tokens_per_s;
  const double steady = (k1 - k0) / (k1 / t1 - k0 / t0);
  return std::isfinite(steady) && steady > 0 ? steady : t1;
}

std::vector<const RunSpec*> pending_runs(const StudyConfig& c, const StudyPlan& p) {
  std::vector<const RunSpec*> out;
  for (const RunSpec& r : p.runs)
    if (r.waits.empty() && !run_done(c, p, r) &&
        (r.after.empty() || run_done(c, p, p.run(r.after))))
      out.push_back(&r);
  return out;
}

std::vector<std::string> job_command(const StudyConfig& c, const RunSpec& r) {
  std::vector<std::string> cmd = {self_path(), "experiments", "--out", c.out};
  if (c.size == StudySize::quick) cmd.push_back("--quick");
  if (c.size == StudySize::tiny) cmd.push_back("--tiny");
  if (c.size == StudySize::large) cmd.insert(cmd.end(), {"--scale", "large"});
  cmd.push_back("--steps");
  cmd.push_back(std::to_string(c.steps));
  cmd.push_back("--seeds");
  cmd.push_back(std::to_string(c.main_seeds));
  cmd.push_back("--device");
  cmd.push_back(device_name(c.device));
  if (c.force) cmd.push_back("--force");
  cmd.push_back("--job");
  cmd.push_back(r.name);
  return cmd;
}

std::string job_command_line(const StudyConfig& c, const RunSpec& r) {
  std::string line;
  for (const std::string& a : job_command(c, r)) line += (line.empty() ? "" : " ") + shell_quote(a);
  return line;
}

JobChoice measure_jobs(const StudyConfig& c, const RunSpec& probe, int cores) {
  const double one = probe_throughput(c, probe, 1, cores);
  const double many = cores > 1 ? probe_throughput(c, probe, cores, 1) : 0;
  std::error_code ec;
  std::filesystem::remove_all(c.out + "/calibrate", ec);
  const int jobs = many > one ? cores : 1;
  std::fprintf(stderr,
               "measured on %s: one run on %d threads %.0f tokens/s, %d runs on one thread each "
               "%.0f tokens/s in all -> --jobs %d\n",
               probe.name.c_str(), cores, one, cores, many, jobs);
  return {jobs, std::max(one, many), one, many};
}

void run_in_process(const StudyConfig& c, const StudyPlan& p,
                    const std::vector<const RunSpec*>& runs) {
  double total = 0, done = 0;  // planned tokens (eta.h)
  for (const RunSpec* r : runs) total += job_tokens(c, p, *r);
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < runs.size(); ++i) {
    double el = seconds_since(t0);
    std::string eta = done > 0 ? format_duration(el / done * (total - done)) : "?";
    std::fprintf(stderr, "[%zu/%zu] %s  (elapsed %s, ETA %s)\n", i + 1, runs.size(),
                 runs[i]->name.c_str(), format_duration(el).c_str(), eta.c_str());
    const double tokens = job_tokens(c, p, *runs[i]);
    make_job(c, p, *runs[i]);
    done += tokens;
  }
}

void run_as_jobs(const StudyConfig& c, const std::vector<const RunSpec*>& runs, int jobs,
                 int threads) {
  std::map<pid_t, const RunSpec*> running;
  std::map<pid_t, int> slot_of;              // each running job holds a slot 0 .. jobs-1 ...
  std::vector<bool> slot_busy(jobs, false);  // ... and, with --gpus G, GPU slot % G
  std::vector<std::string> failed;
  size_t next = 0, finished = 0;
  auto t0 = std::chrono::steady_clock::now();
  while (next < runs.size() || !running.empty()) {
    while (next < runs.size() && static_cast<int>(running.size()) < jobs && failed.empty()) {
      const RunSpec* r = runs[next++];
      const int slot = static_cast<int>(std::find(slot_busy.begin(), slot_busy.end(), false) -
                                        slot_busy.begin());
      const int gpu = c.gpus > 0 ? slot % static_cast<int>(c.gpus) : -1;
      std::fprintf(stderr, "[%zu/%zu] start %s  (%d at a time, %d thread%s each%s; log: %s)\n",
                   next, runs.size(), r->name.c_str(), jobs, threads, threads == 1 ? "" : "s",
                   gpu >= 0 ? (", GPU " + std::to_string(gpu)).c_str() : "",
                   (c.run_dir(r->name) + "/job.log").c_str());
      const pid_t pid = start_child(c, *r, threads, gpu);
      running[pid] = r, slot_of[pid] = slot, slot_busy[slot] = true;
    }
    if (running.empty()) break;
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 || !running.count(pid)) continue;
    const RunSpec* r = running[pid];
    running.erase(pid);
    slot_busy[slot_of[pid]] = false;
    slot_of.erase(pid);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok) failed.push_back(r->name + " (see " + c.run_dir(r->name) + "/job.log)");
    // elapsed: since the first job started (jobs overlap, so not this run's own duration)
    std::fprintf(stderr, "  %s %s (%zu of %zu done, elapsed %s)\n", r->name.c_str(),
                 ok ? "finished" : "FAILED", ++finished, runs.size(),
                 format_duration(seconds_since(t0)).c_str());
  }
  if (!failed.empty()) {
    std::string list;
    for (const std::string& f : failed) list += (list.empty() ? "" : ", ") + f;
    fail("--jobs: ", failed.size(), " run(s) failed: ", list);
  }
}

}  // namespace poslab
