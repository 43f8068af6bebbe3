// tune.h — the study's learning rates, one per scheme (SPEC 7.1, 7 v5 part 4), chosen with short
// runs: the first part of the plan (study.h), since every other part trains at them. Each
// scheme at each learning rate (and batch size) of its grid, B / tune_divisor training tokens
// each with the study's schedule, seed 1, scored by the loss at T0 over every val window; a
// scheme gets the learning rate of its lowest loss.
//
// The grid grew (tune_lrs' last rate is new). The kept schemes (StudyConfig::kept_pes, whose
// runs are kept from before) were tuned on the grid without it. One whose choice sat at that
// grid's top edge is tried at the new rate on seeds 1..tune_edge_seeds, its choice on the same
// seeds beside it; it moves to the new rate only where that wins on every seed (then its main
// runs, branches and fine-tunes are trained again at it; its break experiments, ablations and
// tasks keep the rate they were made with: kept_lr_for). Every other scheme is tuned on the
// whole grid, one seed. Runs are named tune_<pe>_lr<lr>_b<batch>, with _s<seed> past seed 1.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "study/study.h"
#include "study/tables.h"

namespace poslab {

// Appends the tuning runs to p (evaluated at T0 only, so with c.lens = {T0}: tuning_config).
// The edge check of a kept scheme is added once its runs on the kept grid are done.
void tuning_runs(const StudyConfig& c, StudyPlan& p);
// The config the tuning runs are made and read with: c, evaluated at T0 only.
StudyConfig tuning_config(const StudyConfig& c);
// The rows of the finished tuning runs of the plan: each read from c.out, else from the
// archive (archive.h: a fresh clone making one run again with --force).
std::vector<TuningRow> tuning_rows(const StudyConfig& c);
// The learning rates from those rows: c.lr_by_pe and kept_lr_by_pe; lr_pending: the schemes
// whose grid is not done; lr_undecided: the kept schemes whose edge check is not done.
void choose_learning_rates(StudyConfig& c);
// A rate as run names and the report write it ("%g": 0.016).
std::string tune_lr_label(double lr);

// `--tune`: makes the pending tuning runs in this process, writes <out>/tuning.csv (tables.h),
// prints one line per run and the choices to stdout.
void tune_study(const StudyConfig& c);

}  // namespace poslab
