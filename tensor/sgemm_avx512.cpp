// sgemm_avx512.cpp — our own single-precision matrix product for CPUs with AVX-512.
//
// Why it exists: OpenBLAS picks its kernels by CPU model. On a CPU it does not recognise (this
// project's VMs report a generic "Intel Xeon Processor") it falls back to its SSE3 "Prescott"
// kernels, ~30 GFLOP/s per core, unless OPENBLAS_CORETYPE is set in the environment — which
// we may not do for the user. These few hundred lines run at several times that on the same
// cores, so training is not held back by a BLAS that guessed wrong. f64 (gradchecks) and
// CPUs without AVX-512 keep using OpenBLAS; POSLAB_GEMM=blas forces OpenBLAS for f32 too.
//
// Scalar math (row-major, op(X) = X or X^T as asked):
//   C[m,n] = alpha * sum_k op(A)[m,k] * op(B)[k,n] + beta * C[m,n]
//
// The method is Goto's (K. Goto, R. van de Geijn, "Anatomy of High-Performance Matrix
// Multiplication", ACM TOMS 34(3), 2008):
//   for each block of KC along k:
//     pack op(B)[pc:pc+KC, :] into panels of NR = 32 columns, k-major: a micro-kernel reads
//       one row of a panel (32 floats = two zmm registers) per k, in order;
//     for each block of MC rows (one thread each), for each strip of MR = 12 rows:
//       pack op(A)[strip, pc:pc+KC] k-major (or read it in place where packing cannot pay);
//       for each B panel: the micro-kernel computes a 12 x 32 tile of C.
// Packing turns every access pattern (transposed or not, any leading dimension) into the same
// unit-stride stream and pads ragged edges with zeros; the packed B block (KC x N) stays in
// L2 and each 12 x KC strip of A in L1 while it sweeps across every panel of B.
//
// The micro-kernel holds the 12 x 32 tile in 24 zmm registers; per k it loads two vectors of
// B, broadcasts 12 values of A and issues 24 fused multiply-adds: 768 flops for 14 loads.
// Every C element is summed in the same order whatever the thread count (threads split rows
// only), so results are deterministic.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tensor/sgemm_avx512.h"

namespace poslab::kernel {

namespace {

constexpr int64_t MR = 12, NR = 32;  // micro-tile of C held in registers
constexpr int64_t KC = 256;          // depth of one packed block (B panel: KC*NR*4 = 32 KiB)
constexpr int64_t MC = 8 * MR;       // rows of C one thread computes per task

// The first n of 16 float lanes (all for n >= 16, none for n <= 0): the mask of a ragged
// edge, for the two 16-wide halves of a 32-column panel (n = w and n = w - 16).
inline __mmask16 lane_mask(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}

// Packs op(B)[pc:pc+kc, j0:j0+NR] into dst[k*NR + j], zero past column n (the edge of C).
__attribute__((target("avx512f"))) void pack_b_panel(const float* B, bool tb, int64_t ldb,
                                                     int64_t pc, int64_t kc, int64_t j0, int64_t n,
                                                     float* dst) {
  const int64_t w = std::min(NR, n - j0);
  const __mmask16 m0 = lane_mask(w), m1 = lane_mask(w - 16);
  if (!tb) {  // rows of B are contiguous: 32 floats per k, masked at the edge
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = B + (pc + k) * ldb + j0;
      _mm512_storeu_ps(dst + k * NR, _mm512_maskz_loadu_ps(m0, src));
      _mm512_storeu_ps(dst + k * NR + 16, _mm512_maskz_loadu_ps(m1, src + 16));
    }
    return;
  }
  // B^T stored (N,K): op(B)[k, j] = B[j*ldb + k]; one gather fetches 16 columns of a row k.
  if (ldb > (int64_t(1) << 26)) {  // gather offsets are 32-bit: 15*ldb must fit, else scalar
    for (int64_t k = 0; k < kc; ++k)
      for (int64_t j = 0; j < NR; ++j) dst[k * NR + j] = j < w ? B[(j0 + j) * ldb + pc + k] : 0.f;
    return;
  }
  const __m512i idx =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int>(ldb)));
  const float* col0 = B + j0 * ldb + pc;
  const float* col16 = B + (j0 + 16) * ldb + pc;
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    _mm512_storeu_ps(dst + k * NR, _mm512_mask_i32gather_ps(zero, m0, idx, col0 + k, 4));
    _mm512_storeu_ps(dst + k * NR + 16,
                     m1 ? _mm512_mask_i32gather_ps(zero, m1, idx, col16 + k, 4) : zero);
  }
}

// Packs op(A)[i0:i0+MR, pc:pc+kc] into dst[k*MR + i], zero past row m.
void pack_a_strip(const float* A, bool ta, int64_t lda, int64_t pc, int64_t kc, int64_t i0,
                  int64_t m, float* dst) {
  int64_t h = std::min(MR, m - i0);
  if (ta) {  // A^T stored (K,M): the MR values of one k are contiguous
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = A + (pc + k) * lda + i0;
      for (int64_t i = 0; i < MR; ++i) dst[k * MR + i] = i < h ? src[i] : 0.f;
    }
    return;
  }
  for (int64_t i = 0; i < MR; ++i) {
    if (i < h) {
      const float* src = A + (i0 + i) * lda + pc;
      for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = src[k];
    } else {
      for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = 0.f;
    }
  }
}

