// timing.h — the study's compute time (timing.csv): every stage that computed something
// records its seconds in a small timing.csv beside what it made — a run's folder (train, eval,
// tasks), a corpus's folder (prepare, ngram) — so the times survive reuse of the outputs and
// parallel jobs (--jobs, --plan); collect_results concatenates them, and their sum is the
// study's compute time. A stage reused from an earlier invocation keeps the time it took then.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "study/tables.h"

namespace poslab {

// Seconds since a point of the steady clock.
double seconds_since(std::chrono::steady_clock::time_point t0);

// <dir>/timing.csv, the stage times of one run or one corpus.
std::string timing_path(const std::string& dir);

// Adds `seconds` to the row of `stage` in <dir>/timing.csv (a stage resumed after an
// interruption adds up), creating the row or the file; with `replace` (the stage was redone
// from scratch), sets it instead. Written atomically.
void record_stage(const std::string& dir, const std::string& stage, double seconds, bool replace);

// Where and when a run was made (runs.csv's machine and invocation columns): the CPU model and
// its vector extensions from /proc/cpuinfo, "AMD EPYC (avx2 fma avx512f)" (empty where there is
// none); the start of the `experiments` invocation, UTC, which its child jobs inherit through
// the environment (POSLAB_STUDY_INVOCATION).
std::string machine_description();
std::string study_invocation();

// The rows of <dir>/timing.csv; none when the file is missing.
std::vector<TimingRow> read_stages(const std::string& dir);
// The seconds of `stage` in <dir>/timing.csv; NaN when it has none.
double stage_seconds(const std::string& dir, const std::string& stage);

}  // namespace poslab
