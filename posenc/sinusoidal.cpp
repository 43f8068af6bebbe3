#include "posenc/sinusoidal.h"

#include <cmath>

namespace poslab {

//   PE[p, 2i] = sin(p / 10000^(2i/C)),  PE[p, 2i+1] = cos(p / 10000^(2i/C))
// The row of position p, into row[0..C).
static void sinusoidal_row(int64_t C, int64_t p, double* row) {
  for (int64_t c = 0; c < C; ++c) {
    int64_t i2 = c - c % 2;  // 2i
    double a = static_cast<double>(p) / std::pow(10000.0, static_cast<double>(i2) / C);
    row[c] = c % 2 == 0 ? std::sin(a) : std::cos(a);
  }
}

Tensor sinusoidal_table(int64_t d_model, int64_t pos0, int64_t n) {
  std::vector<double> v(n * d_model);
  for (int64_t t = 0; t < n; ++t) sinusoidal_row(d_model, pos0 + t, v.data() + t * d_model);
  return Tensor::from_vector(v, {n, d_model}, DType::f64);
}

// The rows of the query positions, in the model's dtype on its device: once per forward.
// Under random positions, (Bp, Tq, C): each sequence the rows of its own drawn positions.
std::shared_ptr<const SchemeTables> SinusoidalPE::build(const PositionContext& ctx, DType dtype,
                                                        Device device) const {
  auto t = std::make_shared<SinusoidalTables>();
  if (!ctx.random()) {
    t->pe = sinusoidal_table(d_, ctx.offset + ctx.q_pos0, ctx.Tq).to(dtype).to(device);
    return t;
  }
  const int64_t R = ctx.rows(), T = ctx.Tq;
  std::vector<double> v(R * T * d_);
  for (int64_t b = 0; b < R; ++b)
    for (int64_t t = 0; t < T; ++t)
      sinusoidal_row(d_, ctx.position(b, t), v.data() + (b * T + t) * d_);
  t->pe = Tensor::from_vector(v, {R, T, d_}, dtype).to(device);
  return t;
}

Tensor SinusoidalPE::add_to_embeddings(const Tensor& x, const PositionContext& ctx) const {
  const Tensor& pe = tables_of<SinusoidalTables>(ctx, "sinusoidal").pe;
  if (x.dim() != 3 || x.size(1) != pe.size(pe.dim() - 2))
    fail("sinusoidal: expected x (B,T,C) with the context's T = ", ctx.Tq, " positions, but got ",
         shape_str(x.shape()));
  return add(x, pe);  // the table requires no grad: a constant
}

}  // namespace poslab
