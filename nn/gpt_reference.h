// gpt_reference.h — the whole model and its training as plain loops in double over plain
// arrays: gpt_reference.cpp, the file to read first. It includes only the standard library, so
// it compiles alone with a small main beside it (gpt_reference_main.cpp):
//
//   g++ -std=c++20 -O2 nn/gpt_reference.cpp nn/gpt_reference_main.cpp -o reference_train
//   make reference-train PE=rope          (the same, then trains on a prepared corpus)
//
// It computes what the framework computes (GPT::loss, backward(), AdamW, poslab train) without
// tensors, threads or autograd. Tests: tests/nn/test_gpt_reference.cpp (loss and every gradient
// equal to the framework's, f64 and f32, every scheme and option) and
// tests/train/test_reference_train.cpp (its first training steps are `poslab train`'s);
// `make reference PE=rope` prints one step through both.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace poslab::reference {

using Vec = std::vector<double>;

// The positional schemes (docs/model.md), in the order of `poslab train --pe`.
enum class Pe { none, learned, sinusoidal, rope, alibi, t5, kerple, fire, xpos };
Pe parse_pe(const std::string& name);  // throws std::invalid_argument naming the valid names
const char* pe_name(Pe pe);

// The model and its scheme; the defaults are poslab train's.
struct Config {
  int64_t vocab_size = 0;    // V
  int64_t n_layer = 4;       // L
  int64_t n_head = 4;        // H
  int64_t n_embd = 128;      // C (head dim D = C / H)
  int64_t block_size = 256;  // T0, the training length (FIRE's threshold starts there)
  Pe pe = Pe::rope;
  bool causal = true;
  bool scaled_embedding = false;  // --embedding scaled: input times sqrt(C), tables std C^-1/2
  int64_t max_len = 0;            // learned: rows of wpe (0: max(T0, random_positions))
  double theta = 10000;           // rope, xpos
  bool rope_half = false;         // --rope-layout half: pair (i, i + r/2), not (2i, 2i+1)
  double rope_fraction = 1;       // rope: rotate the first r = 2 floor(f D / 2) dims
  double rope_proportion = 1;     // rope: p-RoPE, floor(p D / 2) pairs keep their frequency
  double rope_linear_factor = 1;  // rope: linear scaling (a fine-tune): positions p / s
  int64_t t5_buckets = 32, t5_max_distance = 128;
  int64_t fire_width = 32;       // W
  double xpos_scale_base = 512;  // B
  int64_t nope_every = 0;        // layer l without position when (l + 1) % k == 0 (0: off)
  int64_t random_positions = 0;  // training positions drawn from [0, Lmax) (0: off)
};

// The weights, nanoGPT's names; a gradient is a Params of the same sizes.
struct FireParams {    // one set per layer that carries position
  Vec w0, b0, w2, b2;  // mlp.0: (W,1), (W); mlp.2: (H,W), (H)
  Vec c, m;            // (1): phi's scale, the threshold multiplier
};
struct BlockParams {
  Vec ln_1_w, ln_1_b;            // (C)
  Vec attn_w, attn_b;            // c_attn (3C,C), (3C)
  Vec attn_proj_w, attn_proj_b;  // attn.c_proj (C,C), (C)
  Vec ln_2_w, ln_2_b;            // (C)
  Vec fc_w, fc_b;                // mlp.c_fc (4C,C), (4C)
  Vec mlp_proj_w, mlp_proj_b;    // mlp.c_proj (C,4C), (C)
  FireParams fire;               // fire only
};
struct Params {
  Vec wte;                 // (V,C), also the output head
  Vec wpe;                 // learned: (max_len, C)
  Vec rel_bias;            // t5: (buckets, H), shared by every layer
  Vec kerple_p, kerple_a;  // kerple: (H) each, shared by every layer
  std::vector<BlockParams> h;
  Vec ln_f_w, ln_f_b;  // (C)
};

// Every array of p with its checkpoint name, in the order of GPT::parameters(), and whether
// AdamW decays it (the weight matrices of Linear layers only).
struct NamedArray {
  std::string name;
  Vec* value;
  bool decay;
};
std::vector<NamedArray> named_arrays(const Config& c, Params& p);
// Arrays of p's sizes, all zero.
Params zeros_like(const Config& c, const Params& p);

// B sequences of T tokens: inputs x and next-token targets y (B*T, -1: not predicted), and
// their positions (B*T, ascending per row) or empty for 0..T-1.
struct Batch {
  int64_t B = 0, T = 0;
  std::vector<int32_t> x, y, pos;
};

struct StepResult {
  double loss = 0;             // mean cross-entropy (nats) over the predicted targets
  Params grad;                 // dloss/dparameter
  std::vector<Vec> attention;  // per layer: p_ij (B,H,T,T), 0 where masked
};
// One forward and backward.
StepResult forward_backward(const Config& c, const Params& p, const Batch& batch);
// The forward alone.
double model_loss(const Config& c, const Params& p, const Batch& batch);

// ---- Training: what poslab train does, with its random numbers ----

// poslab's generator (tensor/tensor.h): xoshiro256** seeded by splitmix64; normal() by the
// polar method, keeping the second value for the next call.
class Generator {
 public:
  explicit Generator(uint64_t seed);
  uint64_t next_u64();
  double uniform();  // [0, 1), 53 bits
  double normal();   // N(0, 1)

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

// The initial weights of GPT(c, seed), drawn in its order.
Params init_params(const Config& c, uint64_t seed);
// B windows of T+1 tokens at uniform offsets (train/trainer.cpp: sample_batch).
Batch sample_batch(const std::vector<uint16_t>& tokens, int64_t B, int64_t T, Generator& gen);
// --random-positions: the positions of step `step`'s rows (posenc/random_positions.h); val
// batch i uses step -1 - i.
std::vector<int32_t> draw_positions(int64_t B, int64_t T, int64_t Lmax, uint64_t run_seed,
                                    int64_t step);

// AdamW's settings and state (train/optimizer.h).
struct AdamW {
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
  Params m, v;
  int64_t t = 0;  // steps taken
};
// The learning rate of step s: linear warmup, then cosine from max_lr to min_lr.
double lr_at(int64_t s, int64_t warmup, int64_t total, double max_lr, double min_lr);

// A run of poslab train: its settings (the defaults are its flags'), weights, optimizer state
// and batch sampler.
struct TrainSettings {
  int64_t steps = 2000, batch = 16;
  int64_t warmup = -1;  // -1: min(100, steps / 10)
  double lr = 1e-3, min_lr_ratio = 0.1;
  uint64_t seed = 1337;
};
struct Run {
  Config config;
  TrainSettings settings;
  Params params;
  AdamW opt;
  Generator batches;
};
Run start_run(const Config& c, const TrainSettings& s);
// Training step `step` (0-based) on the train split: sample, forward, backward, clip the
// gradient norm at 1, AdamW, KERPLE's clamp. Returns the loss; grad_norm, if given, gets the
// norm before clipping.
double train_step(Run& run, const std::vector<uint16_t>& train, int64_t step,
                  double* grad_norm = nullptr);
// poslab train's val loss: the mean over `n` fixed batches of the val split.
double val_loss(const Run& run, const std::vector<uint16_t>& val, int64_t n);

}  // namespace poslab::reference
