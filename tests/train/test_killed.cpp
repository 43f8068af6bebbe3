// Killed runs: `poslab train` as a child process, killed with SIGKILL at random moments
// (many of them during a checkpoint write, since this run checkpoints every step), resumed
// each time. The checkpoint on disk must always load, no step may be lost beyond the last
// checkpoint, and the run must end with exactly the weights of an uninterrupted run.
// SIGINT must save a checkpoint and exit cleanly.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "tests/support/temp_dir.h"
#include "train/checkpoint.h"

using namespace poslab;
namespace fs = std::filesystem;

#ifndef POSLAB_BIN
#error "POSLAB_BIN (the path of the poslab program) must be defined by the build"
#endif

namespace {

std::vector<std::string> train_args(const test::TempDir& dir, const std::string& out, int steps) {
  return {POSLAB_BIN,     "train",
          "--data",       dir.file("data"),
          "--out",        out,
          "--pe",         "rope",
          "--steps",      std::to_string(steps),
          "--ctx",        "32",
          "--d",          "32",
          "--layers",     "2",
          "--heads",      "4",
          "--batch",      "8",
          "--eval-every", "1",
          "--quiet"};
}

pid_t spawn(std::vector<std::string> args) {
  pid_t pid = fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    dup2(null, 1), dup2(null, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void make_corpus(const test::TempDir& dir) {
  std::string t;
  for (int i = 0; i < 200; ++i)
    t += "a stitch in time saves nine; " + std::to_string(i * 7919 % 1000) + "\n";
  write_corpus(build_corpus(t), dir.file("data"));
}

}  // namespace

TEST_CASE(
    "SIGKILL at random moments never corrupts a checkpoint; resuming ends where an uninterrupted "
    "run ends",
    "[train][slow]") {
  test::TempDir dir;
  make_corpus(dir);
  const int steps = 30;
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(wait_exit(spawn(train_args(dir, dir.file("straight"), steps))) == 0);
  // Kill moments are drawn within the uninterrupted run's own duration, so that a faster
  // build still gets killed mid-run (in a fixed window the whole run could finish first).
  const int64_t run_us = std::max<int64_t>(
      20000,
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
          .count());
  std::string out = dir.file("killed");
  Generator g(42);
  int64_t window_us = run_us;  // kill moments fall in the first 90% of it
  int kills = 0, last_step = 0;
  bool clean_finish = false;  // the last process ran to the end (and so cleaned up at start)
  for (int attempt = 0; attempt < 60; ++attempt) {
    auto args = train_args(dir, out, steps);
    if (fs::exists(out + "/state.safetensors")) args.push_back("--resume");
    pid_t pid = spawn(args);
    // somewhere in the run: start-up, a step, or a checkpoint write
    std::this_thread::sleep_for(
        std::chrono::microseconds(run_us / 50 + g.next_u64() % (window_us * 9 / 10)));
    kill(pid, SIGKILL);
    int code = wait_exit(pid);
    if (code == 0 && kills == 0) {
      // A run can be faster than the first, timed one (warm caches): this one finished before
      // any kill. Start again from nothing, with kills drawn earlier.
      fs::remove_all(out);
      window_us = std::max<int64_t>(window_us / 2, 1000);
      continue;
    }
    if (code == 0) {  // it finished before the kill
      clean_finish = true;
      break;
    }
    ++kills;
    if (fs::exists(out + "/model.safetensors")) {
      int step =
          static_cast<int>(load_checkpoint(out + "/model.safetensors").step);  // always loads
      REQUIRE(step >= last_step);  // a checkpoint never goes back: nothing before it is lost
      last_step = step;
    }
    if (last_step == steps) break;
  }
  INFO("killed " << kills << " times");
  REQUIRE(kills > 0);
  if (load_checkpoint(out + "/model.safetensors").step < steps) {
    auto args = train_args(dir, out, steps);
    args.push_back("--resume");
    REQUIRE(wait_exit(spawn(args)) == 0);
    clean_finish = true;
  }
  REQUIRE(read_file(out + "/model.safetensors") ==
          read_file(dir.file("straight/model.safetensors")));
  // a kill during a write leaves name.tmp.<pid> beside the intact file; the next start
  // removes it (when the last kill hit the final writes, no process ran after it)
  if (clean_finish)
    for (const auto& e : fs::directory_iterator(out))
      REQUIRE(e.path().filename().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("SIGINT saves a checkpoint and exits", "[train]") {
  test::TempDir dir;
  make_corpus(dir);
  std::string out = dir.file("run");
  pid_t pid = spawn(train_args(dir, out, 100000));
  for (int i = 0; i < 200 && !fs::exists(out + "/model.safetensors"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGINT);
  REQUIRE(wait_exit(pid) == 1);  // exit code 1 with "interrupted at step N; checkpoint saved"
  Checkpoint ck = load_checkpoint(out + "/model.safetensors");
  REQUIRE(ck.step >= 1);
  REQUIRE(ck.step < 100000);
}
