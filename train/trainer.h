// trainer.h — `poslab train`: the training loop.
//
// Each step: sample B windows of T+1 tokens from train.bin (seeded), forward, backward,
// clip the global grad norm, AdamW with warmup and a cosine or warmup-stable-decay learning rate
// (optimizer.h). (With the answer objective a
// window is one whole example of a task corpus, and only its answer tokens are predicted.) Every
// eval_every steps: the mean loss over a fixed set of val batches, a row in log.csv, and a
// checkpoint.
//
// A run directory holds
//   model.safetensors   the model (docs/formats.md), written atomically
//   state.safetensors   everything --resume needs in one atomic file: the weights, AdamW's
//                       moments, the step and the batch sampler's RNG state
//   log.csv             one row per evaluation (train/log.h has its columns)
//   vocab.json          a copy of the corpus vocabulary, for `poslab generate`
//   model_step<N>.safetensors   a copy of the model after step N, for each N of keep_steps
//   state_step<N>.safetensors   and of the state (the study's last20_gain evaluates the model at
//                       80% of the steps; its cooldown branches start from a kept state)
// --resume continues exactly: 20 steps equal 10 steps, a resume, and 10 more, byte for byte.
// A cooldown branch (--branch-from run/state_step<N>.safetensors, schedule wsd) starts from the
// state another run kept at step N, in its constant phase, and trains on to --steps, decaying
// from N = the branch's decay start: it equals a run trained straight to --steps, byte for byte
// (Hagele et al. 2024: one long run gives the budget curve at its cooldown points).
// A NaN/inf loss or gradient stops the run naming the step (and the tensor); the last good
// checkpoint stays. SIGINT saves a checkpoint, then exits.
#pragma once
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "train/optimizer.h"

namespace poslab {

// What the model learns to predict (--objective):
//   lm      the next token
//   mlm     masked-LM, the study's masked-LM ablation: the tokens replaced by the mask token
//   answer  a task corpus with an answer mask (data/answer_mask.h): one example per window,
//           the loss on its answer only
enum class Objective { lm, mlm, answer };
Objective parse_objective(const std::string& name);  // error lists the valid names
const char* objective_name(Objective objective);
const std::vector<std::string>& objective_names();  // "lm", "mlm", "answer"

struct TrainOptions {
  std::string data;  // prepared corpus folder (docs/formats.md)
  std::string out;   // run directory
  GPTConfig model;   // vocab_size is taken from the data
  int64_t steps = 2000;
  int64_t batch = 16;
  AdamWConfig adam;
  Schedule schedule = Schedule::cosine;
  double min_lr_ratio = 0.1;  // the schedule ends at lr * min_lr_ratio
  double decay_share = 0.2;   // wsd: the last round(decay_share * steps) steps decay
  int64_t warmup = -1;        // -1: min(100, steps / 10)
  int64_t eval_every = -1;    // -1: max(1, steps / 10)
  int64_t eval_batches = 8;
  int64_t ckpt_every = -1;  // -1: eval_every
  uint64_t seed = 1337;
  bool resume = false;
  bool force = false;
  int64_t stop_after = 0;           // >0: pause after this step (checkpoint, exit) — for tests
  std::vector<int64_t> keep_steps;  // after each of these steps: model_ and state_step<N>
  // A cooldown branch: the kept state (state_step<N>.safetensors of another run) this run starts
  // from; the log's rows up to N come with it. Needs schedule wsd and N <= the decay start.
  std::string branch_from;
  Objective objective = Objective::lm;
  double mask_frac = 0.15;  // mlm: share of input tokens replaced by the mask token
  bool quiet = false;       // no progress output
  // Fine-tuning (the study's position interpolation, Chen et al. 2023): the weights of this
  // checkpoint start the run (its network must match `model` but for block_size), and RoPE
  // trains under this scaling (e.g. linear with factor 4: positions p / 4), which the
  // checkpoint does not record: evaluate it with the same --rope-scaling and --factor.
  std::string init_from;
  RopeScaling rope_scaling;
};

struct TrainResult {
  int64_t steps = 0;
  double train_loss = 0;  // mean over the last eval interval
  double val_loss = 0;
  double tokens_per_s = 0;  // training throughput (evaluation and checkpoint time excluded)
};

void validate(const TrainOptions& o);  // flags out of range: named errors
// Where the copy of the model after `step` goes (TrainOptions::keep_steps):
// out/model_step<N>.safetensors.
std::string kept_model_path(const std::string& out, int64_t step);
std::string kept_state_path(const std::string& out, int64_t step);  // out/state_step<N>.safetensors
// The learning-rate schedule of a run (warmup resolved: -1 means min(100, steps / 10)).
LrSchedule lr_schedule(const TrainOptions& o);
TrainResult train(const TrainOptions& o);

// The token windows of a split: x[b] = tokens[o_b, o_b+T), y[b] = tokens[o_b+1, o_b+T+1).
struct Batch {
  Ids x, y;
};
// mlm: a share of x replaced by mask_id (= vocab size); y = the original token there, -1
// elsewhere (ignored by the loss).
Batch sample_batch(const std::vector<uint16_t>& tokens, int64_t B, int64_t T, Generator& gen,
                   Objective objective, double mask_frac, int32_t mask_id);
// answer: B examples of a task corpus, each drawn uniformly from the E = T+1 token examples
// of the split and read from its start (aligned): x[b] = example[0, T), y[b] = example[1, T+1)
// where marks says answer (1), -1 elsewhere (ignored by the loss). One draw of gen per example.
Batch sample_answer_batch(const std::vector<uint16_t>& tokens, const std::vector<uint8_t>& marks,
                          int64_t B, int64_t T, Generator& gen);

}  // namespace poslab
