// attention_op.h — causal multi-head attention as one fused op.
//
//   q: (B,Tq,H,D)  k, v: (B,Tk,H,D)  ->  out: (B,Tq,H,D)
//   S[b,h,i,j] = scale * q[b,i,h] . k[b,j,h] + bias[h,i,j]      scale = 1/sqrt(D)
//   S[b,h,i,j] = -inf where j > P_i (causal)                    P_i = q_pos0 + i
//   P = softmax_j(S);   out[b,i,h] = sum_j P[b,h,i,j] v[b,j,h]
// bias[h,i,j] = -m_h (P_i - j) with ALiBi slopes m_h (|P_i - j| without the mask), else 0.
// Query row i sits at position q_pos0 + i and key j at position j: with q_pos0 = Tk - Tq this
// is one decoding step over a KV cache.
//
// q, k, v may be strided views (the q/k/v column blocks of the fused c_attn output): each
// (b,h) slice is a (T, D) matrix with row stride strides[1], handed to BLAS as is.
//
// Rows are processed in blocks of 64 queries, so memory is O(64 Tk) per thread and no T x T
// matrix per head is ever materialised, in training too: the forward saves only each row's
// log-sum-exp (B,H,Tq), and backward rebuilds P block by block from it (FlashAttention-2's
// recomputation), so training memory also grows linearly in T.
#pragma once
#include <vector>

#include "autograd/ops.h"

namespace poslab {

struct AttentionOptions {
  bool causal = true;
  double scale = 0;                  // 0: 1/sqrt(D)
  std::vector<double> alibi_slopes;  // one per head; empty: no bias
  int64_t q_pos0 = 0;                // position of query row 0; keys start at position 0
};

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt);

// The same attention composed from primitive differentiable ops (matmul, softmax, where,
// ...): the unfused reference the fused op is tested against.
Tensor attention_reference(const Tensor& q, const Tensor& k, const Tensor& v,
                           const AttentionOptions& opt);
// Its first half: the attention probabilities P (B,H,Tq,Tk) (for plots of attention maps).
Tensor attention_probs_reference(const Tensor& q, const Tensor& k, const AttentionOptions& opt);

}  // namespace poslab
