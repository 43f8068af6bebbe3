// matmul.cpp — the framework's matmul against raw cblas_sgemm at the model's shapes.
// Validates first (same numbers), then times both in the same run and prints the ratio.
// On a CPU with AVX2+FMA or AVX-512 the framework runs our own sgemm (tensor/sgemm.cpp), so
// the ratio is ours vs OpenBLAS (POSLAB_ISA=avx2 picks the AVX2 kernel on an AVX-512 CPU); with
// POSLAB_GEMM=blas both sides are OpenBLAS and the ratio is the framework's own overhead (dispatch,
// views, allocation). Shapes: M = B*T = 4096 rows with K, N in {128, 384, 512} (the Linear layers
// of d = 128), both operand layouts the model uses (x W^T reads W transposed), and square 512 /
// 1024.
// Then every product of a canonical training step (d = 128, 4 layers, B*T = 4096 rows, the
// 105-character vocabulary), each in the layout the step gives it, ours against raw
// cblas_sgemm, and their total per step: a floor under the step's time. The step runs them all
// and, besides, attention (its own products: bench_ops), the element-wise ops and the
// optimizer, so no step can run faster than `products per step`; 4096 tokens over it is the
// ceiling they set on tokens/s, whatever the rest of the step is made to cost.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <utility>

#include "autograd/ops.h"
#include "bench/bench_util.h"
#include "tensor/sgemm.h"

using namespace poslab;

namespace {

// Whether ours (x) and raw BLAS (y) give the same numbers, to f32 rounding; names the first
// element that differs. The operands are randn, so an element of C is a sum of K terms of
// unit variance: about sqrt(K) in size, and sums of that size are what two summation orders
// round differently. The bound is relative to that scale as well as to |y|: relative to |y|
// alone, an element that cancels to near zero (0.068 in a sum of 4096 terms, dW of qkv) fails
// on rounding when the k-blocks change, though any wrong term would still be off by ~1.
bool agree(const char* what, const Tensor& ours, const Tensor& raw, int64_t K) {
  std::vector<double> x = ours.to_vector(), y = raw.to_vector();
  const double scale = std::sqrt(static_cast<double>(K));
  for (size_t i = 0; i < x.size(); ++i)
    if (std::abs(x[i] - y[i]) > 1e-4 * (scale + std::abs(y[i]))) {
      std::fprintf(stderr, "matmul bench: %s differs from cblas_sgemm at %zu: %g vs %g\n", what, i,
                   x[i], y[i]);
      return false;
    }
  return true;
}

// Medians of `rounds` timings of raw and ours, alternating so that a noisy neighbour hits
// both alike: {raw, ours} in seconds.
std::pair<double, double> alternate_medians(const std::function<void()>& raw,
                                            const std::function<void()>& ours, int rounds) {
  std::vector<double> tr, to;
  for (int i = 0; i < rounds; ++i) {
    tr.push_back(bench::median_seconds(raw, 1, i == 0 ? 2 : 0));
    to.push_back(bench::median_seconds(ours, 1, i == 0 ? 2 : 0));
  }
  std::sort(tr.begin(), tr.end());
  std::sort(to.begin(), to.end());
  return {tr[tr.size() / 2], to[to.size() / 2]};
}

// One matrix product of the step: C (M,N) = op(A) (M,K) op(B) (K,N), row-major, `count` times
// per step.
struct StepProduct {
  const char* name;
  bool ta, tb;
  int64_t M, N, K;
  int count;
};

// A Linear layer in -> out over R rows (y = x W^T + b, W stored (out, in)) runs three products;
// their layouts, from linear_backward:
//   y  = x W^T    (R,in)(in,out)    W read transposed
//   dx = dy W     (R,out)(out,in)
//   dW = dy^T x   (out,R)(R,in)     dy read transposed
void add_linear(std::vector<StepProduct>& v, const char* fwd, const char* dx, const char* dw,
                int64_t R, int64_t in, int64_t out, int count) {
  v.push_back({fwd, false, true, R, out, in, count});
  v.push_back({dx, false, false, R, in, out, count});
  v.push_back({dw, true, false, out, in, R, count});
}

// Times every product of a canonical step, ours (kernel::gemm, the framework's path) and raw
// OpenBLAS alternating, medians of 11 each; prints them and the totals per step. Returns false
// when the two disagree.
bool step_products() {
  constexpr int64_t R = 4096, C = 128, V = 105, layers = 4;
  std::vector<StepProduct> v;
  add_linear(v, "qkv = x Wqkv^T", "dx of qkv", "dWqkv", R, C, 3 * C, layers);
  add_linear(v, "attn out proj", "dx of attn out", "dW attn out", R, C, C, layers);
  add_linear(v, "mlp up (4C)", "dx of mlp up", "dW mlp up", R, C, 4 * C, layers);
  add_linear(v, "mlp down", "dx of mlp down", "dW mlp down", R, 4 * C, C, layers);
  add_linear(v, "logits (tied wte)", "dx of logits", "dwte (logits)", R, C, V, 1);
  std::printf(
      "\nA canonical training step's products (4 layers, B*T = %lld rows), medians of 11:\n",
      (long long)R);
  std::printf("%-20s %-14s %5s %9s %9s %7s\n", "product", "M x N x K", "count", "ours GF",
              "BLAS GF", "ratio");
  double step_ours = 0, step_raw = 0, step_flop = 0;
  for (const StepProduct& c : v) {
    Generator g(2);
    const int64_t lda = c.ta ? c.M : c.K, ldb = c.tb ? c.K : c.N;
    Tensor a = Tensor::randn({c.M * c.K}, g), b = Tensor::randn({c.K * c.N}, g);
    Tensor ours = Tensor::empty({c.M * c.N}), raw = Tensor::empty({c.M * c.N});
    const float *pa = a.data<float>(), *pb = b.data<float>();
    auto run_raw = [&] {
      cblas_sgemm(CblasRowMajor, c.ta ? CblasTrans : CblasNoTrans, c.tb ? CblasTrans : CblasNoTrans,
                  c.M, c.N, c.K, 1.f, pa, lda, pb, ldb, 0.f, raw.data<float>(), c.N);
    };
    auto run_ours = [&] {
      kernel::gemm<float>(c.ta, c.tb, c.M, c.N, c.K, 1.f, pa, lda, pb, ldb, 0.f, ours.data<float>(),
                          c.N);
    };
    run_raw(), run_ours();
    if (!agree(c.name, ours, raw, c.K)) return false;
    const auto [t_raw, t_ours] = alternate_medians(run_raw, run_ours, 11);
    const double flop = 2.0 * c.M * c.N * c.K;
    char dims[32];
    std::snprintf(dims, sizeof dims, "%lldx%lldx%lld", (long long)c.M, (long long)c.N,
                  (long long)c.K);
    std::printf("%-20s %-14s %5d %9.1f %9.1f %6.2fx\n", c.name, dims, c.count, flop / t_ours / 1e9,
                flop / t_raw / 1e9, t_raw / t_ours);
    step_ours += c.count * t_ours, step_raw += c.count * t_raw, step_flop += c.count * flop;
  }
  std::printf(
      "products per step: %.1f GFLOP; ours %.1f ms (%.1f GFLOP/s), OpenBLAS %.1f ms "
      "(%.1f GFLOP/s)\n",
      step_flop / 1e9, 1e3 * step_ours, step_flop / step_ours / 1e9, 1e3 * step_raw,
      step_flop / step_raw / 1e9);
  std::printf("step_products_ms %.2f ceiling_tokens_per_s %.0f\n", 1e3 * step_ours,
              double(R) / step_ours);
  return true;
}

}  // namespace

