// tune.h — the study's learning rates, one per scheme (SPEC 7.1), chosen with short runs
// (tuning_plan in study.h): each scheme of StudyConfig::tune_pes at each learning rate (and
// batch size) of the grid, the same number of training tokens each, scored by the loss at T0
// over every val window. The runs are made like the study's (runs/tune_*, reused when done);
// each scheme gets the learning rate of its lowest loss.
#pragma once
#include <map>
#include <string>

#include "train/study/study.h"

namespace poslab {

// Makes the pending tuning runs, writes <out>/tuning.csv (tables.h), prints one line per run
// and the choices to stdout, and returns the learning rate of each scheme.
std::map<std::string, double> tune_study(const StudyConfig& c);

// The choices of a tuning.csv made earlier (for --plan, --job and --report, which do not tune):
// each scheme's learning rate of lowest loss; empty when there is none. c.out's, else the
// archive's (import_archived_tables first: on a fresh clone only the archive has it).
std::map<std::string, double> read_tuning(const StudyConfig& c);

}  // namespace poslab
