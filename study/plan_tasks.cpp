// plan_tasks.cpp — the study's task part: the task corpora and their runs (tasks.h). See
// study.h.
#include <algorithm>

#include "study/study.h"
#include "study/tasks.h"

namespace poslab {
namespace {

// The tasks (tasks.h): every main scheme x every task x every task seed, a small model
// (d 64, 2 layers, 4 heads, scaled embedding) trained with the answer objective on the task's
// own corpus, then scored on a grid of test cells, each trained short and tested long:
// unscramble on k <= 6 words (window 72), tested at k = 4 .. 12; reverse on 1 .. 32 letters
// (window 66), tested at 16 .. 64 letters; passkey at lengths up to its window, tested from
// the window to 32 times it at 5 depths. Steps and learning rates: the fewest with which a RoPE
// model learns each task in distribution (calibration runs of rope, seed 1; fewer steps left
// them unlearned), so that length generalisation can be read at all (SPEC 7.8).
struct TaskSizes {
  int64_t d, layers, heads, batch, train_examples, n;
  double lr, unscramble_lr;
  int64_t unscramble_steps, reverse_steps, passkey_steps;
  int64_t passkey_window;
  std::vector<int64_t> unscramble_ks, reverse_lens, passkey_lens;
  std::vector<double> depths;
};

TaskSizes task_sizes(StudySize size) {
  switch (size) {
    case StudySize::full:
    case StudySize::large:  // the task models already learn their tasks at this size
      return {.d = 64,
              .layers = 2,
              .heads = 4,
              .batch = 32,
              .train_examples = 40000,
              .n = 100,
              .lr = 3e-3,
              .unscramble_lr = 6e-3,
              .unscramble_steps = 8000,
              .reverse_steps = 6000,
              .passkey_steps = 6000,
              .passkey_window = 128,
              .unscramble_ks = {4, 6, 8, 10, 12},
              .reverse_lens = {16, 24, 32, 40, 48, 64},
              .passkey_lens = {128, 256, 512, 1024, 2048, 4096},
              .depths = {0, 0.25, 0.5, 0.75, 1}};
    case StudySize::quick:  // seconds per run: the pipeline, not the numbers
      return {.d = 64,
              .layers = 2,
              .heads = 4,
              .batch = 16,
              .train_examples = 1000,
              .n = 20,
              .lr = 3e-3,
              .unscramble_lr = 6e-3,
              .unscramble_steps = 30,
              .reverse_steps = 30,
              .passkey_steps = 30,
              .passkey_window = 128,
              .unscramble_ks = {4, 12},
              .reverse_lens = {16, 64},
              .passkey_lens = {128, 512},
              .depths = {0, 0.5, 1}};
    case StudySize::tiny:  // a toy for the tests
      break;
  }
  return {.d = 16,
          .layers = 1,
          .heads = 2,
          .batch = 4,
          .train_examples = 40,
          .n = 3,
          .lr = 3e-3,
          .unscramble_lr = 6e-3,
          .unscramble_steps = 3,
          .reverse_steps = 3,
          .passkey_steps = 3,
          .passkey_window = 64,
          .unscramble_ks = {4, 8},
          .reverse_lens = {16, 40},
          .passkey_lens = {64, 128},
          .depths = {0, 1}};
}

std::vector<TaskSpec> task_specs(const StudyConfig& c, const TaskSizes& z) {
  std::vector<TaskSpec> ts{
      {"unscramble", 72, z.unscramble_steps, 0, 0, z.unscramble_ks, {}, 0, ""},
      {"reverse", 66, z.reverse_steps, 0, 0, z.reverse_lens, {}, 0, ""},
      {"passkey", z.passkey_window, z.passkey_steps, 0, 0, z.passkey_lens, z.depths, 0, ""}};
  for (TaskSpec& t : ts) {
    t.train_examples = z.train_examples;
    t.val_examples = std::max<int64_t>(64, z.train_examples / 20);
    t.test_examples = z.n;
    t.data = c.corpus_dir("task_" + t.name);
  }
  return ts;
}

// One task run: the task's small model on its own corpus. A scheme on random positions draws
// them up to 16 times the task's window (SPEC 7 v5 part 9); a learned table holds a row for
// every position of the longest test and every one drawn (rows past T stay untrained).
TrainOptions task_options(const StudyConfig& c, const TaskSizes& z, const TaskSpec& t,
                          const std::string& pe, uint64_t seed) {
  TrainOptions o = base_options(c, "task_" + t.name, pe, seed);
  o.objective = Objective::answer;
  o.model.n_embd = z.d, o.model.n_layer = z.layers, o.model.n_head = z.heads;
  o.model.embedding = EmbeddingKind::scaled;
  o.model.block_size = t.train_len;
  int64_t longest = t.train_len;
  for (int64_t len : t.test_lens) longest = std::max(longest, test_example_length(t.name, len));
  o.model.pe.max_len = o.model.pe.kind == PeKind::learned ? longest : 0;
  apply_scheme(study_scheme(pe), o.model);
  o.steps = t.steps, o.batch = z.batch;
  o.warmup = -1;  // the trainer's default for the task's own steps
  o.adam.lr = t.name == "unscramble" ? z.unscramble_lr : z.lr;
  o.eval_every = std::max<int64_t>(1, o.steps / 10);
  return o;
}

// The seeds of a scheme's task: task_seeds, but NoPE's reverse and passkey keep
// none_task_seeds (StudyConfig).
int64_t task_seed_count(const StudyConfig& c, const TaskSpec& t, const std::string& pe) {
  if (pe == "none" && t.name != "unscramble") return std::min(c.task_seeds, c.none_task_seeds);
  return c.task_seeds;
}

}  // namespace

void task_runs(const StudyConfig& c, StudyPlan& p, const std::vector<std::string>& pes) {
  const TaskSizes z = task_sizes(c.size);
  p.tasks = task_specs(c, z);
  for (uint64_t seed : first_seeds(c.task_seeds))  // seed by seed: a cut leaves whole seeds
    for (const TaskSpec& t : p.tasks)
      for (const std::string& pe : pes) {
        if (static_cast<int64_t>(seed) > task_seed_count(c, t, pe)) continue;
        const std::string name = task_run_name(t.name, pe, seed);
        p.runs.push_back(run_spec(c, name, "task_" + t.name, pe, task_options(c, z, t, pe, seed)));
        p.runs.back().task = t;
      }
}

}  // namespace poslab
