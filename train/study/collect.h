// collect.h — gathering the study: from the run folders (runner.h) to the study's tables
// (tables.h) beside REPORT.md, plus the attention maps and the lines of code per scheme.
#pragma once
#include "train/study/study.h"

namespace poslab {

// Writes <out>/runs.csv, extrapolation.csv, position_loss.csv, mlm.csv, tasks.csv, loc.csv,
// attention_<pe>.csv and curves/<run>.csv, each atomically. Throws naming the first output a
// run lacks (and the command that makes it) when a run is not done.
void collect_results(const StudyConfig& c, const StudyPlan& p);

}  // namespace poslab
