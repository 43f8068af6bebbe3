// kerple.h — KERPLE, the logarithmic kernel (Chi, Fan, Ramadge & Rudnicky, "KERPLE: Kernelized
// Relative Positional Embedding for Length Extrapolation", NeurIPS 2022; the authors' GPT-NeoX
// code).
//
// Like ALiBi, a bias of the distance n = i - j added to every score after the 1/sqrt(D)
// scaling, but learned and bent:
//
//   scores[h, i, j] = q_i . k_j / sqrt(D)  -  p_h ln(1 + a_h n)          n = i - j >= 0
//
// ALiBi's line -m n becomes a logarithm: the penalty still grows without end (far keys fade),
// but ever more slowly, so a key at distance 2n costs only p ln 2 more than one at n once
// a n >> 1. p_h sets the strength, a_h where the curve bends from linear (a n << 1: about
// -p a n, ALiBi with slope p a) to logarithmic. Both are learned, one pair per head, shared by
// every layer (the authors pass one module to all layers): two vectors of [H],
// transformer.kerple.bias_p and transformer.kerple.bias_a. Masked pairs (j > i) take n = 0.
// Without the causal mask, n = |i - j|.
//
// Init p_h ~ U(0, 2), a_h ~ U(0, 1). Both must stay positive (a negative a makes 1 + a n
// reach 0; a negative p rewards distance), so after initialisation and after every optimizer
// step both are clamped to >= 0.01, as the authors' code does: a projection, no gradient flows
// through it (project()).
//
// Like T5 it hands attention one table per head of every relative position (H, Tq + Tk - 1)
// (posenc.h): O(H T), never T x T. Under random positions the distances differ per sequence,
// and the bias is a (Bp, H, T, T) per-pair one.
//
// Backward (hand-derived). With G[h, c] = dL/dbias[h, c], what attention hands back (the sum
// of dL/dscores over the pairs of the table entry: one diagonal i - j = n_c, over the batch),
// and bias[h, c] = -p_h ln(1 + a_h n_c):
//   dL/dp_h = -sum_c G[h, c] ln(1 + a_h n_c)
//   dL/da_h = -sum_c G[h, c] p_h n_c / (1 + a_h n_c)       (d/da ln(1 + a n) = n / (1 + a n))
// Both sum over every layer that reads the table (autograd adds the layers' contributions).
// Tests: "gradcheck: kerple: ..." (tests/nn/test_new_schemes.cpp).
#pragma once
#include "posenc/posenc.h"

namespace poslab {

// bias[h, c] = -p_h ln(1 + a_h n_c) for the N distances n (any shape, N values >= 0): p, a (H)
// -> (H, N). Differentiable in p and a (the formulas above).
Tensor kerple_bias(const Tensor& p, const Tensor& a, const std::vector<double>& n);

class Kerple final : public PositionalEncoding {
 public:
  Kerple(int64_t n_head, Generator& gen, DType dtype = DType::f32);
  PeKind kind() const override { return PeKind::kerple; }
  // q and k as given; the table of the forward's relative positions (or, under random
  // positions, the per-pair bias), computed from p and a at every call: a gradient path per
  // layer.
  AttentionTerms attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                 const PositionContext& ctx) const override;
  std::vector<std::pair<std::string, Tensor>> parameters() const override {
    return {{"transformer.kerple.bias_p", p_}, {"transformer.kerple.bias_a", a_}};
  }
  void to(Device device) override { p_ = parameter_to(p_, device), a_ = parameter_to(a_, device); }
  void project() override;  // p, a >= 0.01
  const Tensor& p() const { return p_; }
  const Tensor& a() const { return a_; }

 private:
  Tensor p_, a_;  // (H), (H)
};

}  // namespace poslab
