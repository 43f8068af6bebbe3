// Our sgemm against a plain triple loop in double, with every micro-kernel this CPU can run
// (AVX2 and AVX-512), on every layout and edge it meets: both transposes, ragged tiles (M, N not
// multiples of the tile), K past one packed block (KC = 256), leading dimensions wider than the
// matrix, alpha/beta, and beta = 0 over a C full of NaN (which must not be read). A kernel the
// CPU lacks is skipped with a warning (OpenBLAS runs there instead).
#include <omp.h>
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "tensor/sgemm.h"
#include "tensor/tensor.h"

using namespace poslab;

namespace {

struct Case {
  bool ta, tb;
  int64_t M, N, K;
  float alpha, beta;
};

// C = alpha op(A) op(B) + beta C, in double: the reference.
std::vector<double> reference(const Case& c, const std::vector<float>& A, int64_t lda,
                              const std::vector<float>& B, int64_t ldb,
                              const std::vector<float>& C0, int64_t ldc) {
  std::vector<double> out(C0.begin(), C0.end());
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < c.K; ++k)
        s += double(c.ta ? A[k * lda + i] : A[i * lda + k]) *
             double(c.tb ? B[j * ldb + k] : B[k * ldb + j]);
      double old = c.beta == 0 ? 0 : c.beta * double(C0[i * ldc + j]);
      out[i * ldc + j] = c.alpha * s + old;
    }
  return out;
}

// The micro-kernels this CPU can run (a warning for each it cannot).
std::vector<const kernel::SgemmKernel*> runnable_kernels() {
  std::vector<const kernel::SgemmKernel*> out;
  for (kernel::Isa isa : {kernel::Isa::avx2, kernel::Isa::avx512}) {
    if (kernel::cpu_isa_supported() >= isa)
      out.push_back(kernel::sgemm_kernel_for(isa));
    else
      WARN("this CPU has no " << kernel::isa_name(isa) << ": that sgemm kernel is not tested here");
  }
  return out;
}

std::vector<Case> layout_cases() {
  std::vector<Case> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({ta, tb, 1, 1, 1, 1.f, 0.f});
      cases.push_back({ta, tb, 12, 32, 7, 1.f, 0.f});
      cases.push_back({ta, tb, 6, 16, 9, 1.f, 1.f});         // one AVX2 tile exactly
      cases.push_back({ta, tb, 13, 33, 300, 1.f, 0.f});      // ragged, two k-blocks
      cases.push_back({ta, tb, 97, 70, 513, 0.5f, 1.f});     // three k-blocks, accumulate
      cases.push_back({ta, tb, 200, 129, 64, -2.f, 0.25f});  // several row blocks
      cases.push_back({ta, tb, 5, 17, 1, 1.f, 0.f});
      cases.push_back({ta, tb, 50, 32, 300, 1.f, 1.f});  // one AVX-512 panel: A read in place
      cases.push_back({ta, tb, 50, 12, 40, 1.f, 1.f});   // one AVX2 panel: A read in place
      cases.push_back({ta, tb, 7, 9, 3, 1.f, 0.f});      // one partial column of 8 past 8
      // Full panels (N a multiple of 16 and 32): stored B is read in place, without packing;
      // big enough for the threads (M N K >= 2^18), three k-blocks, as dW = dy^T x.
      cases.push_back({ta, tb, 97, 64, 600, 1.f, 0.5f});
      cases.push_back({ta, tb, 40, 96, 1000, 1.f, 0.f});
      // Wide and deep: sgemm runs these as their transpose (sgemm_runs_transposed), the
      // second one reading C (beta != 0) into the transposed buffer first.
      cases.push_back({ta, tb, 13, 40, 300, 1.f, 0.f});
      cases.push_back({ta, tb, 30, 100, 400, 1.f, 0.5f});
      // ... big enough for the threads to share the transposes, ragged 16 x 16 blocks
      cases.push_back({ta, tb, 130, 300, 300, 1.f, 0.5f});
    }
  return cases;
}

}  // namespace

