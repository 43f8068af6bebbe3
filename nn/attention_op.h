// attention_op.h — multi-head attention as one fused, differentiable op.
//
//   q: (B,Tq,H,D)  k, v: (B,Tk,H,D)  ->  out: (B,Tq,H,D)
//   S[b,h,i,j] = scale * q[b,i,h] . k[b,j,h] + rel_bias[h, j - i + Tq - 1]    scale = 1/sqrt(D)
//                                             + bias[b,h,i,j]   (a per-pair bias: FIRE, or
//                                               a relative bias under random positions; as
//                                               a tensor, or made row by row: bias_rows)
//   S[b,h,i,j] = -inf where j > P_i (causal)                                  P_i = q_pos0 + i
//     (and where |P_i - j| >= window; each row first scaled by lambda_i: options below)
//   P = softmax_j(S);   out[b,i,h] = sum_j P[b,h,i,j] v[b,j,h]
// Query row i sits at position P_i and key j at position j: with q_pos0 = Tk - Tq this is one
// decoding step over a KV cache. The positional scheme enters only through the options'
// rel_bias and row_freqs, which it makes (posenc.h, PositionalEncoding::attention_terms); this
// op never asks which scheme made them.
//
// q, k, v may be strided views (the q/k/v column blocks of the fused c_attn output): each
// (b,h) slice is a (T, D) matrix with row stride strides[1], read as is.
//
// The op checks the shapes, records one autograd node and runs the kernels of the inputs'
// device (nn/attention_kernels.h: the CPU's in attention_kernels.cpp; the GPU's in
// attention_kernels.cu). The same math as plain loops, with the backward derived by hand:
// attention_reference.cpp. No T x T matrix per head is ever materialised, in training either:
// the forward saves only each row's log-sum-exp (B,H,Tq), and the backward rebuilds P tile by
// tile from it (FlashAttention-2's recomputation), so memory grows linearly in T.
#pragma once
#include <memory>

#include "autograd/ops.h"
#include "posenc/pair_bias_rows.h"

namespace poslab {

struct AttentionOptions {
  bool causal = true;
  double scale = 0;    // 0: 1/sqrt(D)
  int64_t q_pos0 = 0;  // position of query row 0; keys start at position 0
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

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt);

// The same attention as plain loops over its math, forward and hand-derived backward
// (nn/attention_reference.cpp, in double, slow): the reference the fused op is tested against,
// gradients included (rel_bias too); every option, row_freqs in forward only.
Tensor attention_reference(const Tensor& q, const Tensor& k, const Tensor& v,
                           const AttentionOptions& opt);
// Its first half: the attention probabilities P (B,H,Tq,Tk) (for plots of attention maps).
Tensor attention_probs_reference(const Tensor& q, const Tensor& k, const AttentionOptions& opt);

}  // namespace poslab
