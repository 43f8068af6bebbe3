// runner.h — making one run of the study: train it (unless it is finished), then measure it.
//
// Everything a run produces lands in its own folder, <out>/runs/<name>, each file written
// atomically, so runs can be made in any order and in parallel (schedule.h) and gathered
// afterwards (collect.h):
//   model.safetensors, state.safetensors, log.csv, vocab.json   the trainer's (trainer.h)
//   model_step<N>.safetensors    next-token runs: the model at 80% of the steps
//   eval_<scaling>_<L>.json      each evaluation of StudyPlan::evals (EvalResult::json)
//   eval_step<N>_<T0>.json       that kept model at T0 over the same val windows (last20_gain)
//   eval_window32_<T0>.json      main runs: the loss at T0 with attention limited to the last
//                                32 tokens (context use inside T0)
//   state_step<N>.safetensors    main runs: the state where each cooldown branch starts
//   done.json                    written last: the run's training options (run_signature)
//   retrain.json                 a run made earlier whose model was made again here for a new
//                                measurement: whether the new training log equals the old
//   sliding.bin, sliding.json    the sliding-window loss of the val targets evaluated
//                                (sliding_cache.h)
//   mlm.csv                      masked-LM runs: loss on fixed masks, shuffle check (tables.h)
//   tasks.csv                    task runs: accuracy at each test cell, length x depth (tables.h)
//   passkey_distance.csv         passkey runs: accuracy by the key's distance from the question
//   timing.csv                   the seconds of each stage that computed something: train,
//                                eval, tasks (timing.h)
// A finished run, and each of these files, is reused when the study is run again, unless
// StudyConfig::force.
#pragma once
#include <optional>
#include <string>

#include "study/study.h"
#include "train/eval.h"

namespace poslab {

// The corpora the plan trains on (pystdlib, the task corpora), unless already prepared;
// each preparation records its time ("prepare <corpus>") in the corpus's timing.csv.
void prepare_study_data(const StudyConfig& c, const StudyPlan& p);

// Trains the run (resuming an interrupted one), makes its evaluations and scores, and writes
// done.json last.
void make_run(const StudyConfig& c, const StudyPlan& p, const RunSpec& r);
// One job of the study: run r unless done, then each run that starts from it (its cooldown
// branches, the fine-tunes) unless done or waiting (a later round makes it as its own job). The
// runs that start from another are never jobs of their own while that one is pending (schedule.h:
// pending_jobs).
void make_job(const StudyConfig& c, const StudyPlan& p, const RunSpec& r);
// The runs whose `after` is r, in the plan's order.
std::vector<const RunSpec*> children(const StudyPlan& p, const RunSpec& r);
// The training options a run is made with, as one line (done.json holds it: a run made with
// other options is not done).
std::string run_signature(const RunSpec& r);
// A text field of the run's done.json ("machine", "invocation"); "" when there is none.
std::string done_field(const StudyConfig& c, const RunSpec& r, const char* key);
// True when make_run would have nothing to do: the run was made (done.json says its options,
// or its model is finished) and every measurement the plan asks of it is there and current.
// A run that waits (RunSpec::waits) is done only when done.json says it was made with these
// options and nothing is missing.
bool run_done(const StudyConfig& c, const StudyPlan& p, const RunSpec& r);
// True when the run's done.json says it was made with these options (run_signature): its
// measurements then stay as they were made; a new one the plan asks for is added.
bool marked_done(const StudyConfig& c, const RunSpec& r);
// Whether a probe file is there in its current form (copy.csv: copy v2's columns, copy_probe.h;
// an older one is made again).
bool probe_current(const std::string& path);
// A task run's scores are there (tasks.csv; passkey: passkey_distance.csv too).
bool task_outputs_done(const StudyConfig& c, const RunSpec& r);
// The files a main run's probes write in its folder (probes.h): attribution.csv, copy.csv and,
// for the rope scheme, rope_pairs.csv; none for other runs.
std::vector<std::string> probe_files(const RunSpec& r);

// Where an evaluation is cached, and how many windows it uses at length L: every window of the
// run's val split that fits (StudyConfig::eval_windows = 0), or at most eval_windows.
std::string eval_path(const StudyConfig& c, const EvalSpec& e, int64_t L);
int64_t eval_windows(const StudyConfig& c, const RunSpec& r, int64_t L);
// False for the lengths a run cannot be evaluated at (a learned table past its max_len).
bool evaluates_at(const RunSpec& r, int64_t L);
// The val targets the run's sliding-window pass scores: 1 .. W L of its evaluation with the
// most targets (all the split's, less a partial window, when every window is evaluated).
int64_t sliding_targets(const StudyConfig& c, const RunSpec& r);
// A cached evaluation; nullopt when it is missing, unreadable or made with other windows.
std::optional<EvalResult> read_eval(const std::string& path, int64_t windows);

// A main run's loss at T0 with a context_window-token attention window; empty for other runs.
std::string window_eval_path(const StudyConfig& c, const RunSpec& r);

// last20_gain: the model kept at last20_step evaluated at T0 (scaling none), cached here.
// Empty for a run that keeps no model (masked LM, tasks).
std::string last20_eval_path(const StudyConfig& c, const RunSpec& r);

}  // namespace poslab
