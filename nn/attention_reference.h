// attention_reference.h — attention as plain loops on arrays of doubles (the math and its
// hand-derived backward: attention_reference.cpp). The fused kernels are tested against these
// loops; the model's attention layer is written out again in nn/gpt_reference.cpp, which needs
// no file but its own.
// The Tensor-level entry points (with an autograd node) are in attention_op.h.
#pragma once
#include <vector>

#include "nn/attention_options.h"

namespace poslab {

// One attention problem as row-major doubles. Row (b, t, h) of q (T = Tq) or of k, v (T = Tk)
// starts at at(T, b, t, h): q (B,Tq,H,D), k and v (B,Tk,H,D).
struct AttentionProblem {
  int64_t B = 0, Tq = 0, Tk = 0, H = 0, D = 0;
  std::vector<double> q, k, v;
  std::vector<double> bias;   // (H, Tq+Tk-1): s_ij += bias[h, j - i + Tq - 1], or empty
  std::vector<double> pair;   // (Bp, H, Tq, Tk): s_ij += pair[b or 0, h, i, j], or empty
  int64_t Bp = 0;             // pair's batch: 1 (shared) or B
  std::vector<double> freqs;  // (Tq, D/2): RoPE per-row frequencies (forward only), or empty
  AttentionOptions o;         // its scale > 0; its tensors unused (the arrays above hold them)
  int64_t at(int64_t T, int64_t b, int64_t t, int64_t h) const { return ((b * T + t) * H + h) * D; }
  int64_t pair_at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return (((Bp == 1 ? 0 : b) * H + h) * Tq + i) * Tk + j;
  }
};

// dq, dk, dv like q, k, v; dbias like bias (summed over the batch), empty without one; dpair
// like pair (summed over the batch when Bp = 1).
struct AttentionProblemGrads {
  std::vector<double> dq, dk, dv, dbias, dpair;
};

// out (B,Tq,H,D): out_i = sum_j p_ij v_j.
std::vector<double> attention_reference_forward(const AttentionProblem& p);
// The weights p_ij themselves, (B,H,Tq,Tk): 0 where row i does not see key j.
std::vector<double> attention_reference_probs(const AttentionProblem& p);
// The gradients from dout = dL/dout (B,Tq,H,D). Not with freqs.
AttentionProblemGrads attention_reference_backward(const AttentionProblem& p,
                                                   const std::vector<double>& dout);

}  // namespace poslab
