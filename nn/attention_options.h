// attention_options.h — everything the fused attention op takes besides q, k and v: the mask,
// the scale, where the queries sit, and the positional scheme's part of the scores as data.
//
// For batch b, head h, query row i at position P_i = q_pos0 + i and key j at position j, each
// field enters the scores S[b,h,i,j] and the mask at one place:
//   S = scale * q_i . k_j                     scale (or, with row_freqs, q_i . k_j turned by
//                                             (j - P_i) times row i's own frequencies)
//     + rel_bias[h, j - i + Tq - 1]           a bias of the relative position (ALiBi, T5, ...)
//     + bias[b, h, i, j]  (+ bias_rows)       a bias of each pair (FIRE; random positions)
//   S *= lambda_i                             log_scale_len (evaluation only)
//   S = -inf where j > P_i (causal), or where |P_i - j| >= window (window > 0)
// The op (attention_op.h) reads these and never asks which scheme made them; the scheme hands
// them over as AttentionTerms (posenc/posenc.h), and the attention module copies them in
// (nn/attention.cpp, CausalSelfAttention::options). The kernels (attention_kernels.h) and the
// plain-loop reference (attention_reference.h) read this header alone, not the op's.
#pragma once
#include <cstdint>
#include <memory>

#include "posenc/pair_bias_rows.h"
#include "tensor/tensor.h"

namespace poslab {

struct AttentionOptions {
  // Whether row i sees only the keys at or before its own position (j <= P_i): a decoder.
  bool causal = true;
  // The scores' factor; 0 stands for 1/sqrt(D), which keeps the scores' variance near 1 when q
  // and k have unit-variance entries. The op resolves it before the kernels see it.
  double scale = 0;
  // The position of query row 0; keys start at position 0. A full forward has q_pos0 = 0 and
  // Tq = Tk; one decoding step over a KV cache of Tk - Tq tokens has q_pos0 = Tk - Tq.
  int64_t q_pos0 = 0;
  // (H, Tq+Tk-1) or undefined: S[b,h,i,j] += rel_bias[h, j - i + Tq - 1], a bias of the head and
  // the relative position j - P_i only (ALiBi, T5). May require grad: the backward then gives
  // dbias[h, c] = sum over b and over the (i, j) with j - i + Tq - 1 = c of dL/dS[b,h,i,j].
  Tensor rel_bias;
  // (Bb, H, Tq, Tk) or undefined, Bb = 1 (shared by the batch) or B: S[b,h,i,j] += bias[b or 0,
  // h, i, j], a bias of each (query, key) pair, for what no relative table can hold: FIRE's bias
  // reads the query's own position; under random positions (--random-positions) each sequence
  // has its own distances. Tq x Tk per head, so only where it must be: a relative bias uses
  // rel_bias. May require grad: the backward gives dbias (Bb,H,Tq,Tk) = dL/dS, summed over b
  // when Bb = 1. The CPU only (the GPU kernels refuse it).
  Tensor bias;
  // The same per-pair bias made row by row (posenc/pair_bias_rows.h), or null: the kernels ask
  // it for each score row as they reach it, so no (Bb,H,Tq,Tk) tensor exists. It has no
  // gradient (evaluation, generation); added after `bias` when both are given. The CPU only.
  std::shared_ptr<const PairBiasRows> bias_rows;
  // (Tq, D/2) f64 or undefined: scores made with each key rotated relative to its query by
  // row i's own frequencies (RoPE with per-row frequencies, dynamic scaling), pairs (2p, 2p+1):
  //   S[b,h,i,j] = scale * sum_p (q_2p, q_2p+1) . R((j - P_i) w[i,p]) (k_2p, k_2p+1)
  // Evaluation only: with row_freqs the op refuses inputs that require grad.
  Tensor row_freqs;
  // Evaluation-time interventions (docs/evaluation.md), both off by default:
  // window > 0: key j is visible to query row i only if |P_i - j| < window, on top of the
  //   causal mask (a sliding attention window; no distance >= window is ever seen).
  // log_scale_len = T0 > 0: row i's scores, bias included, are multiplied by
  //   lambda_i = max(1, ln(n_i) / ln(T0)) before the mask and the softmax, n_i = the number of
  //   keys row i may attend to after the masks (causal, no window: P_i + 1). Rows that see at
  //   most T0 keys are unchanged ("log-n" scaling, Chiang & Cholak 2022).
  int64_t window = 0;
  int64_t log_scale_len = 0;
};

}  // namespace poslab