int main() {
  struct Case {
    int64_t M, K, N;
    bool trans_b;
  };
  std::vector<Case> cases;
  for (int64_t K : {128, 384, 512})
    for (int64_t N : {128, 384, 512}) cases.push_back({4096, K, N, true});
  cases.push_back({512, 512, 512, false});
  cases.push_back({1024, 1024, 1024, false});
  const kernel::SgemmKernel* uk = kernel::sgemm_kernel();
  std::printf("gemm behind the Tensor API: %s\n",
              uk ? uk->name : "OpenBLAS (POSLAB_GEMM=blas, POSLAB_ISA=generic or no AVX2)");
  std::printf("%-22s %10s %10s %7s\n", "M x K x N (B^T?)", "tensor", "raw BLAS", "ratio");
  double worst = 1e9;
  for (const Case& c : cases) {
    Generator g(1);
    Tensor a = Tensor::randn({c.M, c.K}, g);
    Tensor b = c.trans_b ? Tensor::randn({c.N, c.K}, g) : Tensor::randn({c.K, c.N}, g);
    Tensor bt = c.trans_b ? b.transpose(0, 1) : b;  // (K,N) view
    Tensor out = Tensor::empty({c.M, c.N});
    auto raw = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, c.trans_b ? CblasTrans : CblasNoTrans, c.M, c.N, c.K,
                  1.f, a.data<float>(), c.K, b.data<float>(), c.trans_b ? c.K : c.N, 0.f,
                  out.data<float>(), c.N);
    };
    raw();
    if (!agree("the Tensor API", kernel::matmul(a, bt), out, c.K)) return 1;
    double flops = 2.0 * c.M * c.N * c.K;
    const auto [t_raw, t_ours] = alternate_medians(
        raw, [&] { kernel::matmul(a, bt); }, 21);
    char name[64];
    std::snprintf(name, sizeof name, "%lldx%lldx%lld%s", (long long)c.M, (long long)c.K,
                  (long long)c.N, c.trans_b ? " (B^T)" : "");
    std::printf("%-22s %8.1f GF %8.1f GF %6.1f%%\n", name, flops / t_ours / 1e9,
                flops / t_raw / 1e9, 100 * t_raw / t_ours);
    worst = std::min(worst, t_raw / t_ours);
  }
  std::printf("worst ratio tensor/raw: %.1f%% (target >= 90%%)\n", 100 * worst);
  return step_products() ? 0 : 1;
}
