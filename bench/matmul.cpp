// matmul.cpp — the framework's matmul against raw cblas_sgemm at the model's shapes.
// Validates first (same numbers), then times both in the same run and prints the ratio.
// On a CPU with AVX2+FMA or AVX-512 the framework runs our own sgemm (tensor/sgemm.cpp), so
// the ratio is ours vs OpenBLAS (POSLAB_ISA=avx2 picks the AVX2 kernel on an AVX-512 CPU); with
// POSLAB_GEMM=blas both sides are OpenBLAS and the ratio is the framework's own overhead (dispatch,
// views, allocation). Shapes: M = B*T = 4096 rows with K, N in {128, 384, 512} (the Linear layers
// of d = 128), both operand layouts the model uses (x W^T reads W transposed), and square 512 /
// 1024.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "autograd/ops.h"
#include "bench/bench_util.h"
#include "tensor/sgemm.h"

using namespace poslab;

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
    Tensor ours = kernel::matmul(a, bt);
    std::vector<double> x = ours.to_vector(), y = out.to_vector();
    for (size_t i = 0; i < x.size(); ++i)
      if (std::abs(x[i] - y[i]) > 1e-4 * (1 + std::abs(y[i]))) {
        std::fprintf(stderr, "matmul bench: results differ at %zu: %g vs %g\n", i, x[i], y[i]);
        return 1;
      }
    double flops = 2.0 * c.M * c.N * c.K;
    // alternate the two so that a noisy neighbour hits both alike; medians of 21 each
    std::vector<double> tr, to;
    for (int i = 0; i < 21; ++i) {
      tr.push_back(bench::median_seconds(raw, 1, i == 0 ? 2 : 0));
      to.push_back(bench::median_seconds([&] { kernel::matmul(a, bt); }, 1, i == 0 ? 2 : 0));
    }
    std::sort(tr.begin(), tr.end());
    std::sort(to.begin(), to.end());
    double t_raw = tr[tr.size() / 2], t_ours = to[to.size() / 2];
    char name[64];
    std::snprintf(name, sizeof name, "%lldx%lldx%lld%s", (long long)c.M, (long long)c.K,
                  (long long)c.N, c.trans_b ? " (B^T)" : "");
    std::printf("%-22s %8.1f GF %8.1f GF %6.1f%%\n", name, flops / t_ours / 1e9,
                flops / t_raw / 1e9, 100 * t_raw / t_ours);
    worst = std::min(worst, t_raw / t_ours);
  }
  std::printf("worst ratio tensor/raw: %.1f%% (target >= 90%%)\n", 100 * worst);
  return 0;
}
