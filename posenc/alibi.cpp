#include "posenc/alibi.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace poslab {

// m_h = 2^(-8(h+1)/n) for n a power of two
static std::vector<double> power_of_two_slopes(int64_t n) {
  std::vector<double> s(n);
  for (int64_t h = 0; h < n; ++h) s[h] = std::exp2(-8.0 * (h + 1) / n);
  return s;
}

std::vector<double> alibi_slopes(int64_t n_head) {
  if (n_head <= 0) fail("alibi: expected at least one head, but got ", n_head);
  int64_t n = 1;
  while (n * 2 <= n_head) n *= 2;  // closest power of two <= n_head
  std::vector<double> s = power_of_two_slopes(n);
  if (n == n_head) return s;
  std::vector<double> extra = power_of_two_slopes(2 * n);
  for (int64_t i = 0; static_cast<int64_t>(s.size()) < n_head; i += 2) s.push_back(extra[i]);
  return s;
}

std::string alibi_slope_text(double m) {
  const double k = -std::log2(m);
  char buf[32];
  if (k >= 0 && k < 31 && k == std::round(k))
    std::snprintf(buf, sizeof buf, "1/%lld", 1LL << static_cast<int>(k));
  else
    std::snprintf(buf, sizeof buf, "%.3g", m);
  return buf;
}

//   rel_bias[h, c] = -m_h (|r_c| - r_near),  r_c = c - (Tq - 1) - q_pos0
// r_near: the |r| nearest to zero among the table's relative positions (a per-head constant:
// softmax does not see it; alibi.h says why it is there).
Tensor alibi_bias(const std::vector<double>& slopes, int64_t q_pos0, int64_t Tq, int64_t Tk,
                  DType dtype) {
  int64_t H = static_cast<int64_t>(slopes.size()), W = std::max<int64_t>(Tq + Tk - 1, 0);
  int64_t r_lo = -(Tq - 1) - q_pos0, r_hi = Tk - 1 - q_pos0;
  int64_t r_near = r_lo > 0 ? r_lo : r_hi < 0 ? -r_hi : 0;
  std::vector<double> b(H * W);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t c = 0; c < W; ++c)
      b[h * W + c] = -slopes[h] * static_cast<double>(std::abs(r_lo + c) - r_near);
  return Tensor::from_vector(b, {H, W}, dtype);
}

// ctx.offset: ignored, the bias depends on i - j alone (a test says so). Under random
// positions each sequence has its own distances: a per-pair bias -m_h n, (Bp, H, Tq, Tk), with
// n = |P_i - P_j| without the causal mask, as the table's |r|.
std::shared_ptr<const SchemeTables> ALiBi::build(const PositionContext& ctx, DType dtype,
                                                 Device device) const {
  auto t = std::make_shared<AlibiTables>();
  if (!ctx.random()) {
    t->rel_bias = alibi_bias(slopes_, ctx.q_pos0, ctx.Tq, ctx.Tk, dtype).to(device);
    return t;
  }
  const std::vector<double> n = ctx.distances(causal_);  // masked pairs: 0
  const int64_t H = static_cast<int64_t>(slopes_.size()), R = ctx.rows(), TT = ctx.Tq * ctx.Tk;
  std::vector<double> b(R * H * TT);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t c = 0; c < TT; ++c) b[(r * H + h) * TT + c] = -slopes_[h] * n[r * TT + c];
  t->pair_bias = Tensor::from_vector(b, {R, H, ctx.Tq, ctx.Tk}, dtype).to(device);
  return t;
}

AttentionTerms ALiBi::attention_terms(const Tensor& q, const Tensor& k, bool /*causal*/,
                                      const PositionContext& ctx) const {
  const AlibiTables& t = tables_of<AlibiTables>(ctx, "alibi");
  if (t.pair_bias.defined()) return {.q = q, .k = k, .bias = t.pair_bias};
  if (q.size(1) != ctx.Tq || k.size(1) != ctx.Tk)
    fail("alibi: expected q and k of the context's Tq = ", ctx.Tq, " and Tk = ", ctx.Tk,
         " positions, but got q ", shape_str(q.shape()), " and k ", shape_str(k.shape()));
  return {.q = q, .k = k, .rel_bias = t.rel_bias};
}

}  // namespace poslab
