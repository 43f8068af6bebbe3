// xpos.h — xPos, RoPE with a decay (Sun, Dong, Patra, Ma, Huang, Benhaim, Chaudhary, Song &
// Wei, "A Length-Extrapolatable Transformer", ACL 2023; the authors' torchscale code).
//
// RoPE (rope.h: either layout, all D dims, theta) and then, for pair i of a head,
//
//   query at position p:  both dims of pair i  *=  zeta_i^( p / B)
//   key   at position p:  both dims of pair i  *=  zeta_i^(-p / B)
//   zeta_i = (2i/D + 0.4) / 1.4,  i = 0..D/2-1,   B = 512 (--xpos-scale-base)
//
// so pair i's share of q' . k' is multiplied by zeta_i^((p_q - p_k) / B): a decay with
// distance, on top of RoPE's rotation. zeta_i < 1 for every pair, smallest for the fast pairs
// (zeta_0 = 0.29), near 1 for the slow ones (zeta_15 = 0.955 at D = 32): the fast pairs,
// which alias soonest, are damped most. At B = 512 a distance of 256 scales pair 0 by
// 0.29^0.5 = 0.53 and pair 15 by 0.955^0.5 = 0.98. The centre of the exponent is 0 (the paper's
// form; torchscale centres it at ceil(T/2), which changes q and k but not their product).
//
// The factor folds into RoPE's tables: cos and sin of pair i at position p carry the amplitude
// zeta_i^(+p/B) for queries and zeta_i^(-p/B) for keys, so q and k are rotated with two sets of
// tables (XPosTables below: cos_q, sin_q and cos, sin) by the same op, rope_rotate. Its
// backward, R^T dy, holds for any such scaled rotation (rope.h). Far from 0 the key's factor
// zeta_0^(-p/B) grows as 3.5^(p/B): at p/B = 64 it is 7e34, near float's limit 3.4e38, so a
// position past 64 B (with --position-offset P: P + L - 1) is an error naming it and B.
// RoPE scaling, --rope-fraction < 1 and causal = false with xpos are errors. Tests:
// "gradcheck: xpos ...", "xpos: q'.k' decays as zeta^(n/B) times RoPE's" (tests/posenc/).
#pragma once
#include "posenc/rope.h"

namespace poslab {

// zeta_i for i < D/2.
std::vector<double> xpos_zeta(int64_t D);

// What xPos builds for one forward (XPos::build), read by xPos alone: RoPE's tables with the
// decay folded in, one set for the keys and one for the queries, each (Tk, D/2) for positions
// offset + [0, Tk) ((Bp, Tk, D/2) under random positions).
struct XPosTables final : SchemeTables {
  Tensor cos, sin;      // the keys': amplitude zeta_i^(-p/B)
  Tensor cos_q, sin_q;  // the queries': amplitude zeta_i^(+p/B)
};

class XPos final : public PositionalEncoding {
 public:
  XPos(int64_t head_dim, double theta, double scale_base, RopeLayout layout);
  PeKind kind() const override { return PeKind::xpos; }
  // q rotated and grown by its position, k rotated and shrunk by its own.
  AttentionTerms attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                 const PositionContext& ctx) const override;
  double scale_base() const { return B_; }

 protected:
  // The key and query tables of positions [0, Tk) (or the drawn ones): both sets, once per
  // forward.
  std::shared_ptr<const SchemeTables> build(const PositionContext& ctx, DType dtype,
                                            Device device) const override;

 private:
  int64_t d_;
  double theta_, B_;
  RopeLayout layout_;
};

}  // namespace poslab
