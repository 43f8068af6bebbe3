// bench_util.h — timing helpers shared by the benchmarks: median of repeated runs.
//
// The clock is wall time. BENCH_CLOCK=cpu switches to the process's CPU time
// (CLOCK_PROCESS_CPUTIME_ID): on a machine shared with other work, a one-thread benchmark's CPU
// time stays close to what it would take alone while its wall time grows with every neighbour
// (for development only: with several threads CPU time also counts threads waiting at a barrier).
#pragma once
#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace poslab::bench {

// Seconds on the benchmark clock (wall, or process CPU time under BENCH_CLOCK=cpu).
inline double clock_seconds() {
  static const clockid_t id = [] {
    const char* env = std::getenv("BENCH_CLOCK");
    return env && std::strcmp(env, "cpu") == 0 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
  }();
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Median time in seconds of `reps` calls after `warmup` untimed ones.
inline double median_seconds(const std::function<void()>& f, int reps, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const double t0 = clock_seconds();
    f();
    t.push_back(clock_seconds() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace poslab::bench
