// collect.h — gathering the study: from the run and corpus folders (runner.h) to the study's
// tables (tables.h) beside REPORT.md.
#pragma once
#include "train/study/study.h"
#include "train/study/tables.h"

namespace poslab {

// Writes <out>/runs.csv, extrapolation.csv, position_loss.csv, mlm.csv, tasks.csv, ngram.csv,
// attention.csv, loc.csv, timing.csv and curves/<run>.csv, each atomically. Fits the n-gram
// models of the study corpus unless cached (data/<corpus>/ngram.csv). Throws naming the first
// output a run lacks (and the command that makes it) when a run is not done.
void collect_results(const StudyConfig& c, const StudyPlan& p);

// One row of runs.csv, from the run's folder (log.csv, timing.csv, its evaluations at T0 or
// mlm.csv). Throws like collect_results when a file is missing.
RunRow run_row(const StudyConfig& c, const StudyPlan& p, const RunSpec& r);

}  // namespace poslab
