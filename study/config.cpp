// config.cpp — the settings of each size of the study (see StudyConfig in study.h for the
// full study's, which are its defaults).
#include "study/study.h"

namespace poslab {

StudySize parse_study_size(const std::string& name) {
  for (StudySize s : {StudySize::full, StudySize::quick, StudySize::tiny, StudySize::large})
    if (name == study_size_name(s)) return s;
  fail("--scale: expected full|quick|tiny|large, but got '", name, "'");
}

const char* study_size_name(StudySize size) {
  switch (size) {
    case StudySize::full:
      return "full";
    case StudySize::quick:
      return "quick";
    case StudySize::tiny:
      return "tiny";
    case StudySize::large:
      return "large";
  }
  return "?";
}

namespace {

// The same pipeline, small enough for a few minutes on 2 cores, report included: 24 steps of
// batch 8 (branches at 5 and 10), two main seeds (so the figures show a spread), one seed
// elsewhere, one window per length and per probe, two copy examples per gap, short task runs,
// a tuning grid of two rates at B/8 (the kept schemes' grid of one, so each checks the second).
// Its numbers show that the pipeline works, not what the schemes do.
void make_quick(StudyConfig& c) {
  c.steps = 24, c.batch = 8, c.task_steps = 30;
  c.main_seeds = 2, c.ablation_seeds = 1, c.task_seeds = 1, c.none_task_seeds = 1;
  c.screen_seeds = 1, c.finetune_seeds = 1;
  c.eval_windows = 1;
  c.probe_windows = 1, c.copy_examples = 2;
  c.tune_lrs = {4e-3, 8e-3}, c.tune_divisor = 8, c.tune_edge_seeds = 1;
}

// A toy network on short windows: seconds, for the tests of the pipeline itself.
void make_tiny(StudyConfig& c) {
  c.d = 32, c.layers = 1, c.heads = 2, c.ctx = 32;
  c.steps = 16, c.batch = 4, c.task_steps = 4;
  c.main_seeds = 2, c.ablation_seeds = 1, c.task_seeds = 1, c.none_task_seeds = 1;
  c.screen_seeds = 1, c.finetune_seeds = 1;
  c.lens = {32, 64, 128};
  c.eval_windows = 2, c.buckets = 4, c.attention_len = 16, c.context_window = 8;
  c.probe_windows = 1, c.copy_examples = 2;
  c.tune_lrs = {1e-3, 4e-3}, c.tune_batches = {4}, c.tune_divisor = 4;
  c.tune_first = false;
}

// The full study at 2 B and 5 seeds, for a GPU (--device cuda) or many machines (--plan): the
// same network, lengths and evaluations.
void make_large(StudyConfig& c) {
  c.steps *= 2, c.task_steps *= 4;
  c.main_seeds = 5, c.ablation_seeds = 3, c.task_seeds = 5, c.none_task_seeds = 3;
  c.screen_seeds = 3, c.finetune_seeds = 5;
}

}  // namespace

StudyConfig study_config(StudySize size) {
  StudyConfig c;
  c.size = size;
  c.quick = size == StudySize::quick || size == StudySize::tiny;
  c.out = size == StudySize::full ? "results" : std::string("results-") + study_size_name(size);
  if (size == StudySize::quick) make_quick(c);
  if (size == StudySize::tiny) make_tiny(c);
  if (size == StudySize::large) make_large(c);
  if (size == StudySize::full) c.archive = "docs/results/runs";
  return c;
}

}  // namespace poslab
