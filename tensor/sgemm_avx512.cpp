// sgemm_avx512.cpp — the AVX-512 micro-kernel and B packing of our sgemm (driver: sgemm.cpp).
//
// The micro-kernel holds a 12 x 32 tile of C in 24 zmm registers; per k it loads two vectors of
// B, broadcasts 12 values of A and issues 24 fused multiply-adds: 768 flops for 14 loads.
// Everything here is compiled for AVX-512F by function attributes, whatever the build's -march;
// sgemm_kernel() calls it only on CPUs that have it.
#include <immintrin.h>

#include <algorithm>

#include "tensor/sgemm.h"
#include "tensor/sgemm_transpose.h"

namespace poslab::kernel {

namespace {

constexpr int64_t MR = 12, NR = 32;  // micro-tile of C held in registers

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
  // B^T stored (N,K): four 8 x 8 register transposes per 8 values of k (gathers, one load
  // per element, made this the step's second-largest function)
  pack_bt_panel(B, ldb, pc, kc, j0, w, NR, dst);
}

// The 12 x 32 micro-kernel:  acc = sum_k a[0:12, k] b[k, 0:32]  (an outer product per k),
// then C[0:h, 0:w] = alpha*acc + beta*C (+ bias[0:w]), where beta == 0 never reads C (it may
// hold NaN).
// Element (i,k) of the A strip is a[i*rs + k*cs]: (rs, cs) = (1, MR) for a packed strip,
// (1, lda) for a full strip of stored A^T and (lda, 1) for one of stored A, both read in place.
__attribute__((target("avx512f"))) void micro_kernel(int64_t kc, const float* a, int64_t rs,
                                                     int64_t cs, const float* b, int64_t bs,
                                                     float alpha, float beta, const float* bias,
                                                     float* C, int64_t ldc, int64_t h, int64_t w) {
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  if (rs == 1) {
    for (int64_t k = 0; k < kc; ++k, a += cs, b += bs) {
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
    for (int64_t k = 0; k < kc; ++k, ++a0, ++a4, ++a8, b += bs) {
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
  const __m512 bias0 = bias ? _mm512_maskz_loadu_ps(m0, bias) : _mm512_setzero_ps(),
               bias1 = bias ? _mm512_maskz_loadu_ps(m1, bias + 16) : _mm512_setzero_ps();
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) {
    if (i >= h) break;
    float* c = C + i * ldc;
    __m512 r0 = _mm512_mul_ps(va, acc[i][0]), r1 = _mm512_mul_ps(va, acc[i][1]);
    if (beta != 0.f) {
      r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, c), r0);
      r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, c + 16), r1);
    }
    if (bias) r0 = _mm512_add_ps(r0, bias0), r1 = _mm512_add_ps(r1, bias1);
    _mm512_mask_storeu_ps(c, m0, r0);
    _mm512_mask_storeu_ps(c + 16, m1, r1);
  }
}

}  // namespace

const SgemmKernel sgemm_avx512_kernel = {"avx512 12x32", MR, NR, pack_b_panel, micro_kernel};

}  // namespace poslab::kernel
