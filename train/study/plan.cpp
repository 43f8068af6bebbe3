// plan.cpp — the study as a list of run specifications, built part by part (see study.h).
// Changing what the study measures means changing these functions, nothing else.
#include <algorithm>
#include <cstdio>

#include "train/study/study.h"
#include "train/study/tasks.h"

namespace poslab {
namespace {

// The options every run of the study shares: the network, the token budget B, each scheme in
// its canonical form (canonical_embedding) with its own tuned learning rate, the
// warmup-stable-decay schedule with the main runs' warmup (so a branch or an ablation at B/4
// has the learning rates of the main run's first steps); `corpus` is a folder under <out>/data.
TrainOptions base_options(const StudyConfig& c, const std::string& corpus, const std::string& pe,
                          uint64_t seed) {
  TrainOptions o;
  o.data = c.corpus_dir(corpus);
  o.model.pe.kind = parse_pe(pe);
  o.model.n_embd = c.d, o.model.n_layer = c.layers, o.model.n_head = c.heads;
  o.model.block_size = c.ctx;
  o.model.embedding = canonical_embedding(o.model.pe.kind);
  o.model.device = c.device;
  // rows past T0 exist (untrained), so that learned can be evaluated up to 4096
  if (o.model.pe.kind == PeKind::learned)
    o.model.pe.max_len = std::max<int64_t>(4096, c.lens.back());
  o.steps = c.steps;
  o.batch = c.batch;
  o.adam.lr = c.lr_for(pe);
  o.schedule = Schedule::wsd;
  o.decay_share = c.decay_share;
  o.warmup = std::min<int64_t>(100, c.steps / 10);
  o.seed = seed;
  o.eval_every = std::max<int64_t>(1, c.steps / 10);
  o.eval_batches = 4;
  return o;
}

// The same options with another step count (a branch, an ablation at B/4, a tuning run).
TrainOptions with_steps(TrainOptions o, int64_t steps) {
  o.steps = steps;
  o.eval_every = std::max<int64_t>(1, steps / 10);
  return o;
}

RunSpec run_spec(const StudyConfig& c, const std::string& name, const std::string& corpus,
                 TrainOptions o) {
  o.out = c.run_dir(name);
  RunSpec r;
  r.name = name;
  r.corpus = corpus;
  r.train = o;
  return r;
}

// A next-token run evaluated at every length (scaling none); the model at 80% of the steps is
// kept, for last20_gain.
void add_lm_run(const StudyConfig& c, StudyPlan& p, const std::string& name,
                const TrainOptions& o) {
  p.runs.push_back(run_spec(c, name, StudyConfig::kStudyCorpus, o));
  if (last20_step(o.steps) > 0) p.runs.back().train.keep_steps = {last20_step(o.steps)};
  p.evals.push_back({name, pe_name(o.model.pe.kind), o.seed, ScalingKind::none});
}

// The step count of B / divisor, and the step where its decay starts: a branch starts there.
int64_t budget_steps(const StudyConfig& c, int64_t divisor) {
  return std::max<int64_t>(1, c.steps / divisor);
}
int64_t branch_step(const StudyConfig& c, int64_t divisor) {
  TrainOptions o =
      with_steps(base_options(c, StudyConfig::kStudyCorpus, "rope", 1), budget_steps(c, divisor));
  return lr_schedule(o).decay_start();
}

// 1-5. Every scheme at T0 with every seed at budget B, each evaluated at every length and
// probed (probes.h). Each keeps its state where its branches start (0.8 B/4, 0.8 B/2); the
// branches follow in the same job: B/4 evaluated at every length, B/2 at T0.
void main_runs(const StudyConfig& c, StudyPlan& p) {
  for (uint64_t seed : first_seeds(c.main_seeds))
    for (const std::string& pe : p.pes) {
      const std::string main = main_run_name(pe, seed);
      add_lm_run(c, p, main, base_options(c, StudyConfig::kStudyCorpus, pe, seed));
      p.runs.back().probes = true;
      for (int64_t divisor : c.budget_divisors) {
        const int64_t at = branch_step(c, divisor);
        if (at > 0) p.runs.back().train.keep_steps.push_back(at);
      }
      std::sort(p.runs.back().train.keep_steps.begin(), p.runs.back().train.keep_steps.end());
      for (int64_t divisor : c.budget_divisors) {
        const int64_t at = branch_step(c, divisor);
        TrainOptions o = with_steps(base_options(c, StudyConfig::kStudyCorpus, pe, seed),
                                    budget_steps(c, divisor));
        if (at > 0) o.branch_from = kept_state_path(c.run_dir(main), at);
        const std::string name = budget_run_name(pe, divisor, seed);
        p.runs.push_back(run_spec(c, name, StudyConfig::kStudyCorpus, o));
        p.runs.back().after = main;
        p.runs.back().start_step = at;
        p.runs.back().t0_only = divisor != c.ablation_divisor;
        p.evals.push_back({name, pe, seed, ScalingKind::none});
      }
    }
}

// 4. RoPE scaling, zero-shot, on every main RoPE model.
void scaling_evals(const StudyConfig& c, StudyPlan& p) {
  for (uint64_t seed : first_seeds(c.main_seeds))
    for (ScalingKind sk : rope_scaling_kinds())
      p.evals.push_back({main_run_name("rope", seed), "rope", seed, sk});
}

// 4. Position interpolation as Chen et al. 2023 use it: a RoPE main run fine-tuned at
// finetune_factor T0 with linear scaling by that factor (positions p / s during the fine-tune
// and at evaluation), for finetune_share of B's tokens; evaluated at every length with s fixed.
void finetune_runs(const StudyConfig& c, StudyPlan& p) {
  const int64_t s = c.finetune_factor;
  for (uint64_t seed : first_seeds(std::min(c.finetune_seeds, c.main_seeds))) {
    TrainOptions o = base_options(c, StudyConfig::kStudyCorpus, "rope", seed);
    o.model.block_size = s * c.ctx;
    o.batch = std::max<int64_t>(1, c.batch / s);  // the same tokens per step
    const double tokens = c.finetune_share * static_cast<double>(c.steps * c.batch * c.ctx);
    o = with_steps(o, std::max<int64_t>(1, std::llround(tokens / (o.batch * s * c.ctx))));
    o.adam.lr *= c.finetune_lr_ratio;
    o.warmup = std::max<int64_t>(1, o.steps / 10);
    o.init_from = c.run_dir(main_run_name("rope", seed)) + "/model.safetensors";
    o.rope_scaling = {ScalingKind::linear, static_cast<double>(s), c.ctx};
    const std::string name = finetune_run_name(s, seed);
    p.runs.push_back(run_spec(c, name, StudyConfig::kStudyCorpus, o));
    p.runs.back().after = main_run_name("rope", seed);
    p.evals.push_back({name, "rope", seed, ScalingKind::linear, static_cast<double>(s)});
  }
}

// 6. The seed text's break experiments and the ablations, each at B / ablation_divisor with the
// main runs' schedule (read against their branch at that budget): no mask and no PE, a masked
// LM, NoPE against RoPE (break 2); RoPE's base theta (break 3); each scheme of
// swapped_embedding_pes under the other embedding convention (so each rank can be read under
// both); T5 with max_distance = T0.
void ablation_runs(const StudyConfig& c, StudyPlan& p) {
  const int64_t steps = budget_steps(c, c.ablation_divisor);
  auto options = [&](const std::string& pe, uint64_t seed) {
    return with_steps(base_options(c, StudyConfig::kStudyCorpus, pe, seed), steps);
  };
  for (uint64_t seed : first_seeds(c.ablation_seeds)) {
    for (const std::string& pe : mlm_pes()) {
      TrainOptions o = options(pe, seed);
      o.model.causal = false;
      o.objective = Objective::mlm;
      p.runs.push_back(run_spec(c, mlm_run_name(pe, seed), StudyConfig::kStudyCorpus, o));
      p.runs.back().mlm_check = true;
    }
    for (double theta : ablation_thetas()) {
      TrainOptions o = options("rope", seed);
      o.model.pe.theta = theta;
      add_lm_run(c, p, theta_run_name(theta, seed), o);
    }
    for (const std::string& pe : swapped_embedding_pes()) {
      TrainOptions o = options(pe, seed);
      o.model.embedding = swapped_embedding(o.model.pe.kind);
      add_lm_run(c, p, swapped_run_name(pe, seed), o);
    }
    TrainOptions t5 = options("t5", seed);
    t5.model.pe.t5_max_distance = c.ctx;
    add_lm_run(c, p, t5_distance_run_name(c.ctx, seed), t5);
  }
}

// 8. The tasks (tasks.h): every main scheme x every task x every task seed, a small model
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

void task_runs(const StudyConfig& c, StudyPlan& p) {
  const TaskSizes z = task_sizes(c.size);
  p.tasks = task_specs(c, z);
  for (uint64_t seed : first_seeds(c.task_seeds))  // seed by seed: a cut leaves whole seeds
    for (const TaskSpec& t : p.tasks)
      for (const std::string& pe : p.pes) {
        // unscramble (the seed text's own test of order) every task seed, the others fewer
        if (t.name != "unscramble" && static_cast<int64_t>(seed) > c.task_seeds_other) continue;
        TrainOptions o = base_options(c, "task_" + t.name, pe, seed);
        o.objective = Objective::answer;
        o.model.n_embd = z.d, o.model.n_layer = z.layers, o.model.n_head = z.heads;
        o.model.embedding = EmbeddingKind::scaled;
        o.model.block_size = t.train_len;
        // learned: a row for every position of the longest test (rows past T stay untrained)
        int64_t longest = t.train_len;
        for (int64_t len : t.test_lens)
          longest = std::max(longest, test_example_length(t.name, len));
        o.model.pe.max_len = o.model.pe.kind == PeKind::learned ? longest : 0;
        o.steps = t.steps, o.batch = z.batch;
        o.warmup = -1;  // the trainer's default for the task's own steps
        o.adam.lr = t.name == "unscramble" ? z.unscramble_lr : z.lr;
        o.eval_every = std::max<int64_t>(1, o.steps / 10);
        p.runs.push_back(run_spec(c, task_run_name(t.name, pe, seed), "task_" + t.name, o));
        p.runs.back().task = t;
      }
}

}  // namespace

// In the order of what to keep when the time limit forces a choice: the main runs at B with
// their branches, evaluations and probes, the fine-tune, then the tasks, then the ablations.
StudyPlan study_plan(const StudyConfig& c) {
  StudyPlan p;
  p.pes = pe_names();
  main_runs(c, p);
  scaling_evals(c, p);
  finetune_runs(c, p);
  task_runs(c, p);
  ablation_runs(c, p);
  return p;
}

StudyPlan tuning_plan(const StudyConfig& c) {
  StudyPlan p;
  p.pes = c.tune_pes;
  for (const std::string& pe : c.tune_pes)
    for (double lr : c.tune_lrs)
      for (int64_t batch : c.tune_batches) {
        TrainOptions o = base_options(c, StudyConfig::kStudyCorpus, pe, 1);
        o.adam.lr = lr;
        o.batch = batch;
        const int64_t tokens = budget_steps(c, c.tune_divisor) * c.batch * c.ctx;
        o = with_steps(o, std::max<int64_t>(1, tokens / (batch * c.ctx)));
        char name[96];
        std::snprintf(name, sizeof name, "tune_%s_lr%g_b%lld", pe.c_str(), lr, (long long)batch);
        p.runs.push_back(run_spec(c, name, StudyConfig::kStudyCorpus, o));
        p.evals.push_back({name, pe, 1, ScalingKind::none});
      }
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

std::vector<std::string> StudyPlan::corpora() const {
  std::vector<std::string> out;
  for (const RunSpec& r : runs)
    if (std::find(out.begin(), out.end(), r.corpus) == out.end()) out.push_back(r.corpus);
  return out;
}

std::vector<uint64_t> first_seeds(int64_t n) {
  std::vector<uint64_t> seeds;
  for (int64_t s = 1; s <= n; ++s) seeds.push_back(static_cast<uint64_t>(s));
  return seeds;
}

int64_t last20_step(int64_t steps) {
  return steps * 4 / 5;
}

std::string main_run_name(const std::string& pe, uint64_t seed) {
  return pe + "_s" + std::to_string(seed);
}
std::string theta_run_name(double theta, uint64_t seed) {
  return main_run_name("rope_theta" + theta_label(theta), seed);
}
std::string budget_run_name(const std::string& pe, int64_t divisor, uint64_t seed) {
  return main_run_name(pe + "_b" + std::to_string(divisor), seed);
}
std::string swapped_run_name(const std::string& pe, uint64_t seed) {
  return main_run_name(pe + "_" + embedding_name(swapped_embedding(parse_pe(pe))), seed);
}
std::string finetune_run_name(int64_t factor, uint64_t seed) {
  return main_run_name("rope_pi" + std::to_string(factor), seed);
}
std::string t5_distance_run_name(int64_t max_distance, uint64_t seed) {
  return main_run_name("t5_dist" + std::to_string(max_distance), seed);
}
EmbeddingKind canonical_embedding(PeKind pe) {
  return pe == PeKind::learned ? EmbeddingKind::gpt2 : EmbeddingKind::scaled;
}
EmbeddingKind swapped_embedding(PeKind pe) {
  return canonical_embedding(pe) == EmbeddingKind::gpt2 ? EmbeddingKind::scaled
                                                        : EmbeddingKind::gpt2;
}
std::string mlm_run_name(const std::string& pe, uint64_t seed) {
  return "mlm_" + main_run_name(pe, seed);
}
std::string task_run_name(const std::string& task, const std::string& pe, uint64_t seed) {
  return "task_" + task + "_" + main_run_name(pe, seed);
}

const std::vector<double>& ablation_thetas() {
  static const std::vector<double> kThetas{10, 1e6};
  return kThetas;
}
const std::vector<std::string>& swapped_embedding_pes() {
  static const std::vector<std::string> kPes{"none", "learned", "sinusoidal", "rope"};
  return kPes;
}
const std::vector<std::string>& mlm_pes() {
  static const std::vector<std::string> kPes{"none", "rope"};
  return kPes;
}
const std::vector<ScalingKind>& rope_scaling_kinds() {
  static const std::vector<ScalingKind> kKinds{ScalingKind::linear, ScalingKind::ntk,
                                               ScalingKind::dynamic, ScalingKind::yarn};
  return kKinds;
}

// "%g" gives 10, 10000 -> "10000", 1e+06; powers of ten from 1000 up read better as 1e4, 1e6.
std::string theta_label(double theta) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", theta);
  for (int k = 3; k <= 12; ++k)
    if (theta == std::stod("1e" + std::to_string(k))) return "1e" + std::to_string(k);
  return b;
}

}  // namespace poslab
