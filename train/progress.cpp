#include "train/progress.h"

#include <unistd.h>

#include <cstdio>

namespace poslab {

std::string format_duration(double s) {
  char b[32];
  if (s >= 3600)
    std::snprintf(b, sizeof b, "%dh%02dm", int(s / 3600), int(s / 60) % 60);
  else if (s >= 60)
    std::snprintf(b, sizeof b, "%dm%02ds", int(s / 60), int(s) % 60);
  else
    std::snprintf(b, sizeof b, "%.0fs", s);
  return b;
}

Progress::Progress(int64_t total, int64_t start, bool quiet)
    : total_(total),
      start_(start),
      quiet_(quiet),
      tty_(isatty(2)),
      t0_(std::chrono::steady_clock::now()) {}

void Progress::update(int64_t step, double loss, double lr, double tps) {
  if (quiet_) return;
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  double eta = step > start_ ? el / (step - start_) * (total_ - step) : 0;
  if (tty_) {
    int width = 24, filled = static_cast<int>(width * step / total_);
    std::fprintf(stderr, "\r[%-*s] %lld/%lld loss %.4f lr %.2e %.0f tok/s ETA %s   ", width,
                 std::string(filled, '#').c_str(), (long long)step, (long long)total_, loss, lr,
                 tps, format_duration(eta).c_str());
    bar_open_ = true;
  } else {
    int64_t tenth = (step * 10) / total_;
    if (tenth != last_line_ || step == total_) {
      last_line_ = tenth;
      std::fprintf(stderr, "step %lld/%lld loss %.4f lr %.2e %.0f tok/s ETA %s\n", (long long)step,
                   (long long)total_, loss, lr, tps, format_duration(eta).c_str());
    }
  }
  std::fflush(stderr);
}

void Progress::note(const std::string& line) {
  if (quiet_) return;
  if (bar_open_) std::fprintf(stderr, "\n");
  bar_open_ = false;
  std::fprintf(stderr, "%s\n", line.c_str());
}

void Progress::finish() {
  if (bar_open_) std::fprintf(stderr, "\n");
  bar_open_ = false;
}

}  // namespace poslab
