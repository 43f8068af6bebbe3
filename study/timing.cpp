// timing.cpp — stage times in a folder's timing.csv. See timing.h.
#include "study/timing.h"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

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

std::string machine_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (model.empty() && line.rfind("model name", 0) == 0) model = value;
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = " " + value + " ";
  }
  if (model.empty()) return "";
  std::string ext;
  for (const char* f : {"avx2", "fma", "avx512f"})
    if (flags.find(std::string(" ") + f + " ") != std::string::npos)
      ext += (ext.empty() ? "" : " ") + std::string(f);
  return model + " (" + (ext.empty() ? "no AVX2" : ext) + ")";
}

std::string study_invocation() {
  if (const char* v = std::getenv("POSLAB_STUDY_INVOCATION"); v && *v) return v;
  char b[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%MZ", std::gmtime(&now));
  setenv("POSLAB_STUDY_INVOCATION", b, 1);  // the child jobs inherit it
  return b;
}

}  // namespace poslab
