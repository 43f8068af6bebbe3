// run_evals.h — the evaluation stage of a run (runner.h's make_run calls it): every evaluation
// of StudyPlan::evals at every length with the sliding-window loss on the same targets, the
// 32-token window at T0 of a main run, the kept model at T0, the masked-LM check. Each file is
// made unless it is there (runner.h lists them); a model on random positions reads the study's
// draws (study_positions).
#pragma once
#include "nn/gpt.h"
#include "study/runner.h"
#include "study/study.h"

namespace poslab {

// True when every evaluation of the run, its kept model's and its masked-LM check are there.
bool evals_done(const StudyConfig& c, const StudyPlan& p, const RunSpec& r);
// Makes the missing ones: one stage, "eval <run>" (timing.h).
void evaluate_all(const StudyConfig& c, const StudyPlan& p, const RunSpec& r, GPT& model);

}  // namespace poslab
