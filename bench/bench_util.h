// bench_util.h — timing helpers shared by the benchmarks: median of repeated runs.
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace poslab::bench {

// Median wall time in seconds of `reps` calls after `warmup` untimed ones.
inline double median_seconds(const std::function<void()>& f, int reps, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace poslab::bench
