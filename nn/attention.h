// attention.h — the causal self-attention module (docs/model.md):
//
//   qkv = c_attn(x)                  (B,T,3C);  q = cols [0,C), k = [C,2C), v = [2C,3C)
//   q, k, v viewed as (B,T,H,D)      head h owns dims [hD, (h+1)D) — views, no copies
//   terms = pe.attention_terms(q, k) the scheme's part, as data: q and k (RoPE: rotated), a
//                                    relative-bias table (ALiBi), per-row frequencies (RoPE
//                                    dynamic scaling); see posenc/posenc.h
//   y = attention(terms.q, terms.k, v, {causal, terms' tables})     the fused op
//                                    (the gradients of the q, k, v views land side by side in
//                                    qkv's one gradient buffer: slice's backward, both devices)
//   out = c_proj(y viewed as (B,T,C))
// The module never asks which scheme it runs with.
//
// To read the math first: the same layer as plain loops in double, forward and backward, with
// every scheme's positional term, is attention_forward / attention_backward in
// nn/gpt_reference.cpp (the whole model, one file). The fused op and its kernels
// (attention_op.cpp, attention_kernels.cpp) are tested equal to attention_reference.cpp, the
// op's own plain loops, and the model to the one file.
#pragma once
#include "nn/attention_op.h"
#include "nn/linear.h"
#include "posenc/posenc.h"

namespace poslab {

// What a forward may change at evaluation, passed with each call (the model holds no such
// state). The defaults change nothing. First the three interventions of docs/evaluation.md,
// which separate why a model fails past its training length T0 (training never sets them):
//   position_offset P   the window's tokens sit at positions P..P+T-1 (unseen absolute
//                       positions without unseen distances)
//   attention_window W  key j visible to query i only if |i - j| < W (0: no window): no
//                       distance >= W is ever shown
//   log_scale           row i's logits times max(1, ln(n_i) / ln(T0)), n_i its visible keys:
//                       compensates attention spread over more keys than in training
// then RoPE's scaling (posenc/rope_scaling.h): evaluation past T0, or a fine-tune under one;
// other schemes refuse any kind but none.
struct Interventions {
  int64_t position_offset = 0;
  int64_t attention_window = 0;
  bool log_scale = false;
  int64_t train_len = 0;     // T0, which log_scale compares against (GPT fills it in)
  RopeScaling rope_scaling;  // its train_len 0: the model's T0 (GPT fills it in)
  // Random positions (posenc/random_positions.h): (B,T) sorted positions, one row per sequence,
  // in place of 0..T-1: training's draws, or an evaluation's. Empty: contiguous.
  Ids positions;
  // An evaluation of a random-position model (train/eval.h): each window draws its own
  // positions from [0, draw_max), seeded by draw_seed and the window's index; 0: no draw.
  // The evaluation fills `positions` from these for every batch; the model reads `positions`.
  int64_t draw_max = 0;
  uint64_t draw_seed = 0;
};

// Decoding state of one layer: keys (before RoPE) and values of the positions so far.
struct LayerCache {
  Tensor k, v;  // (1, capacity, H, D)
  int64_t len = 0;
};

struct CausalSelfAttention {
  Linear c_attn, c_proj;
  int64_t n_head = 0;
  bool causal = true;

  CausalSelfAttention() = default;
  CausalSelfAttention(int64_t C, int64_t H, bool causal, Generator& gen, double proj_std,
                      DType dtype);
  // x: (B,T,C) at the positions of `at` (posenc.h: 0..T-1, shifted by its offset) -> (B,T,C)
  Tensor forward(const Tensor& x, const PositionalEncoding& pe, const PositionContext& at,
                 const Interventions& iv = {}) const;
  // x: (1,T,C), the next T positions after cache.len (at.q_pos0); appends to the cache.
  Tensor forward_cached(const Tensor& x, const PositionalEncoding& pe, const PositionContext& at,
                        LayerCache& cache) const;
  // The attention probabilities (B,H,T,T) of x (B,T,C), for plots (not dynamic scaling).
  Tensor probabilities(const Tensor& x, const PositionalEncoding& pe,
                       const PositionContext& at) const;
  void to(Device d) { c_attn.to(d), c_proj.to(d); }
  void collect(std::vector<NamedParam>& out, const std::string& prefix) const {
    c_attn.collect(out, prefix + ".c_attn");
    c_proj.collect(out, prefix + ".c_proj");
  }

 private:
  AttentionOptions options(const AttentionTerms& terms, int64_t q_pos0,
                           const Interventions& iv = {}) const;
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const PositionalEncoding& pe,
                const PositionContext& at) const;
};

}  // namespace poslab
