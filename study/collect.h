// collect.h — gathering the study: from the run and corpus folders (runner.h) to the study's
// tables (tables.h) beside REPORT.md.
#pragma once
#include <vector>

#include "study/study.h"
#include "study/tables.h"
#include "tensor/tensor.h"

namespace poslab {

// Writes <out>/runs.csv, extrapolation.csv, position_loss.csv, mlm.csv, tasks.csv, ngram.csv,
// attention.csv, attention_distance.csv, loc.csv, timing.csv and curves/<run>.csv, each atomically.
// Fits the n-gram models of the study corpus unless cached (data/<corpus>/ngram.csv). Throws naming
// the first output a run lacks (and the command that makes it) when a run is not done.
void collect_results(const StudyConfig& c, const StudyPlan& p);

// How far back each head attends: for attention probabilities p (1,H,T,T) of a causal layer,
// per head h the mean over queries i of sum_{j<=i} p[h,i,j] (i - j), in tokens.
std::vector<double> mean_attention_distance(const Tensor& p);

// One row of runs.csv, from the run's folder (log.csv, timing.csv, its evaluations at T0 or
// mlm.csv). Throws like collect_results when a file is missing.
RunRow run_row(const StudyConfig& c, const StudyPlan& p, const RunSpec& r);

}  // namespace poslab