TEST_CASE("sgemm equals the triple loop on every layout and edge, for every kernel",
          "[tensor][gemm]") {
  const std::vector<Case> cases = layout_cases();
  for (const kernel::SgemmKernel* uk : runnable_kernels()) {
    Generator g(7);
    for (const Case& c : cases) {
      // Leading dimensions wider than the rows they hold, as for views into a fused qkv.
      int64_t a_rows = c.ta ? c.K : c.M, a_cols = c.ta ? c.M : c.K;
      int64_t b_rows = c.tb ? c.N : c.K, b_cols = c.tb ? c.K : c.N;
      int64_t lda = a_cols + 3, ldb = b_cols + 5, ldc = c.N + 2;
      std::vector<float> A(a_rows * lda), B(b_rows * ldb), C(c.M * ldc);
      for (auto& v : A) v = float(g.normal());
      for (auto& v : B) v = float(g.normal());
      for (auto& v : C)
        v = c.beta == 0 ? std::numeric_limits<float>::quiet_NaN() : float(g.normal());
      std::vector<double> want = reference(c, A, lda, B, ldb, C, ldc);
      kernel::sgemm(*uk, c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta,
                    C.data(), ldc);
      INFO(uk->name << ": ta=" << c.ta << " tb=" << c.tb << " M=" << c.M << " N=" << c.N
                    << " K=" << c.K);
      for (int64_t i = 0; i < c.M; ++i)
        for (int64_t j = 0; j < c.N; ++j) {
          // f32 sums of K products of N(0,1) values: error ~ eps * sqrt(K) * |terms|
          double tol = 1e-5 * std::sqrt(double(c.K)) * (1 + std::abs(want[i * ldc + j]));
          INFO("C[" << i << "," << j << "]");
          REQUIRE(std::abs(C[i * ldc + j] - want[i * ldc + j]) <= tol);
        }
      // The padding columns between rows of C are never written.
      if (c.beta == 0)
        for (int64_t i = 0; i < c.M; ++i) REQUIRE(std::isnan(C[i * ldc + c.N]));
    }
  }
}

TEST_CASE("sgemm with K = 0 sets C to beta*C", "[tensor][gemm]") {
  for (const kernel::SgemmKernel* uk : runnable_kernels()) {
    std::vector<float> C = {std::numeric_limits<float>::quiet_NaN(), 2.f};
    kernel::sgemm(*uk, false, false, 1, 2, 0, 1.f, nullptr, 1, nullptr, 2, 0.f, C.data(), 2);
    REQUIRE(C[0] == 0.f);
    REQUIRE(C[1] == 0.f);
    C = {1.f, 2.f};
    kernel::sgemm(*uk, false, false, 1, 2, 0, 1.f, nullptr, 1, nullptr, 2, 3.f, C.data(), 2);
    REQUIRE(C[1] == 6.f);
  }
}

TEST_CASE("POSLAB_ISA caps the kernels at what the CPU has", "[tensor][gemm]") {
  // The choice is made once per process; here it only has to be one the CPU can run.
  REQUIRE(kernel::cpu_isa() <= kernel::cpu_isa_supported());
  const kernel::SgemmKernel* uk = kernel::sgemm_kernel_for(kernel::cpu_isa());
  REQUIRE((uk == nullptr) == (kernel::cpu_isa() == kernel::Isa::generic));
}

