// timing.cpp — stage times in a folder's timing.csv. See timing.h.
#include "train/study/timing.h"

#include <cmath>
#include <filesystem>

namespace poslab {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string timing_path(const std::string& dir) {
  return dir + "/timing.csv";
}

std::vector<TimingRow> read_stages(const std::string& dir) {
  if (!std::filesystem::exists(timing_path(dir))) return {};
  return read_rows<TimingRow>(timing_path(dir));
}

double stage_seconds(const std::string& dir, const std::string& stage) {
  for (const TimingRow& t : read_stages(dir))
    if (t.stage == stage) return t.seconds;
  return NAN;
}

void record_stage(const std::string& dir, const std::string& stage, double seconds, bool replace) {
  std::vector<TimingRow> rows = read_stages(dir);
  bool found = false;
  for (TimingRow& r : rows)
    if (r.stage == stage) {
      r.seconds = replace ? seconds : r.seconds + seconds;
      found = true;
    }
  if (!found) rows.push_back({stage, seconds});
  write_rows(timing_path(dir), rows);
}

}  // namespace poslab
