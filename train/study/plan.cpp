// plan.cpp — the study as a list of run specifications, built part by part (see study.h).
// Changing what the study measures means changing these functions, nothing else.
#include <algorithm>

#include "train/study/study.h"

namespace poslab {
namespace {

// The options every run of the study shares: the network, the optimizer, the token budget.
TrainOptions base_options(const StudyConfig& c, const std::string& pe, uint64_t seed) {
  TrainOptions o;
  o.data = c.data();
  o.model.pe = parse_pe(pe);
  o.model.n_embd = c.d, o.model.n_layer = c.layers, o.model.n_head = c.heads;
  o.model.block_size = c.ctx;
  o.model.device = c.device;
  if (o.model.pe == PeKind::learned) o.model.max_len = 4096;  // rows past T0 exist, untrained
  o.steps = c.steps;
  o.batch = c.batch;
  o.adam.lr = c.lr;
  o.seed = seed;
  o.eval_every = std::max<int64_t>(1, c.steps / 10);
  o.eval_batches = 4;
  return o;
}

RunSpec run_spec(const StudyConfig& c, const std::string& name, TrainOptions o, double weight) {
  o.out = c.run_dir(name);
  RunSpec r;
  r.name = name;
  r.train = o;
  r.weight = weight;
  return r;
}

// job weights ~ expected seconds per unit, only for the ETA
constexpr double kTrainWeight = 1.0, kTaskWeight = 0.3;

// 1-2. Every scheme at T0 with every seed, each evaluated at every length.
void main_runs(const StudyConfig& c, StudyPlan& p) {
  for (const std::string& pe : p.pes)
    for (uint64_t seed : c.seeds) {
      std::string name = main_run_name(pe, seed);
      p.runs.push_back(run_spec(c, name, base_options(c, pe, seed), kTrainWeight));
      p.evals.push_back({name, pe, seed, ScalingKind::none});
    }
}

// 3. RoPE scaling, zero-shot, on the RoPE model of the first seed.
void scaling_evals(const StudyConfig& c, StudyPlan& p) {
  uint64_t seed = c.seeds.front();
  for (ScalingKind sk :
       {ScalingKind::linear, ScalingKind::ntk, ScalingKind::dynamic, ScalingKind::yarn})
    p.evals.push_back({main_run_name("rope", seed), "rope", seed, sk});
}

// 4. Ablations: RoPE's base theta (rope at 4096 without scaling is in the main evaluations).
void ablation_runs(const StudyConfig& c, StudyPlan& p) {
  for (double theta : {10.0, 1e6}) {
    std::string name = theta == 10 ? "rope_theta10" : "rope_theta1e6";
    TrainOptions o = base_options(c, "rope", 1);
    o.model.rope_theta = theta;
    p.runs.push_back(run_spec(c, name, o, kTrainWeight));
    p.evals.push_back({name, "rope", 1, ScalingKind::none});
  }
}

// 4. No causal mask: a masked LM, NoPE against RoPE.
void masked_lm_runs(const StudyConfig& c, StudyPlan& p) {
  for (std::string pe : {"none", "rope"}) {
    TrainOptions o = base_options(c, pe, 1);
    o.model.causal = false;
    o.objective = "mlm";
    p.runs.push_back(run_spec(c, "mlm_" + pe, o, kTrainWeight));
    p.runs.back().mlm_check = true;
  }
}

// 5. The tasks (tasks.h): every main scheme x every task x every task seed, a small model
// (d 64, 2 layers, 4 heads, scaled embedding) trained with the answer objective on the task's
// own corpus, then scored on a grid of test cells. Windows: unscramble 72 (its sentences take
// at most 68 characters); reverse 32 (1..15 letters), tested up to 47 letters = 96 characters,
// 3 windows; passkey 64, tested from 48 to 256 characters (4 windows) at 5 depths.
struct TaskSizes {
  int64_t d, layers, heads, batch, train_examples, n;
  double lr;
  int64_t unscramble_steps, reverse_steps, passkey_steps;
  std::vector<int64_t> reverse_lens, passkey_lens;
  std::vector<double> depths;
};

TaskSizes task_sizes(StudySize size) {
  switch (size) {
    case StudySize::full:
      // Calibrated with OMP_NUM_THREADS=1 (CPU seconds, on a loaded 2-core machine), rope:
      // unscramble 1300 steps 28 s, exact match 0.97 at T; reverse 2000 steps 19 s, 0.97 at 16
      // and 32 characters; passkey 2400 steps 42 s, 0.90-1.00 at 48 and at 64 from depth 0.5
      // (0.42 at depth 0). Fewer steps left passkey unlearned (1000 steps at T = 128: 0.00;
      // 2000 at T = 64: 0.6-0.75), as did lr 1e-2. All 36 runs: ~18 CPU-minutes, 9 on 2 cores.
      return {.d = 64,
              .layers = 2,
              .heads = 4,
              .batch = 32,
              .train_examples = 40000,
              .n = 200,
              .lr = 3e-3,
              .unscramble_steps = 1300,
              .reverse_steps = 2000,
              .passkey_steps = 2400,
              .reverse_lens = {16, 32, 48, 64, 96},
              .passkey_lens = {48, 64, 96, 128, 256},
              .depths = {0, 0.25, 0.5, 0.75, 1}};
    case StudySize::quick:  // seconds per run: the pipeline, not the numbers
      return {.d = 64,
              .layers = 2,
              .heads = 4,
              .batch = 16,
              .train_examples = 1000,
              .n = 20,
              .lr = 3e-3,
              .unscramble_steps = 30,
              .reverse_steps = 30,
              .passkey_steps = 30,
              .reverse_lens = {32, 64},
              .passkey_lens = {64, 128},
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
          .unscramble_steps = 3,
          .reverse_steps = 3,
          .passkey_steps = 3,
          .reverse_lens = {32, 48},
          .passkey_lens = {64, 96},
          .depths = {0, 1}};
}

std::vector<TaskSpec> task_specs(const StudyConfig& c, const TaskSizes& z) {
  std::vector<TaskSpec> ts{{"unscramble", 72, z.unscramble_steps, 0, 0, {72}, {}, 0, ""},
                           {"reverse", 32, z.reverse_steps, 0, 0, z.reverse_lens, {}, 0, ""},
                           {"passkey", 64, z.passkey_steps, 0, 0, z.passkey_lens, z.depths, 0, ""}};
  for (TaskSpec& t : ts) {
    t.train_examples = z.train_examples;
    t.val_examples = std::max<int64_t>(64, z.train_examples / 20);
    t.test_examples = z.n;
    t.data = c.out + "/data/task_" + t.name;
  }
  return ts;
}

void task_runs(const StudyConfig& c, StudyPlan& p) {
  const TaskSizes z = task_sizes(c.size);
  p.tasks = task_specs(c, z);
  for (const TaskSpec& t : p.tasks)
    for (const std::string& pe : p.pes)
      for (uint64_t seed : c.task_seeds) {
        TrainOptions o = base_options(c, pe, seed);
        o.data = t.data;
        o.objective = "answer";
        o.model.n_embd = z.d, o.model.n_layer = z.layers, o.model.n_head = z.heads;
        o.model.embedding = EmbeddingKind::scaled;
        o.model.block_size = t.train_len;
        // learned: a row for every position of the longest test (rows past T stay untrained)
        o.model.max_len =
            o.model.pe != PeKind::learned
                ? 0
                : std::max(t.train_len, *std::max_element(t.test_lens.begin(), t.test_lens.end()));
        o.steps = t.steps, o.batch = z.batch, o.adam.lr = z.lr;
        o.eval_every = std::max<int64_t>(1, o.steps / 10);
        std::string name = "task_" + t.name + "_" + pe + "_s" + std::to_string(seed);
        p.runs.push_back(run_spec(c, name, o, kTaskWeight));
        p.runs.back().task = t;
      }
}

}  // namespace

std::string main_run_name(const std::string& pe, uint64_t seed) {
  return pe + "_s" + std::to_string(seed);
}

StudyConfig study_config(StudySize size) {
  StudyConfig c;
  c.size = size;
  c.quick = size != StudySize::full;
  c.out = size == StudySize::full    ? "results"
          : size == StudySize::quick ? "results-quick"
                                     : "results-tiny";
  if (size == StudySize::quick) {
    // the same pipeline, small enough for a few minutes on 2 cores (20 steps of batch 8, one
    // window per length at 4096, short task runs)
    c.steps = 20, c.batch = 8, c.task_steps = 30, c.eval_tokens = 4096;
  } else if (size == StudySize::tiny) {
    // a toy network on short windows: seconds, for the tests of the pipeline itself
    c.steps = 4, c.batch = 4, c.task_steps = 4, c.eval_tokens = 256;
    c.d = 32, c.layers = 1, c.heads = 2, c.ctx = 32;
    c.lens = {32, 64, 128};
  }
  // full: what fits about 75 minutes on this project's 2-core machine (480 steps of batch 16
  // = 2M tokens per main run, at ~9k tokens/s): the defaults of StudyConfig
  return c;
}

StudyPlan study_plan(const StudyConfig& c) {
  StudyPlan p;
  p.pes = pe_names();
  main_runs(c, p);
  scaling_evals(c, p);
  ablation_runs(c, p);
  masked_lm_runs(c, p);
  task_runs(c, p);
  return p;
}

const RunSpec& StudyPlan::run(const std::string& name) const {
  std::string valid;
  for (const RunSpec& r : runs) {
    if (r.name == name) return r;
    valid += (valid.empty() ? "" : ", ") + r.name;
  }
  fail("--job: unknown run '", name, "'; valid: ", valid);
}

}  // namespace poslab
