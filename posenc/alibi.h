// alibi.h — Attention with Linear Biases (Press, Smith & Lewis, "Train Short, Test Long",
// ICLR 2022).
//
// No embedding and no rotation: each head h adds a fixed, distance-proportional penalty to
// its attention scores, after the 1/sqrt(D) scaling and before the softmax (docs/model.md):
//
//   scores[h, i, j] = q_i . k_j / sqrt(D)  -  m_h (i - j)        j <= i (causal)
//                                          -  m_h |i - j|        (causal = false)
//
// Both are one formula, -m_h |r| of the relative position r = j - P_i (the masked j > i never
// reach the softmax). It depends only on (h, r), so ALiBi hands attention a relative-bias
// table (posenc.h, AttentionTerms::rel_bias) of H x (Tq + Tk - 1) entries; the attention
// kernels (CPU and CUDA) and the composed reference read the table and know no formula.
//
// Slopes (paper, section 3): for H a power of two, m_h = 2^(-8(h+1)/H), a geometric sequence
// from 2^(-8/H) down to 2^-8. Otherwise take the slopes of the closest lower power of two
// n, then every other slope of the 2n sequence, starting with its first, until H are chosen
// (H = 6: 2^-2, 2^-4, 2^-6, 2^-8, 2^-1, 2^-3).
//
// Far from position 0. Softmax is unchanged by a constant added to a whole row of scores, so
// the table subtracts from each head's entries the bias nearest to zero it holds:
//   rel_bias[h, c] = -m_h (|r_c| - min_c' |r_c'|)
// Queries at positions in the millions then get entries of at most m_h (Tq + Tk), exact in
// f32, instead of -m_h P (about -6e4 at P = 1e6 for m = 1/16), which would swamp the scores.
//
// Backward. The bias is a constant added to the scores: S = s(q,k) + bias, so dL/dq and dL/dk
// are exactly those without it, and the bias gets no gradient (the slopes are fixed; the
// table does not require grad). Tests: "gradcheck: alibi: ..." (tests/nn/gradcheck_nn.cpp).
#pragma once
#include <string>

#include "posenc/posenc.h"

namespace poslab {

std::vector<double> alibi_slopes(int64_t n_head);
// A slope as text: a power of two 2^-k as "1/2^k" ("1/4", "1/256"), others as "%.3g".
std::string alibi_slope_text(double m);

// The bias table for queries at q_pos0 .. q_pos0+Tq-1 and keys at 0 .. Tk-1: (H, Tq+Tk-1),
// column c for the relative position r_c = c - (Tq - 1) - q_pos0, in `dtype` on the CPU.
Tensor alibi_bias(const std::vector<double>& slopes, int64_t q_pos0, int64_t Tq, int64_t Tk,
                  DType dtype = DType::f64);

// What ALiBi builds for one forward (ALiBi::build), read by ALiBi alone: the relative-bias table
// of the context's positions, or under random positions the per-pair bias (each sequence has
// its own distances); one of the two is defined.
struct AlibiTables final : SchemeTables {
  Tensor rel_bias;   // (H, Tq+Tk-1), handed on as AttentionTerms::rel_bias
  Tensor pair_bias;  // random positions: (Bp, H, Tq, Tk), handed on as AttentionTerms::bias
};

class ALiBi final : public PositionalEncoding {
 public:
  // causal: the distances of random positions (without the mask, n = |P_i - P_j|)
  explicit ALiBi(int64_t n_head, bool causal = true)
      : slopes_(alibi_slopes(n_head)), causal_(causal) {}
  PeKind kind() const override { return PeKind::alibi; }
  // q and k as given, and the bias table of the forward's positions (AlibiTables), built once
  // for every layer (build) and copied to the GPU there.
  AttentionTerms attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                 const PositionContext& ctx) const override;
  const std::vector<double>& slopes() const { return slopes_; }

 protected:
  std::shared_ptr<const SchemeTables> build(const PositionContext& ctx, DType dtype,
                                            Device device) const override;

 private:
  std::vector<double> slopes_;
  bool causal_;
};

}  // namespace poslab
