// archive.h — a study that outlives its machine. The full study takes hours on 2 cores, more than
// one sitting: each finished run's small files (its log, evaluations, probes, scores, stage
// times and done.json; not the models) are kept in an archive folder, the committed
// docs/results/runs, by scripts/study_archive.sh. The next `make experiments` on any machine
// brings them back into its results folder before it plans, where done.json makes them count
// as made, so it continues with the runs that are missing (a measurement the plan added since
// is made with the run's model, made again when it is not here: runner.h). The seed-1 model of
// each main
// scheme is kept too (docs/results/models/<pe>.safetensors, for learners and for the report's
// attention maps) and comes back as that run's model.safetensors.
#pragma once
#include <string>

#include "study/study.h"

namespace poslab {

// The archive folder of the study (StudyConfig::archive) as a path from here: relative paths
// are taken from the source tree this program was built from when it exists, else from the
// current folder. Empty when the study has none.
std::string archive_dir(const StudyConfig& c);

// Copies every archived run of the plan (its done.json saying the same options) that is not
// made in c.out into c.out/runs/<name>, and the archived seed-1 models into their runs; no run
// with --force. Then import_archived_tables. Returns the number of runs brought back.
int import_archived_runs(const StudyConfig& c, const StudyPlan& p);

// Copies the archived throughput.csv, tuning.csv and screening.csv into c.out when it has none,
// --force or not: they are the study's, not one run's. screening.csv holds the promotions
// decided (screening.h), which a later plan keeps.
void import_archived_tables(const StudyConfig& c);

}  // namespace poslab
