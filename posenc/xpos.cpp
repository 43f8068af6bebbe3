#include "posenc/xpos.h"

#include <cmath>

namespace poslab {

std::vector<double> xpos_zeta(int64_t D) {
  std::vector<double> z(D / 2);
  for (int64_t i = 0; i < D / 2; ++i) z[i] = (2.0 * i / D + 0.4) / 1.4;
  return z;
}

XPos::XPos(int64_t head_dim, double theta, double scale_base, RopeLayout layout)
    : d_(head_dim), theta_(theta), B_(scale_base), layout_(layout) {
  validate_rope(head_dim, theta, 1);
  if (!(scale_base > 0)) fail("--xpos-scale-base: expected B > 0, but got ", scale_base);
}

// cos/sin of pair i at position p, times zeta_i^(sign p / B): sign +1 for queries, -1 keys.
static void xpos_tables(const std::vector<double>& freq, const std::vector<double>& zeta,
                        const std::vector<int64_t>& pos, Shape shape, double B, double sign,
                        DType dtype, Tensor* cos, Tensor* sin) {
  const int64_t half = static_cast<int64_t>(freq.size()), N = static_cast<int64_t>(pos.size());
  std::vector<double> c(N * half), s(N * half);
  for (int64_t t = 0; t < N; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double p = static_cast<double>(pos[t]), a = p * freq[i];
      const double amp = std::pow(zeta[i], sign * p / B);
      c[t * half + i] = amp * std::cos(a), s[t * half + i] = amp * std::sin(a);
    }
  shape.push_back(half);
  *cos = Tensor::from_vector(c, shape, dtype), *sin = Tensor::from_vector(s, shape, dtype);
}

std::shared_ptr<const SchemeTables> XPos::build(const PositionContext& ctx, DType dtype,
                                                Device device) const {
  if (ctx.scaling.kind != ScalingKind::none)
    fail("--rope-scaling: ", scaling_name(ctx.scaling.kind), " does not apply to pe = xpos");
  std::vector<int64_t> pos;
  Shape shape{ctx.Tk};
  if (ctx.random()) {
    pos.assign(ctx.positions.data.begin(), ctx.positions.data.end());
    shape = {ctx.rows(), ctx.Tk};
  } else {
    for (int64_t t = 0; t < ctx.Tk; ++t) pos.push_back(ctx.offset + t);
  }
  int64_t last = 0;
  for (int64_t p : pos) last = std::max(last, p);
  if (static_cast<double>(last) / B_ > 64)
    fail("xpos: position ", last, " is past 64 B = ", 64 * B_, " (--xpos-scale-base B = ", B_,
         "), where the key's factor zeta_0^(-p/B) leaves float range; use a shorter window ",
         "or a smaller --position-offset");
  const std::vector<double> freq = rope_base_frequencies(d_, theta_), zeta = xpos_zeta(d_);
  auto t = std::make_shared<XPosTables>();
  xpos_tables(freq, zeta, pos, shape, B_, -1, dtype, &t->cos, &t->sin);
  xpos_tables(freq, zeta, pos, shape, B_, +1, dtype, &t->cos_q, &t->sin_q);
  for (Tensor* x : {&t->cos, &t->sin, &t->cos_q, &t->sin_q}) *x = x->to(device);
  return t;
}

AttentionTerms XPos::attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                     const PositionContext& ctx) const {
  if (!causal) fail("xpos: expected a causal model (its decay assumes keys before queries)");
  if (q.dim() != 4 || q.size(3) != d_ || q.size(1) != ctx.Tq || k.size(1) != ctx.Tk)
    fail("xpos: expected q (B,Tq,H,D) and k (B,Tk,H,D) with D = ", d_, ", Tq = ", ctx.Tq,
         " and Tk = ", ctx.Tk, ", but got q ", shape_str(q.shape()), " and k ",
         shape_str(k.shape()));
  const XPosTables& t = tables_of<XPosTables>(ctx, "xpos");
  return {.q = rope_rotate_rows(q, t.cos_q, t.sin_q, ctx.q_pos0, layout_),
          .k = rope_rotate_rows(k, t.cos, t.sin, 0, layout_)};
}

}  // namespace poslab