// The 12 x 32 micro-kernel:  acc = sum_k a[0:12, k] b[k, 0:32]  (an outer product per k),
// then C[0:h, 0:w] = alpha*acc + beta*C, where beta == 0 never reads C (it may hold NaN).
// Element (i,k) of the A strip is a[i*rs + k*cs]: (rs, cs) = (1, MR) for a packed strip,
// (1, lda) for a full strip of stored A^T and (lda, 1) for one of stored A, both read in place.
__attribute__((target("avx512f"))) void micro_kernel(int64_t kc, const float* a, int64_t rs,
                                                     int64_t cs, const float* b, float alpha,
                                                     float beta, float* C, int64_t ldc, int64_t h,
                                                     int64_t w) {
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  if (rs == 1) {
    for (int64_t k = 0; k < kc; ++k, a += cs, b += NR) {
      __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 12
      for (int i = 0; i < MR; ++i) {
        __m512 ai = _mm512_set1_ps(a[i]);
        acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      }
    }
  } else {  // rows of stored A (cs == 1): three row pointers, each reaching four rows
    const float *a0 = a, *a4 = a + 4 * rs, *a8 = a + 8 * rs;
    for (int64_t k = 0; k < kc; ++k, ++a0, ++a4, ++a8, b += NR) {
      __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {
        __m512 x0 = _mm512_set1_ps(a0[i * rs]), x4 = _mm512_set1_ps(a4[i * rs]),
               x8 = _mm512_set1_ps(a8[i * rs]);
        acc[i][0] = _mm512_fmadd_ps(x0, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(x0, b1, acc[i][1]);
        acc[i + 4][0] = _mm512_fmadd_ps(x4, b0, acc[i + 4][0]);
        acc[i + 4][1] = _mm512_fmadd_ps(x4, b1, acc[i + 4][1]);
        acc[i + 8][0] = _mm512_fmadd_ps(x8, b0, acc[i + 8][0]);
        acc[i + 8][1] = _mm512_fmadd_ps(x8, b1, acc[i + 8][1]);
      }
    }
  }
  // Column masks for a ragged right edge (w < 32).
  const __mmask16 m0 = lane_mask(w), m1 = lane_mask(w - 16);
  __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) {
    if (i >= h) break;
    float* c = C + i * ldc;
    __m512 r0 = _mm512_mul_ps(va, acc[i][0]), r1 = _mm512_mul_ps(va, acc[i][1]);
    if (beta != 0.f) {
      r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, c), r0);
      r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, c + 16), r1);
    }
    _mm512_mask_storeu_ps(c, m0, r0);
    _mm512_mask_storeu_ps(c + 16, m1, r1);
  }
}

// Per-thread packing buffers, grown once and reused: a training step allocates nothing here.
std::vector<float>& a_buffer() {
  static thread_local std::vector<float> buf;
  return buf;
}
std::vector<float>& b_buffer() {
  static thread_local std::vector<float> buf;
  return buf;
}

}  // namespace

bool sgemm_avx512_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("POSLAB_GEMM");
    if (env && std::strcmp(env, "blas") == 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return on;
}

void sgemm_avx512(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                  int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {  // no products: C = beta*C (beta == 0 writes zeros without reading C)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.f ? 0.f : beta * C[i * ldc + j];
    return;
  }
  const int64_t panels = (N + NR - 1) / NR, blocks = (M + MC - 1) / MC;
  std::vector<float>& bp = b_buffer();
  bp.resize(static_cast<size_t>(panels * NR * KC));
  // Threads only for products big enough to pay for waking them, and never nested: the
  // attention kernel already calls us from inside its own parallel loop.
  const bool threaded = !omp_in_parallel() && M * N * K >= (int64_t(1) << 18);
  for (int64_t pc = 0; pc < K; pc += KC) {
    const int64_t kc = std::min(KC, K - pc);
    const float beta_k = pc == 0 ? beta : 1.f;  // later k-blocks accumulate onto C
    float* bpd = bp.data();
#pragma omp parallel if (threaded)
    {
#pragma omp for schedule(static)
      for (int64_t jp = 0; jp < panels; ++jp)
        pack_b_panel(B, tb, ldb, pc, kc, jp * NR, N, bpd + jp * NR * kc);
      std::vector<float>& ap = a_buffer();
      ap.resize(static_cast<size_t>(MR * KC));
#pragma omp for schedule(static)
      for (int64_t ib = 0; ib < blocks; ++ib) {
        const int64_t i0 = ib * MC, mc = std::min(MC, M - i0);
        const int64_t strips = (mc + MR - 1) / MR;
        // A full strip is read in place when that costs nothing (stored A^T: 12 contiguous
        // values per k) or when packing would not pay (a single panel of B: each strip is
        // used once, as in attention's P V). Otherwise, and at the ragged edge, it is packed.
        auto strip = [&](int64_t s, int64_t* rs, int64_t* cs) -> const float* {
          const int64_t r = i0 + s * MR;
          if (r + MR <= M && (ta || panels == 1)) {
            *rs = ta ? 1 : lda, *cs = ta ? lda : 1;
            return ta ? A + pc * lda + r : A + r * lda + pc;
          }
          pack_a_strip(A, ta, lda, pc, kc, r, M, ap.data());
          *rs = 1, *cs = MR;
          return ap.data();
        };
        for (int64_t s = 0; s < strips; ++s) {
          int64_t rs, cs;
          const float* a = strip(s, &rs, &cs);
          const int64_t r = i0 + s * MR;
          for (int64_t jp = 0; jp < panels; ++jp) {
            const int64_t c = jp * NR;
            micro_kernel(kc, a, rs, cs, bpd + jp * NR * kc, alpha, beta_k, C + r * ldc + c, ldc,
                         std::min(MR, M - r), std::min(NR, N - c));
          }
        }
      }
    }
  }
}

}  // namespace poslab::kernel
