// sgemm_avx2.cpp — the AVX2 + FMA micro-kernel and B packing of our sgemm (driver: sgemm.cpp),
// for the many x86-64 CPUs without AVX-512 (most laptops, AMD before Zen 4, many cloud VMs).
//
// The micro-kernel holds a 6 x 16 tile of C in 12 ymm registers; per k it loads two vectors of
// B, broadcasts 6 values of A and issues 12 fused multiply-adds: 192 flops for 8 loads. With
// the two B vectors and one broadcast that is 15 of the 16 ymm registers, the largest tile
// that fits (the classic BLIS/OpenBLAS Haswell shape). Everything here is compiled for
// AVX2 + FMA by function attributes, whatever the build's -march; sgemm_kernel() calls it only
// on CPUs that have both.
#include <immintrin.h>

#include <algorithm>

#include "tensor/sgemm.h"
#include "tensor/sgemm_transpose.h"

namespace poslab::kernel {

namespace {

constexpr int64_t MR = 6, NR = 16;  // micro-tile of C held in registers

// All-ones in the first n of 8 int lanes (all for n >= 8, none for n <= 0): the mask of a
// ragged edge for _mm256_maskload_ps, for the two 8-wide halves of a panel (n = w, w - 8).
__attribute__((target("avx2"))) inline __m256i lane_mask(int64_t n) {
  const int m = static_cast<int>(std::clamp<int64_t>(n, 0, 8));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(m), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Packs op(B)[pc:pc+kc, j0:j0+NR] into dst[k*NR + j], zero past column n (the edge of C).
__attribute__((target("avx2,fma"))) void pack_b_panel(const float* B, bool tb, int64_t ldb,
                                                      int64_t pc, int64_t kc, int64_t j0, int64_t n,
                                                      float* dst) {
  const int64_t w = std::min(NR, n - j0);
  const __m256i m0 = lane_mask(w), m1 = lane_mask(w - 8);
  if (!tb) {  // rows of B are contiguous: 16 floats per k, masked at the edge
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = B + (pc + k) * ldb + j0;
      _mm256_storeu_ps(dst + k * NR, _mm256_maskload_ps(src, m0));
      _mm256_storeu_ps(dst + k * NR + 8, _mm256_maskload_ps(src + 8, m1));
    }
    return;
  }
  pack_bt_panel(B, ldb, pc, kc, j0, w, NR, dst);  // B^T stored: 8 x 8 register transposes
}

// Writes the 6 x 16 accumulator tile: C[0:h, 0:w] = alpha*acc + beta*C (+ bias[0:w]), beta == 0
// never reading C (it may hold NaN). A ragged tile goes through masked loads and stores.
__attribute__((target("avx2,fma"), always_inline)) inline void store_tile(
    const __m256 (&acc)[MR][2], float alpha, float beta, const float* bias, float* C, int64_t ldc,
    int64_t h, int64_t w) {
  const __m256i m0 = lane_mask(w), m1 = lane_mask(w - 8);
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  const __m256 bias0 = bias ? _mm256_maskload_ps(bias, m0) : _mm256_setzero_ps(),
               bias1 = bias ? _mm256_maskload_ps(bias + 8, m1) : _mm256_setzero_ps();
  // fully unrolled, so that acc[i] names a register: a loop over i would keep acc in memory
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    if (i >= h) break;
    float* c = C + i * ldc;
    __m256 r0 = _mm256_mul_ps(va, acc[i][0]), r1 = _mm256_mul_ps(va, acc[i][1]);
    if (w == NR) {
      if (beta != 0.f) {
        r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(c), r0);
        r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + 8), r1);
      }
      if (bias) r0 = _mm256_add_ps(r0, bias0), r1 = _mm256_add_ps(r1, bias1);
      _mm256_storeu_ps(c, r0);
      _mm256_storeu_ps(c + 8, r1);
      continue;
    }
    if (beta != 0.f) {
      r0 = _mm256_fmadd_ps(vb, _mm256_maskload_ps(c, m0), r0);
      r1 = _mm256_fmadd_ps(vb, _mm256_maskload_ps(c + 8, m1), r1);
    }
    if (bias) r0 = _mm256_add_ps(r0, bias0), r1 = _mm256_add_ps(r1, bias1);
    _mm256_maskstore_ps(c, m0, r0);
    _mm256_maskstore_ps(c + 8, m1, r1);
  }
}

// The 6 x 16 micro-kernel:  acc = sum_k a[0:6, k] b[k, 0:16]  (an outer product per k).
// Element (i,k) of the A strip is a[i*rs + k*cs]: (rs, cs) = (1, MR) for a packed strip,
// (1, lda) for a full strip of stored A^T and (lda, 1) for one of stored A, both read in place.
__attribute__((target("avx2,fma"))) void micro_kernel(int64_t kc, const float* a, int64_t rs,
                                                      int64_t cs, const float* b, int64_t bs,
                                                      float alpha, float beta, const float* bias,
                                                      float* C, int64_t ldc, int64_t h, int64_t w) {
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  if (rs == 1) {
    for (int64_t k = 0; k < kc; ++k, a += cs, b += bs) {
      __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
      for (int i = 0; i < MR; ++i) {
        __m256 ai = _mm256_broadcast_ss(a + i);
        acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
      }
    }
  } else {  // rows of stored A (cs == 1): one pointer per row, one broadcast live at a time
    const float* row[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) row[i] = a + i * rs;
    for (int64_t k = 0; k < kc; ++k, b += bs) {
      __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
      for (int i = 0; i < MR; ++i) {
        __m256 ai = _mm256_broadcast_ss(row[i] + k);
        acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
      }
    }
  }
  store_tile(acc, alpha, beta, bias, C, ldc, h, w);
}

}  // namespace

const SgemmKernel sgemm_avx2_kernel = {"avx2 6x16", MR, NR, pack_b_panel, micro_kernel};

}  // namespace poslab::kernel
