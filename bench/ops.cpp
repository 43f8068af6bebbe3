// ops.cpp — the model's heavy ops one at a time, forward + backward, at the canonical sizes
// (d = 128, 4 heads of 32) and, for attention, at T = 256, 1024 and 4096 with B*T = 4096
// tokens. Validates first: the fused attention against attention_reference (plain loops, in
// double) at T <= 1024, each scheme; then prints the median time of forward+backward.
//   attention/plain   what none, learned and sinusoidal run (no bias)
//   attention/rope    RoPE's rotation of q and k, then the same attention
//   attention/alibi   the ALiBi bias inside the attention kernel
#include <cmath>
#include <cstdio>
#include <string>

#include "bench/bench_util.h"
#include "nn/attention_op.h"
#include "posenc/alibi.h"
#include "posenc/none.h"
#include "posenc/rope.h"

using namespace poslab;

namespace {

constexpr int64_t H = 4, D = 32, C = H * D, kTokens = 4096;

// fwd + bwd of f(leaves) with a fixed upstream gradient w = dL/d(out), handed to backward
// directly: the time is the op's forward and backward plus the leaves' gradient accumulation
// (one add per leaf element), and nothing else. (A loss sum(out * w) would add a multiply, a
// sum and their backward, over 2M elements for GELU: more than GELU itself.)
double time_fwd_bwd(const std::function<Tensor()>& f, const Tensor& w, int reps) {
  return bench::median_seconds(
      [&] {
        Tensor out = f();
        backward(out, w);
      },
      reps, 1);
}

double max_rel_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, std::abs(x[i] - y[i]) / (1e-3 + std::abs(y[i])));
  return worst;
}

}  // namespace

int main() {
  Generator g(11);
  RoPE rope(D, 10000);
  ALiBi alibi(H);
  NoPE plain;
  std::printf("%-18s %6s %4s %10s %12s\n", "op", "T", "B", "fwd+bwd", "tokens/s");
  for (int64_t T : {256, 1024, 4096}) {
    int64_t B = kTokens / T;
    Tensor q = Tensor::randn({B, T, H, D}, g).set_requires_grad(true);
    Tensor k = Tensor::randn({B, T, H, D}, g).set_requires_grad(true);
    Tensor v = Tensor::randn({B, T, H, D}, g).set_requires_grad(true);
    Tensor w = Tensor::randn({B, T, H, D}, g);
    for (std::string scheme : {"plain", "rope", "alibi"}) {
      auto run = [&](bool fused) {
        const PositionalEncoding* pe = &plain;
        if (scheme == "rope") pe = &rope;
        if (scheme == "alibi") pe = &alibi;
        AttentionTerms t = attention_terms_at(*pe, q, k, 0, true);
        AttentionOptions opt;
        opt.rel_bias = t.rel_bias;
        return fused ? attention(t.q, t.k, v, opt) : attention_reference(t.q, t.k, v, opt);
      };
      if (T <= 1024) {
        double d = max_rel_diff(run(true), run(false));
        if (d > 1e-3) {
          std::fprintf(stderr, "ops bench: fused attention/%s differs from the reference: %g\n",
                       scheme.c_str(), d);
          return 1;
        }
      }
      // medians of 41, 11 and 3 runs: the short runs at T = 256 vary most from run to run,
      // and make bench's step floor reads this line
      double t = time_fwd_bwd([&] { return run(true); }, w, T == 256 ? 41 : T == 1024 ? 11 : 3);
      std::printf("%-18s %6lld %4lld %8.1f ms %12.0f\n", ("attention/" + scheme).c_str(),
                  (long long)T, (long long)B, 1e3 * t, kTokens / t);
    }
  }
  // The per-token ops at B*T = 4096 rows.
  Tensor x = Tensor::randn({16, 256, H, D}, g).set_requires_grad(true);
  Tensor wx = Tensor::randn({16, 256, H, D}, g);
  double t = time_fwd_bwd([&] { return rope_rotate_at(rope, x, 0, 256); }, wx, 9);
  std::printf("%-18s %6d %4d %8.2f ms %12.0f\n", "rope", 256, 16, 1e3 * t, kTokens / t);
  Tensor h = Tensor::randn({kTokens, C}, g).set_requires_grad(true);
  Tensor wh = Tensor::randn({kTokens, C}, g);
  Tensor lw = Tensor::ones({C}).set_requires_grad(true),
         lb = Tensor::zeros({C}).set_requires_grad(true);
  t = time_fwd_bwd([&] { return layer_norm(h, lw, lb); }, wh, 9);
  std::printf("%-18s %6d %4d %8.2f ms %12.0f\n", "layer_norm", 256, 16, 1e3 * t, kTokens / t);
  Tensor m = Tensor::randn({kTokens, 4 * C}, g).set_requires_grad(true);
  Tensor wm = Tensor::randn({kTokens, 4 * C}, g);
  t = time_fwd_bwd([&] { return gelu(m); }, wm, 9);
  std::printf("%-18s %6d %4d %8.2f ms %12.0f\n", "gelu (4C wide)", 256, 16, 1e3 * t, kTokens / t);
  Tensor logits = Tensor::randn({kTokens, 105}, g).set_requires_grad(true);
  Ids targets{std::vector<int32_t>(kTokens), {kTokens}};
  for (auto& v : targets.data) v = static_cast<int32_t>(g.next_u64() % 105);
  t = bench::median_seconds([&] { backward(cross_entropy(logits, targets)); }, 9, 1);
  std::printf("%-18s %6d %4d %8.2f ms %12.0f\n", "cross_entropy", 256, 16, 1e3 * t, kTokens / t);
  return 0;
}
