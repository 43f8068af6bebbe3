#include "posenc/t5.h"

#include <cmath>

namespace poslab {

void validate_t5(const T5Options& o) {
  int64_t min_buckets = o.causal ? 2 : 4;
  if (o.num_buckets < min_buckets)
    fail("--t5-buckets: expected at least ", min_buckets, " buckets (",
         o.causal ? "causal" : "bidirectional: two halves", ", max_exact >= 1), but got ",
         o.num_buckets);
  int64_t max_exact = (o.causal ? o.num_buckets : o.num_buckets / 2) / 2;
  if (o.max_distance <= max_exact)
    fail("--t5-max-distance: expected more than max_exact = ", max_exact,
         " (the exact buckets: num_buckets/2, num_buckets/4 without the causal mask), but got ",
         o.max_distance);
}

int64_t t5_bucket(int64_t n, const T5Options& o) {
  int64_t nb = o.num_buckets, base = 0;
  if (o.causal) {
    n = std::max<int64_t>(n, 0);
  } else {
    nb /= 2;
    if (n < 0) base = nb;  // j > i: the future half of the table
    n = std::abs(n);
  }
  int64_t max_exact = nb / 2;
  if (n < max_exact) return base + n;
  // x is an integer exactly when n = max_exact (md/me)^(k/(nb-me)) for a whole k (n = 16 at
  // the bidirectional defaults: x = 2); the 1e-9 keeps ln's rounding from flooring it to k-1.
  double x = std::log(static_cast<double>(n) / max_exact) /
             std::log(static_cast<double>(o.max_distance) / max_exact) * (nb - max_exact);
  int64_t log_bucket = max_exact + static_cast<int64_t>(std::floor(x + 1e-9));
  return base + std::min(nb - 1, log_bucket);
}

Tensor t5_bias_table(const Tensor& rel_bias, int64_t q_pos0, int64_t Tq, int64_t Tk,
                     const T5Options& o) {
  if (rel_bias.dim() != 2 || rel_bias.size(0) != o.num_buckets)
    fail("t5: expected rel_bias (num_buckets, H) with num_buckets = ", o.num_buckets, ", but got ",
         shape_str(rel_bias.shape()));
  if (Tq < 1 || Tk < 1 || q_pos0 < 0)
    fail("t5: expected Tq, Tk >= 1 and q_pos0 >= 0, but got Tq = ", Tq, ", Tk = ", Tk,
         ", q_pos0 = ", q_pos0);
  int64_t W = Tq + Tk - 1, r_lo = -(Tq - 1) - q_pos0;
  Ids buckets{std::vector<int32_t>(W), {W}};
  for (int64_t c = 0; c < W; ++c)
    buckets.data[c] = static_cast<int32_t>(t5_bucket(-(r_lo + c), o));  // n = i - j = -r_c
  // (W, H) rows gathered by bucket; backward: the lookup's scatter-add by bucket (t5.h)
  return transpose(embedding(rel_bias, buckets), 0, 1);  // (H, W)
}

T5Bias::T5Bias(int64_t n_head, const T5Options& o, Generator& gen, DType dtype) : opt_(o) {
  validate_t5(o);
  if (n_head <= 0) fail("t5: expected at least one head, but got ", n_head);
  rel_bias_ = Tensor::randn({o.num_buckets, n_head}, gen, 0.02, dtype);
  rel_bias_.set_requires_grad(true);
}

// q and k as given; the bias table of every relative position this attention meets. Its bucket
// form follows the model's mask (options().causal, checked against the call's).
// ctx.offset: ignored, the buckets depend on i - j alone (a test says so).
AttentionTerms T5Bias::attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                       const PositionContext& ctx) const {
  if (causal != opt_.causal)
    fail("t5: the table was built for a ", opt_.causal ? "causal" : "bidirectional",
         " model, but attention is ", causal ? "causal" : "bidirectional");
  if (!ctx.random()) return {.q = q, .k = k, .rel_bias = table(ctx.q_pos0, q.size(1), k.size(1))};
  // random positions: each pair's bucket of its own distance, (Bp,Tq,Tk,H) -> (Bp,H,Tq,Tk)
  const int64_t R = ctx.rows(), Tq = ctx.Tq, Tk = ctx.Tk;
  Ids buckets{std::vector<int32_t>(R * Tq * Tk), {R, Tq, Tk}};
  for (int64_t b = 0; b < R; ++b)
    for (int64_t i = 0; i < Tq; ++i)
      for (int64_t j = 0; j < Tk; ++j)
        buckets.data[(b * Tq + i) * Tk + j] = static_cast<int32_t>(
            t5_bucket(ctx.position(b, ctx.q_pos0 + i) - ctx.position(b, j), opt_));
  return {.q = q, .k = k, .bias = transpose(transpose(embedding(rel_bias_, buckets), 3, 1), 2, 3)};
}

}  // namespace poslab
