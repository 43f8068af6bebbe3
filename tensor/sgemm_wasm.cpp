// sgemm_wasm.cpp — the WebAssembly SIMD micro-kernel and B packing of our sgemm (driver:
// sgemm.cpp), for the explorer (docs/explorer.md): poslab compiled with emscripten, -msimd128.
// Only that build compiles this file; sgemm_kernel_for(Isa::generic) picks it there.
//
// WebAssembly SIMD has 128-bit vectors (4 floats) and no fused multiply-add, so a step is a
// multiply and an add. The micro-kernel holds a 4 x 8 tile of C in 8 vectors; per k it loads
// two vectors of B, splats 4 values of A and issues 8 multiplies and 8 adds. With the two B
// vectors and one splat that is 11 live vectors: the engine maps them to the 16 SSE/NEON
// registers of the machine that runs the page without spilling (a 6 x 8 tile needs 15 and
// leaves the engine no room).
//
// Scalar math (one tile; Element (i,k) of the A strip is a[i*rs + k*cs], row k of the B
// panel starts at b + k*bs, sgemm.h):
//   acc[i][j] = sum_k a(i, k) b(k, j)            i < 4, j < 8
//   C[i][j]   = alpha acc[i][j] + beta C[i][j] (+ bias[j])     i < h, j < w
#include <wasm_simd128.h>

#include <algorithm>

#include "tensor/sgemm.h"

namespace poslab::kernel {

namespace {

constexpr int64_t MR = 4, NR = 8;  // micro-tile of C held in registers

// Packs op(B)[pc:pc+kc, j0:j0+NR] into dst[k*NR + j], zero past column n (the edge of C).
void pack_b_panel(const float* B, bool tb, int64_t ldb, int64_t pc, int64_t kc, int64_t j0,
                  int64_t n, float* dst) {
  const int64_t w = std::min(NR, n - j0);
  for (int64_t k = 0; k < kc; ++k) {
    float* d = dst + k * NR;
    if (!tb && w == NR) {  // a whole row of 8 contiguous floats
      const float* src = B + (pc + k) * ldb + j0;
      wasm_v128_store(d, wasm_v128_load(src));
      wasm_v128_store(d + 4, wasm_v128_load(src + 4));
      continue;
    }
    for (int64_t j = 0; j < NR; ++j)
      d[j] = j >= w ? 0.f : tb ? B[(j0 + j) * ldb + pc + k] : B[(pc + k) * ldb + j0 + j];
  }
}

// C[0:h, 0:w] = alpha*acc + beta*C (+ bias[0:w]); beta == 0 never reads C (it may hold NaN).
void store_tile(const v128_t (&acc)[MR][2], float alpha, float beta, const float* bias, float* C,
                int64_t ldc, int64_t h, int64_t w) {
  const v128_t va = wasm_f32x4_splat(alpha), vb = wasm_f32x4_splat(beta);
  float bias_row[NR] = {};
  if (bias) std::copy(bias, bias + w, bias_row);
  const v128_t bias0 = wasm_v128_load(bias_row), bias1 = wasm_v128_load(bias_row + 4);
  for (int64_t i = 0; i < h; ++i) {
    float* c = C + i * ldc;
    v128_t r0 = wasm_f32x4_mul(va, acc[i][0]), r1 = wasm_f32x4_mul(va, acc[i][1]);
    if (w == NR) {
      if (beta != 0.f) {
        r0 = wasm_f32x4_add(wasm_f32x4_mul(vb, wasm_v128_load(c)), r0);
        r1 = wasm_f32x4_add(wasm_f32x4_mul(vb, wasm_v128_load(c + 4)), r1);
      }
      if (bias) r0 = wasm_f32x4_add(r0, bias0), r1 = wasm_f32x4_add(r1, bias1);
      wasm_v128_store(c, r0);
      wasm_v128_store(c + 4, r1);
      continue;
    }
    float row[NR];  // a ragged tile: the same arithmetic lane by lane, then the w valid ones
    wasm_v128_store(row, r0);
    wasm_v128_store(row + 4, r1);
    for (int64_t j = 0; j < w; ++j) {
      float v = row[j];
      if (beta != 0.f) v = beta * c[j] + v;
      if (bias) v += bias_row[j];
      c[j] = v;
    }
  }
}

// The 4 x 8 micro-kernel: acc = sum_k a[0:4, k] b[k, 0:8] (an outer product per k).
void micro_kernel(int64_t kc, const float* a, int64_t rs, int64_t cs, const float* b, int64_t bs,
                  float alpha, float beta, const float* bias, float* C, int64_t ldc, int64_t h,
                  int64_t w) {
  v128_t acc[MR][2];
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = wasm_f32x4_splat(0.f);
  for (int64_t k = 0; k < kc; ++k, b += bs) {
    const v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);
    const float* ak = a + k * cs;
#pragma clang loop unroll(full)
    for (int i = 0; i < MR; ++i) {
      const v128_t ai = wasm_f32x4_splat(ak[i * rs]);
      acc[i][0] = wasm_f32x4_add(acc[i][0], wasm_f32x4_mul(ai, b0));
      acc[i][1] = wasm_f32x4_add(acc[i][1], wasm_f32x4_mul(ai, b1));
    }
  }
  store_tile(acc, alpha, beta, bias, C, ldc, h, w);
}

}  // namespace

const SgemmKernel sgemm_wasm_kernel = {"wasm simd128 4x8", MR, NR, pack_b_panel, micro_kernel};

}  // namespace poslab::kernel
