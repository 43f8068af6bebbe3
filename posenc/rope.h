// rope.h — Rotary Position Embedding (Su et al., "RoFormer", 2021), interleaved pairs.
//
// Inside each head (D dims), pair i = (x[2i], x[2i+1]), i = 0..D/2-1, is rotated by the angle
// a = p * freq_i with freq_i = theta^(-2i/D) (theta = 10000 by default):
//
//   x'[2i]   = x[2i] cos a - x[2i+1] sin a          [x'_2i  ]   [cos a  -sin a] [x_2i  ]
//   x'[2i+1] = x[2i] sin a + x[2i+1] cos a          [x'_2i+1] = [sin a   cos a] [x_2i+1]
//
// applied to q and k (not v) at their own positions, before the dot product. Why it encodes
// relative position: a rotation by angle a is orthogonal, R(a)^T R(b) = R(b - a), so
//   (R(m w) q) . (R(n w) k) = q . R((n - m) w) k
// depends on m - n only (test: "RoPE keeps norms, is the identity at position 0, and is
// relative", tests/posenc/test_posenc.cpp).
//
// Backward (hand-derived). Per pair, y = R x with R = [[c, -s], [s, c]] constant, so
//   dL/dx = R^T dL/dy = [[c, s], [-s, c]] dy:
//   dx[2i]   =  dy[2i] cos a + dy[2i+1] sin a
//   dx[2i+1] = -dy[2i] sin a + dy[2i+1] cos a
// i.e. the inverse rotation: the forward with the sine negated. One kernel, one sign
// (tests: "gradcheck: rope: ...", tests/posenc/gradcheck_posenc.cpp). It holds for any cos/sin
// table, including YaRN's, whose entries carry an amplitude (0.1 ln s + 1): R is then a scaled
// rotation, still R^T dy.
#pragma once
#include "posenc/posenc.h"
#include "posenc/rope_scaling.h"

namespace poslab {

// The differentiable RoPE op. x: (B,T,H,D) with any strides; cos, sin: (T, D/2) tables for
// the T positions of x. Returns a contiguous (B,T,H,D).
Tensor rope_rotate(const Tensor& x, const Tensor& cos, const Tensor& sin);

// cos/sin tables (T, D/2) for positions pos0..pos0+T-1 under `f` (frequencies, position
// scale and amplitude), built in double and returned in dtype.
void rope_tables(const RopeFrequencies& f, int64_t pos0, int64_t T, DType dtype, Tensor* cos,
                 Tensor* sin);

class RoPE final : public PositionalEncoding {
 public:
  RoPE(int64_t head_dim, double theta);
  PeKind kind() const override { return PeKind::rope; }
  // q and k rotated at their positions; with dynamic scaling, q and k as given and each query
  // row's own frequencies (row_freqs), since no single rotation of the keys serves every row.
  AttentionTerms attention_terms(const Tensor& q, const Tensor& k, int64_t q_pos0,
                                 bool causal) const override;
  // x: (B,T,H,D) (q or k) at positions pos0..pos0+T-1 in a context of length L (from which
  // the scaling picks s), rotated. Not for dynamic scaling.
  Tensor rotate(const Tensor& x, int64_t pos0, int64_t L) const;
  void set_scaling(const RopeScaling& s) override { scaling_ = s; }
  const RopeScaling& scaling() const { return scaling_; }
  int64_t head_dim() const { return d_; }
  double theta() const { return theta_; }

 private:
  int64_t d_;
  double theta_;
  RopeScaling scaling_;
  // The cos/sin tables of positions [0, rows) for the last frequencies, dtype and device
  // asked for: a forward rotates q and k of every layer with the same tables, so they are
  // built (and copied to the GPU) once, not 2 x layers times per step.
  struct Tables {
    RopeFrequencies f;
    DType dtype = DType::f32;
    Device device = Device::cpu;
    Tensor cos, sin;  // (rows, D/2)
  };
  mutable Tables tables_;
};

}  // namespace poslab
