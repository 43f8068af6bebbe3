// sgemm_transpose.h — the 8 x 8 register transpose both micro-kernels' B packing uses for a
// stored B^T (sgemm_avx2.cpp, sgemm_avx512.cpp): 8 loads, 24 shuffles, 8 stores per 64 floats,
// where gathers (one load per element) cost several times more.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace poslab::kernel {

// Transposes the 8 x 8 block src[j*ld + k] (8 columns j of B^T, 8 values k each) into
// dst[k*ldd + j]: three rounds of shuffles (pairs, quads, 128-bit halves). AVX only, so it is
// inlined into the AVX2 and the AVX-512 packing alike.
__attribute__((target("avx2"), always_inline)) inline void transpose_8x8(const float* src,
                                                                         int64_t ld, float* dst,
                                                                         int64_t ldd) {
  __m256 r[8], t[8], s[8];
  for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(src + j * ld);
  for (int j = 0; j < 8; j += 2) {  // t: (r_j[k], r_j+1[k]) pairs for k = 0,1 | 4,5 and 2,3 | 6,7
    t[j] = _mm256_unpacklo_ps(r[j], r[j + 1]);
    t[j + 1] = _mm256_unpackhi_ps(r[j], r[j + 1]);
  }
  for (int j = 0; j < 8; j += 4) {  // s[j + k]: rows j..j+3 at k | k + 4, for k = 0..3
    s[j] = _mm256_shuffle_ps(t[j], t[j + 2], 0x44);
    s[j + 1] = _mm256_shuffle_ps(t[j], t[j + 2], 0xEE);
    s[j + 2] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0x44);
    s[j + 3] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {  // rows 0..3 and 4..7 joined: all 8 columns at k and k + 4
    _mm256_storeu_ps(dst + k * ldd, _mm256_permute2f128_ps(s[k], s[k + 4], 0x20));
    _mm256_storeu_ps(dst + (k + 4) * ldd, _mm256_permute2f128_ps(s[k], s[k + 4], 0x31));
  }
}

// Packs a stored B^T (N,K), op(B)[k, j] = B[j*ldb + k], into dst[k*nr + j] for k in
// [pc, pc+kc) and the w <= nr columns j0.. of one panel, zero past w. A full panel goes 8 x 8
// blocks at a time through registers; the last kc % 8 values of k, and a ragged panel, one
// by one.
__attribute__((target("avx2"), always_inline)) inline void pack_bt_panel(const float* B,
                                                                         int64_t ldb, int64_t pc,
                                                                         int64_t kc, int64_t j0,
                                                                         int64_t w, int64_t nr,
                                                                         float* dst) {
  int64_t k0 = 0;
  if (w == nr)
    for (; k0 + 8 <= kc; k0 += 8)
      for (int64_t part = 0; part < nr; part += 8)
        transpose_8x8(B + (j0 + part) * ldb + pc + k0, ldb, dst + k0 * nr + part, nr);
  for (int64_t j = 0; j < nr; ++j) {
    const float* src = B + (j0 + j) * ldb + pc;
    for (int64_t k = k0; k < kc; ++k) dst[k * nr + j] = j < w ? src[k] : 0.f;
  }
}

}  // namespace poslab::kernel
