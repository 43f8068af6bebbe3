#include "posenc/kerple.h"

#include <algorithm>
#include <cmath>

namespace poslab {

Tensor kerple_bias(const Tensor& p, const Tensor& a, const std::vector<double>& n) {
  if (p.dim() != 1 || a.shape() != p.shape())
    fail("kerple: expected bias_p and bias_a of shape (H), but got ", shape_str(p.shape()), " and ",
         shape_str(a.shape()));
  const int64_t H = p.size(0), N = static_cast<int64_t>(n.size());
  const std::vector<double> pv = p.to_vector(), av = a.to_vector();
  //   bias[h, c] = -p_h ln(1 + a_h n_c)
  std::vector<double> out(H * N);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t c = 0; c < N; ++c) out[h * N + c] = -pv[h] * std::log1p(av[h] * n[c]);
  Tensor y = Tensor::from_vector(out, {H, N}, p.dtype()).to(p.device());
  // backward (kerple.h): dp_h = -sum_c G[h,c] ln(1 + a_h n_c),
  //                      da_h = -sum_c G[h,c] p_h n_c / (1 + a_h n_c)
  return record("kerple_bias", y, {&p, &a}, [pv, av, n, p, H, N](const Tensor& dy) {
    const std::vector<double> g = dy.to_vector();
    std::vector<double> dp(H, 0.0), da(H, 0.0);
    for (int64_t h = 0; h < H; ++h)
      for (int64_t c = 0; c < N; ++c) {
        dp[h] -= g[h * N + c] * std::log1p(av[h] * n[c]);
        da[h] -= g[h * N + c] * pv[h] * n[c] / (1 + av[h] * n[c]);
      }
    return std::vector<Tensor>{Tensor::from_vector(dp, {H}, p.dtype()).to(p.device()),
                               Tensor::from_vector(da, {H}, p.dtype()).to(p.device())};
  });
}

Kerple::Kerple(int64_t n_head, Generator& gen, DType dtype) {
  if (n_head <= 0) fail("kerple: expected at least one head, but got ", n_head);
  // drawn in this order, p then a, from the model's generator (docs/model.md)
  p_ = Tensor::uniform({n_head}, gen, 0, 2, dtype);
  a_ = Tensor::uniform({n_head}, gen, 0, 1, dtype);
  p_.set_requires_grad(true), a_.set_requires_grad(true);
  project();
}

// The authors' projection: p, a = max(p, 0.01), max(a, 0.01), in place, outside the graph.
void Kerple::project() {
  NoGrad no_grad;
  for (Tensor* t : {&p_, &a_}) {
    std::vector<double> v = t->to_vector();
    for (double& x : v) x = std::max(x, 0.01);
    t->copy_(Tensor::from_vector(v, t->shape(), t->dtype()).to(t->device()));
  }
}

// Relative table: column c holds the relative position r_c = c - (Tq-1) - q_pos0 = j - P_i, so
// the distance n_c = -r_c (causal: max(n_c, 0), masked pairs 0; else |r_c|). Random positions:
// the per-pair distances of every sequence, (H, Bp Tq Tk) -> (Bp, H, Tq, Tk).
AttentionTerms Kerple::attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                       const PositionContext& ctx) const {
  const int64_t Tq = q.size(1), Tk = k.size(1), H = p_.size(0);
  if (ctx.random()) {
    Tensor b = kerple_bias(p_, a_, ctx.distances(causal));  // (H, Bp*Tq*Tk)
    return {.q = q, .k = k, .bias = transpose(reshape(b, {H, ctx.rows(), Tq, Tk}), 0, 1)};
  }
  const int64_t W = Tq + Tk - 1, r_lo = -(Tq - 1) - ctx.q_pos0;
  std::vector<double> n(W);
  for (int64_t c = 0; c < W; ++c) {
    const int64_t d = -(r_lo + c);
    n[c] = static_cast<double>(causal ? std::max<int64_t>(d, 0) : std::abs(d));
  }
  return {.q = q, .k = k, .rel_bias = kerple_bias(p_, a_, n)};
}

}  // namespace poslab
