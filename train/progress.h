// progress.h — progress on stderr: one updating bar on a terminal (step, loss, lr, tokens/s,
// ETA), plain lines (every ~10%) when stderr is a file or a pipe.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace poslab {

class Progress {
 public:
  Progress(int64_t total, int64_t start, bool quiet);
  void update(int64_t step, double loss, double lr, double tokens_per_s);
  void note(const std::string& line);  // a line that stays (eval results)
  void finish();

 private:
  int64_t total_, start_, last_line_ = -1;
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point t0_;
  bool bar_open_ = false;
};

std::string format_duration(double seconds);  // "1h02m", "3m12s", "45s"

}  // namespace poslab
