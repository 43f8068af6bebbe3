// attention_op.h — multi-head attention as one fused, differentiable op.
//
//   q: (B,Tq,H,D)  k, v: (B,Tk,H,D)  ->  out: (B,Tq,H,D)
//   S[b,h,i,j] = scale * q[b,i,h] . k[b,j,h] + rel_bias[h, j - i + Tq - 1]    scale = 1/sqrt(D)
//                                             + bias[b,h,i,j]   (a per-pair bias: FIRE, or
//                                               a relative bias under random positions; as
//                                               a tensor, or made row by row: bias_rows)
//   S[b,h,i,j] = -inf where j > P_i (causal)                                  P_i = q_pos0 + i
//     (and where |P_i - j| >= window; each row first scaled by lambda_i: attention_options.h)
//   P = softmax_j(S);   out[b,i,h] = sum_j P[b,h,i,j] v[b,j,h]
// Query row i sits at position P_i and key j at position j: with q_pos0 = Tk - Tq this is one
// decoding step over a KV cache. The options, field by field: attention_options.h. The
// positional scheme enters only through the options' biases and row_freqs, which it makes
// (posenc.h, PositionalEncoding::attention_terms); this op never asks which scheme made them.
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
#include "autograd/ops.h"
#include "nn/attention_options.h"

namespace poslab {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt);

// The same attention as plain loops over its math, forward and hand-derived backward
// (nn/attention_reference.cpp, in double, slow): the reference the fused op is tested against,
// gradients included (rel_bias too); every option, row_freqs in forward only.
Tensor attention_reference(const Tensor& q, const Tensor& k, const Tensor& v,
                           const AttentionOptions& opt);
// Its first half: the attention probabilities P (B,H,Tq,Tk) (for plots of attention maps).
Tensor attention_probs_reference(const Tensor& q, const Tensor& k, const AttentionOptions& opt);

}  // namespace poslab
