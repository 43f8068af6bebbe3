// study.h — the study of `make experiments` as data: a list of run specifications built by
// small functions (one per part of the study), and the evaluations to make on them.
//
// Same corpus, network, seeds and steps; only the positional scheme changes. The parts:
//   main_runs        none / learned / sinusoidal / rope / alibi at T0, every seed, each
//                    evaluated at 256 ... 4096 (whole window, last quarter, loss per position)
//   scaling_evals    RoPE scaling zero-shot on the first-seed RoPE model: linear, ntk,
//                    dynamic, yarn at each length
//   ablation_runs    rope theta 10 and 1e6 (rope at 4096 unscaled is part of main_runs)
//   masked_lm_runs   no causal mask: a masked LM, NoPE against RoPE, with a shuffle check of
//                    NoPE's permutation equivariance
//   task_runs        reverse (order) and passkey retrieval past T0, accuracy per scheme
// A run lives in <out>/runs/<name>; everything a run produces (model, log, evaluations cached
// as JSON, masked-LM and task scores as CSV) stays in its folder, so runs can be made in any
// order, in parallel, on other machines (runner.h, schedule.h). collect_results then writes the
// study's tables (tables.h), attention maps and lines of code, and the report reads them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "posenc/posenc.h"
#include "tensor/dtype.h"
#include "train/trainer.h"

namespace poslab {

// How big a study: the real one, a small one (minutes), a toy one (seconds, for tests).
enum class StudySize { full, quick, tiny };

// The study's settings (flags of `poslab experiments`).
struct StudyConfig {
  std::string out;  // results folder
  StudySize size = StudySize::full;
  bool quick = false;  // not the full study: the report says so where parts are skipped
  bool force = false;
  int64_t steps = 480, task_steps = 800, eval_tokens = 32768;
  int64_t d = 128, layers = 4, heads = 4, ctx = 256, batch = 16;
  double lr = 2e-3;
  std::vector<uint64_t> seeds{1, 2};
  std::vector<uint64_t> task_seeds{1, 2};  // seeds of every task run
  std::vector<int64_t> lens{256, 512, 1024, 2048, 4096};
  Device device = Device::cpu;

  std::string data() const { return out + "/data/fortunes"; }  // the prepared corpus
  std::string run_dir(const std::string& run) const { return out + "/runs/" + run; }
};

// A synthetic task (tasks.h): its corpus, training window and test grid.
struct TaskSpec {
  std::string name;       // unscramble | reverse | passkey
  int64_t train_len = 0;  // the training window T: examples of at most T characters
  int64_t steps = 0;      // training steps of each of its runs
  int64_t train_examples = 0, val_examples = 0;  // the corpus, one example per window
  std::vector<int64_t> test_lens;                // example lengths tested (characters)
  std::vector<double> depths;                    // passkey: every depth at every length
  int64_t test_examples = 0;                     // n fresh examples per cell
  std::string data;                              // the prepared task corpus
};

// One model to train and what to measure on it besides the evaluations of StudyPlan::evals.
struct RunSpec {
  std::string name;              // runs/<name>
  TrainOptions train;            // the trainer's options (out = the run folder)
  double weight = 1;             // expected cost relative to a main run, for the ETA
  bool mlm_check = false;        // masked LM: loss on fixed masks + the shuffle check (mlm.csv)
  std::optional<TaskSpec> task;  // task accuracy at every test length (tasks.csv)
};

// The val loss of a run at every length of StudyConfig::lens, with one RoPE scaling.
struct EvalSpec {
  std::string run, pe;
  uint64_t seed = 0;
  ScalingKind scaling = ScalingKind::none;
};

struct StudyPlan {
  std::vector<TaskSpec> tasks;   // the task corpora to prepare
  std::vector<RunSpec> runs;     // in the order of the study's tables
  std::vector<EvalSpec> evals;   // in the order of extrapolation.csv
  std::vector<std::string> pes;  // the schemes of the main runs, in the study's order

  const RunSpec& run(const std::string& name) const;  // throws naming valid runs
};

StudyConfig study_config(StudySize size);  // the settings of each size
// The whole study: main runs, scaling, ablations, masked LM, tasks (in that order).
StudyPlan study_plan(const StudyConfig& c);
// "<pe>_s<seed>": the name of a main run; the models of the first seed stand for their scheme
// in the attention maps and the parameter counts.
std::string main_run_name(const std::string& pe, uint64_t seed);

}  // namespace poslab
