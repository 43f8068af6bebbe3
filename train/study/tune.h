// tune.h — `poslab experiments --tune`: the study's learning rate and batch size, chosen once
// with short runs (tuning_plan in study.h): each scheme of StudyConfig::tune_pes at each
// learning rate x batch size, the same number of training tokens each, scored by the loss at
// T0 over every val window. The runs are made like the study's (runs/tune_*, reused when
// done); the choice is the pair with the lowest loss averaged over the schemes.
#pragma once
#include <cstdint>

#include "train/study/study.h"

namespace poslab {

struct TuneChoice {
  double lr = 0;
  int64_t batch = 0;
  double mean_loss = 0;  // over tune_pes
};

// Makes the pending tuning runs, writes <out>/tuning.csv (tables.h), prints one line per run
// and the choice to stdout, and returns the choice.
TuneChoice tune_study(const StudyConfig& c);

}  // namespace poslab