TEST_CASE("sgemm_prepacked on a leading block of a packed B equals sgemm on the same block",
          "[tensor][gemm]") {
  // Attention packs a head's K^T or V once and multiplies row blocks by leading blocks of it
  // (the first J keys): the results must be the very same bits as sgemm's on that block.
  for (const kernel::SgemmKernel* uk : runnable_kernels()) {
    Generator g(5);
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (auto [M, n, kc, K, N] : std::vector<std::array<int64_t, 5>>{{48, 96, 32, 32, 256},
                                                                         {16, 32, 200, 256, 40},
                                                                         {13, 70, 300, 520, 70},
                                                                         {48, 32, 250, 256, 32},
                                                                         {20, 64, 300, 520, 64}}) {
          for (float beta : {0.f, 1.f}) {
            int64_t ldb = (tb ? K : N) + 3, lda = (ta ? M : kc) + 2, ldc = n + 1;
            std::vector<float> A((ta ? kc : M) * lda), B((tb ? N : K) * ldb), C(M * ldc);
            for (auto& v : A) v = float(g.normal());
            for (auto& v : B) v = float(g.normal());
            for (auto& v : C) v = float(g.normal());
            std::vector<float> want = C, packed(kernel::sgemm_packed_floats(*uk, K, N));
            kernel::sgemm(*uk, ta, tb, M, n, kc, 0.5f, A.data(), lda, B.data(), ldb, beta,
                          want.data(), ldc);
            kernel::sgemm_pack(*uk, tb, K, N, B.data(), ldb, packed.data());
            std::vector<float> C_in_place = C;
            kernel::sgemm_prepacked(*uk, ta, M, n, kc, 0.5f, A.data(), lda, {packed.data(), K, N},
                                    beta, C.data(), ldc);
            INFO(uk->name << ": ta=" << ta << " tb=" << tb << " M=" << M << " n=" << n
                          << " kc=" << kc << " beta=" << beta);
            REQUIRE(C == want);
            // stored B of whole panels, read in place (PackedB::ld): V and K in attention
            if (kernel::sgemm_in_place(*uk, tb, N, ldb)) {
              kernel::sgemm_prepacked(*uk, ta, M, n, kc, 0.5f, A.data(), lda, {B.data(), K, N, ldb},
                                      beta, C_in_place.data(), ldc);
              REQUIRE(C_in_place == want);
            }
          }
        }
  }
}

TEST_CASE("sgemm_prepacked with a causal band gives the product without it", "[tensor][gemm]") {
  // Attention's row blocks tell sgemm_prepacked which terms are zero (k_upto, k_from) and
  // which outputs are masked (cols). With A zero where the band says, every wanted entry of C
  // must equal the unbanded product's; entries of whole skipped tiles are left as they were.
  using Band = kernel::CausalBand;
  for (const kernel::SgemmKernel* uk : runnable_kernels()) {
    Generator g(9);
    for (Band::Kind kind : {Band::cols, Band::k_upto, Band::k_from})
      for (bool ta : {false, true})
        for (auto [M, n, kc, off] : std::vector<std::array<int64_t, 4>>{{48, 96, 32, 0},
                                                                        {48, 64, 96, 48},
                                                                        {13, 70, 40, 5},
                                                                        {20, 40, 300, 250},
                                                                        {20, 40, 300, -260},
                                                                        {30, 33, 30, -7}})
          for (float beta : {0.f, 1.f}) {
            const int64_t lda = (ta ? M : kc) + 2, ldb = n + 3, ldc = n + 1;
            std::vector<float> A((ta ? kc : M) * lda), B(kc * ldb), C(M * ldc);
            for (auto& v : A) v = float(g.normal());
            for (auto& v : B) v = float(g.normal());
            for (auto& v : C) v = float(g.normal());
            auto a_at = [&](int64_t i, int64_t k) -> float& {
              return ta ? A[k * lda + i] : A[i * lda + k];
            };
            for (int64_t i = 0; i < M; ++i)  // the zeros the band promises
              for (int64_t k = 0; k < kc; ++k)
                if ((kind == Band::k_upto && k > i + off) || (kind == Band::k_from && k < i - off))
                  a_at(i, k) = 0.f;
            std::vector<float> packed(kernel::sgemm_packed_floats(*uk, kc, n));
            kernel::sgemm_pack(*uk, false, kc, n, B.data(), ldb, packed.data());
            const kernel::PackedB pb{packed.data(), kc, n};
            std::vector<float> want = C, got = C;
            kernel::sgemm_prepacked(*uk, ta, M, n, kc, 0.5f, A.data(), lda, pb, beta, want.data(),
                                    ldc);
            kernel::sgemm_prepacked(*uk, ta, M, n, kc, 0.5f, A.data(), lda, pb, beta, got.data(),
                                    ldc, {kind, off});
            INFO(uk->name << ": kind=" << kind << " ta=" << ta << " M=" << M << " n=" << n
                          << " kc=" << kc << " off=" << off << " beta=" << beta);
            int64_t untouched = 0;
            for (int64_t i = 0; i < M; ++i)
              for (int64_t j = 0; j < n; ++j) {
                INFO("C[" << i << "," << j << "]");
                if (kind == Band::cols && j > i + off) {
                  // masked: computed, or left as it was if its whole tile was skipped
                  const int64_t last = std::min(M, (i / uk->mr + 1) * uk->mr) - 1;
                  if (j / uk->nr * uk->nr > last + off) {
                    REQUIRE(got[i * ldc + j] == C[i * ldc + j]);
                    ++untouched;
                  } else {
                    REQUIRE(got[i * ldc + j] == want[i * ldc + j]);
                  }
                  continue;
                }
                REQUIRE(got[i * ldc + j] == want[i * ldc + j]);
              }
            if (kind == Band::cols && off == 0) REQUIRE(untouched > 0);
          }
  }
}

