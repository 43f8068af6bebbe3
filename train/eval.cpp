#include "train/eval.h"

#include <cmath>
#include <cstdio>

namespace poslab {

EvalResult evaluate(const GPT& model, const std::vector<uint16_t>& tokens, int64_t L,
                    int64_t windows, int64_t buckets, const std::string& split) {
  if (L <= 0) fail("--len: expected a positive length, but got ", L);
  if (buckets <= 0 || buckets > L) fail("--buckets: expected 1..", L, ", but got ", buckets);
  int64_t n = static_cast<int64_t>(tokens.size());
  if (n < L + 1)
    fail("eval: the ", split, " split holds ", n, " tokens, fewer than --len + 1 = ", L + 1);
  int64_t fit = (n - 1) / L;
  int64_t W = windows > 0 ? std::min(windows, fit) : fit;
  NoGrad no_grad;
  EvalResult r;
  r.len = L;
  r.windows = W;
  r.tokens = L * W;
  std::vector<double> pos(L, 0.0);
  double total = 0;
  for (int64_t w = 0; w < W; ++w) {
    int64_t o = w * L;
    Ids x{std::vector<int32_t>(L), {1, L}}, y{std::vector<int32_t>(L), {1, L}};
    for (int64_t t = 0; t < L; ++t) x.data[t] = tokens[o + t], y.data[t] = tokens[o + t + 1];
    Tensor rows;
    model.loss(x, y, &rows);
    std::vector<double> v = rows.to_vector();
    for (int64_t t = 0; t < L; ++t) pos[t] += v[t], total += v[t];
  }
  for (double& p : pos) p /= W;
  r.position_loss = pos;
  r.loss = total / r.tokens;
  r.ppl = std::exp(r.loss);
  for (int64_t b = 0; b < buckets; ++b) {
    int64_t s = b * L / buckets, e = (b + 1) * L / buckets;
    double acc = 0;
    for (int64_t t = s; t < e; ++t) acc += pos[t];
    r.buckets.push_back({s, e, acc / std::max<int64_t>(e - s, 1)});
  }
  return r;
}

std::string EvalResult::json() const {
  char b[256];
  std::snprintf(
      b, sizeof b,
      "{\"loss\":%.17g,\"ppl\":%.17g,\"tokens\":%lld,\"len\":%lld,\"windows\":%lld,\"buckets\":[",
      loss, ppl, (long long)tokens, (long long)len, (long long)windows);
  std::string s = b;
  for (size_t i = 0; i < buckets.size(); ++i) {
    std::snprintf(b, sizeof b, "%s{\"start\":%lld,\"end\":%lld,\"loss\":%.17g}", i ? "," : "",
                  (long long)buckets[i].start, (long long)buckets[i].end, buckets[i].loss);
    s += b;
  }
  return s + "]}";
}

}  // namespace poslab
