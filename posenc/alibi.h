// alibi.h — Attention with Linear Biases (Press, Smith & Lewis, "Train Short, Test Long",
// ICLR 2022).
//
// No embedding and no rotation: each head h adds a fixed, distance-proportional penalty to
// its attention scores, after the 1/sqrt(D) scaling and before the softmax (SPEC 1-2):
//
//   scores[h, i, j] = q_i . k_j / sqrt(D)  -  m_h (i - j)        j <= i (causal)
//                                          -  m_h |i - j|        (causal = false)
//
// Slopes (paper, section 3): for H a power of two, m_h = 2^(-8(h+1)/H), a geometric sequence
// from 2^(-8/H) down to 2^-8. Otherwise take the slopes of the closest lower power of two
// n, then every other slope of the 2n sequence, starting with its first, until H are chosen
// (H = 6: 2^-2, 2^-4, 2^-6, 2^-8, 2^-1, 2^-3).
//
// Backward. The bias is a constant added to the scores: S = s(q,k) + bias, so
// dL/dq and dL/dk are exactly those without it, and the bias itself gets no gradient (the
// slopes are fixed). The bias is applied inside the fused attention op
// (nn/attention_op.cpp), which therefore needs no extra backward term; the test
// "gradcheck: attention with ALiBi" checks it.
#pragma once
#include "posenc/posenc.h"

namespace poslab {

std::vector<double> alibi_slopes(int64_t n_head);

class ALiBi final : public PositionalEncoding {
 public:
  explicit ALiBi(int64_t n_head) : slopes_(poslab::alibi_slopes(n_head)) {}
  PeKind kind() const override { return PeKind::alibi; }
  std::vector<double> alibi_slopes() const override { return slopes_; }

 private:
  std::vector<double> slopes_;
};

}  // namespace poslab