TEST_CASE("sgemm's bias epilogue gives the bits of C = bias, then beta = 1", "[tensor][gemm]") {
  // linear's y = x W^T + b: the bias enters the first k-block's tile instead of a copy of it
  // into every row of y beforehand; the sums are the same, so are the bits.
  for (const kernel::SgemmKernel* uk : runnable_kernels()) {
    Generator g(9);
    for (auto [M, N, K] :
         std::vector<std::array<int64_t, 3>>{{13, 33, 300}, {64, 384, 128}, {7, 9, 3}}) {
      std::vector<float> A(M * K), B(N * K), bias(N), want(M * N), got(M * N, NAN);
      for (auto& v : A) v = float(g.normal());
      for (auto& v : B) v = float(g.normal());
      for (auto& v : bias) v = float(g.normal());
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) want[i * N + j] = bias[j];
      kernel::sgemm(*uk, false, true, M, N, K, 1.f, A.data(), K, B.data(), K, 1.f, want.data(), N);
      kernel::sgemm(*uk, false, true, M, N, K, 1.f, A.data(), K, B.data(), K, 0.f, got.data(), N,
                    bias.data());
      INFO(uk->name << ": M=" << M << " N=" << N << " K=" << K);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("sgemm gives the same bits on one thread and on several", "[tensor][gemm]") {
  // Threads split C's tiles, never a sum: every element is summed in the same order whatever
  // the thread count, with B packed or read in place (tb = false, full panels).
  for (const kernel::SgemmKernel* uk : runnable_kernels()) {
    Generator g(11);
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (auto [M, N, K] :  // the last one runs transposed (sgemm_runs_transposed)
             std::vector<std::array<int64_t, 3>>{{97, 64, 600}, {130, 70, 520}, {40, 200, 600}}) {
          std::vector<float> A(M * K), B(N * K), one(M * N), many(M * N);
          for (auto& v : A) v = float(g.normal());
          for (auto& v : B) v = float(g.normal());
          const int threads = omp_get_max_threads();
          omp_set_num_threads(1);
          kernel::sgemm(*uk, ta, tb, M, N, K, 1.f, A.data(), ta ? M : K, B.data(), tb ? K : N, 0.f,
                        one.data(), N);
          omp_set_num_threads(std::max(threads, 2));
          kernel::sgemm(*uk, ta, tb, M, N, K, 1.f, A.data(), ta ? M : K, B.data(), tb ? K : N, 0.f,
                        many.data(), N);
          omp_set_num_threads(threads);
          INFO(uk->name << ": ta=" << ta << " tb=" << tb << " M=" << M << " N=" << N << " K=" << K);
          REQUIRE(one == many);
        }
  }
}

TEST_CASE("sgemm gives the same bits whether it reads stored B in place or packs it",
          "[tensor][gemm]") {
  // sgemm reads a stored B (tb = false, full panels) in place unless its rows lie so far apart
  // that a panel would not stay in L2 (b_in_place in sgemm.cpp); then it packs it. The same
  // B with rows N apart (in place) and 4096 apart (16 KiB: packed on any L2 below 8 MiB) must
  // give the same bits, on one thread and on two.
  for (const kernel::SgemmKernel* uk : runnable_kernels()) {
    Generator g(12);
    const int64_t M = 70, N = 4 * uk->nr, K = 700, far = 4096;
    REQUIRE_FALSE(kernel::sgemm_runs_transposed(M, N, K, false));  // B stays B
    REQUIRE(kernel::sgemm_in_place(*uk, false, N, N));
    REQUIRE_FALSE(kernel::sgemm_in_place(*uk, false, N, far));  // so the second one is packed
    std::vector<float> A(M * K), near(K * N), spread(K * far, std::nanf("")), c1(M * N), c2(M * N);
    for (auto& v : A) v = float(g.normal());
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) spread[k * far + j] = near[k * N + j] = float(g.normal());
    const int threads = omp_get_max_threads();
    for (int nt : {1, 2}) {
      omp_set_num_threads(nt);
      for (bool ta : {false, true}) {
        kernel::sgemm(*uk, ta, false, M, N, K, 1.f, A.data(), ta ? M : K, near.data(), N, 0.f,
                      c1.data(), N);
        kernel::sgemm(*uk, ta, false, M, N, K, 1.f, A.data(), ta ? M : K, spread.data(), far, 0.f,
                      c2.data(), N);
        INFO(uk->name << ": threads=" << nt << " ta=" << ta);
        REQUIRE(c1 == c2);
      }
    }
    omp_set_num_threads(threads);
  }
}

TEST_CASE("sgemm runs a wide, deep product as its transpose, with the bits of the product as it is",
          "[tensor][gemm]") {
  // dW = dy^T x of the MLP's down projection is (128, 512) over K = 4096 rows: sgemm computes
  // C^T = op(B)^T op(A)^T into a buffer (sgemm.cpp says why). sgemm_prepacked always runs the
  // product as it is, in the same k-blocks, so its bits are what the transposed run must give:
  // each layout, with beta = 0 (C never read: NaN) and beta != 0, and C's padding left alone.
  for (const kernel::SgemmKernel* uk : runnable_kernels()) {
    Generator g(13);
    const int64_t M = 40, N = 128, K = 600, ldc = N + 3;
    REQUIRE(kernel::sgemm_runs_transposed(M, N, K, false));
    REQUIRE_FALSE(kernel::sgemm_runs_transposed(M, N, K, true));  // a bias keeps it as it is
    REQUIRE_FALSE(kernel::sgemm_runs_transposed(N, M, K, false));
    REQUIRE_FALSE(kernel::sgemm_runs_transposed(M, N, 256, false));  // one k-block
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (float beta : {0.f, 0.75f}) {
          const int64_t lda = (ta ? M : K) + 1, ldb = (tb ? K : N) + 2;
          std::vector<float> A((ta ? K : M) * lda), B((tb ? N : K) * ldb), C(M * ldc);
          for (auto& v : A) v = float(g.normal());
          for (auto& v : B) v = float(g.normal());
          for (auto& v : C) v = beta == 0 ? std::nanf("") : float(g.normal());
          std::vector<float> want = C, packed(kernel::sgemm_packed_floats(*uk, K, N));
          kernel::sgemm_pack(*uk, tb, K, N, B.data(), ldb, packed.data());
          kernel::sgemm_prepacked(*uk, ta, M, N, K, 1.5f, A.data(), lda, {packed.data(), K, N},
                                  beta, want.data(), ldc);
          kernel::sgemm(*uk, ta, tb, M, N, K, 1.5f, A.data(), lda, B.data(), ldb, beta, C.data(),
                        ldc);
          INFO(uk->name << ": ta=" << ta << " tb=" << tb << " beta=" << beta);
          for (int64_t i = 0; i < M; ++i) {
            for (int64_t j = 0; j < N; ++j) REQUIRE(C[i * ldc + j] == want[i * ldc + j]);
            if (beta == 0)
              for (int64_t j = N; j < ldc; ++j) REQUIRE(std::isnan(C[i * ldc + j]));
          }
        }
  }
}
