// sinusoidal.h — the fixed sin/cos table of "Attention Is All You Need" (Vaswani et al.,
// 2017, section 3.5):
//
//   PE[p, 2i]   = sin(p / 10000^(2i/C))
//   PE[p, 2i+1] = cos(p / 10000^(2i/C))          x[b, t, :] += PE[pos0 + t, :]
//
// No parameters and no gradient (the table is a constant). Any length works: the rows a
// forward needs are computed in double, once per forward (build), then rounded to the model's
// dtype.
#pragma once
#include "posenc/posenc.h"

namespace poslab {

// Rows pos0 .. pos0+n-1 of the table, in double precision: (n, C).
Tensor sinusoidal_table(int64_t d_model, int64_t pos0, int64_t n);

// What the sinusoidal scheme builds for one forward (SinusoidalPE::build), read by it alone: the
// table rows of the query positions offset + q_pos0 + [0, Tq), (Tq, C), or (Bp, Tq, C) under
// random positions (each sequence the rows of its own drawn positions).
struct SinusoidalTables final : SchemeTables {
  Tensor pe;
};

class SinusoidalPE final : public PositionalEncoding {
 public:
  explicit SinusoidalPE(int64_t d_model) : d_(d_model) {}
  PeKind kind() const override { return PeKind::sinusoidal; }
  // x: (B,T,C) -> x + the table rows of positions ctx.offset + ctx.q_pos0 + [0, T)
  Tensor add_to_embeddings(const Tensor& x, const PositionContext& ctx) const override;
  // The table rows [0, n) in double precision: (n, C).
  Tensor table(int64_t n) const { return sinusoidal_table(d_, 0, n); }

 protected:
  std::shared_ptr<const SchemeTables> build(const PositionContext& ctx, DType dtype,
                                            Device device) const override;

 private:
  int64_t d_;
};

}  // namespace poslab
