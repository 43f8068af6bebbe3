// sinusoidal.h — the fixed sin/cos table of "Attention Is All You Need" (Vaswani et al.,
// 2017, section 3.5):
//
//   PE[p, 2i]   = sin(p / 10000^(2i/C))
//   PE[p, 2i+1] = cos(p / 10000^(2i/C))          x[b, t, :] += PE[pos0 + t, :]
//
// No parameters and no gradient (the table is a constant). Any length works: the table is
// computed once, in double, and grown (recomputed) only when a longer window asks for it.
#pragma once
#include "posenc/posenc.h"

namespace poslab {

class SinusoidalPE final : public PositionalEncoding {
 public:
  explicit SinusoidalPE(int64_t d_model) : d_(d_model) {}
  PeKind kind() const override { return PeKind::sinusoidal; }
  Tensor add_to_embeddings(const Tensor& x, int64_t pos0) const override;
  // The table rows [0, n) in double precision: (n, C).
  Tensor table(int64_t n) const;

 private:
  int64_t d_;
  mutable Tensor cache_f64_, cache_f32_;  // (rows, C)
  mutable Tensor cache_device_;           // a copy on the GPU, of the last dtype used there
};

}  // namespace poslab
