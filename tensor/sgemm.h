// sgemm.h — our own f32 matrix product: one blocked driver (sgemm.cpp, Goto's method) and a
// register micro-kernel per vector ISA (sgemm_avx2.cpp, sgemm_avx512.cpp), picked at run time.
// kernel::gemm<float> calls sgemm with sgemm_kernel(), or OpenBLAS's cblas_sgemm when that is
// null (a CPU without AVX2+FMA, POSLAB_ISA=generic, or POSLAB_GEMM=blas).
#pragma once
#include <cstdint>

#include "tensor/cpu_isa.h"

namespace poslab::kernel {

// What the driver needs from one ISA. Both functions are compiled for that ISA only.
struct SgemmKernel {
  const char* name;  // "avx2 6x16", for benchmarks and test messages
  int64_t mr, nr;    // the register tile of C: mr rows x nr columns
  // Packs op(B)[pc:pc+kc, j0:j0+nr] into dst[k*nr + j], zero past column n (the edge of C).
  void (*pack_b)(const float* B, bool tb, int64_t ldb, int64_t pc, int64_t kc, int64_t j0,
                 int64_t n, float* dst);
  // C[0:h, 0:w] = alpha * sum_k a[0:mr, k] b[k, 0:nr] + beta * C (beta == 0 never reads C),
  // plus bias[0:w] on every row when bias is not null (the epilogue of a linear layer).
  // Element (i,k) of the A strip is a[i*rs + k*cs]: (1, mr) packed, (1, lda) for stored A^T
  // read in place, (lda, 1) for stored A read in place. Row k of the B panel starts at
  // b + k*bs: bs = nr packed, ldb for a panel of stored B read in place.
  void (*micro)(int64_t kc, const float* a, int64_t rs, int64_t cs, const float* b, int64_t bs,
                float alpha, float beta, const float* bias, float* C, int64_t ldc, int64_t h,
                int64_t w);
};

extern const SgemmKernel sgemm_avx2_kernel;    // 6 x 16, ymm registers, AVX2 + FMA
extern const SgemmKernel sgemm_avx512_kernel;  // 12 x 32, zmm registers, AVX-512F
#ifdef __wasm_simd128__
extern const SgemmKernel sgemm_wasm_kernel;  // 4 x 8, WebAssembly SIMD (the explorer's build)
#endif

// The kernel for an ISA (null for generic: OpenBLAS multiplies there; in the WebAssembly build,
// which has no OpenBLAS, generic is sgemm_wasm_kernel).
const SgemmKernel* sgemm_kernel_for(Isa isa);

// The kernel gemm<float> uses on this machine: sgemm_kernel_for(cpu_isa()), or null when
// POSLAB_GEMM=blas forces OpenBLAS (decided once per process).
const SgemmKernel* sgemm_kernel();

// Row-major C (M,N) = alpha * op(A) op(B) + beta * C, op(X) = X^T when trans; same contract as
// cblas_sgemm with CblasRowMajor. beta == 0 never reads C. With a bias (N), C += bias on every
// row: y = x W^T + b in one pass (the same bits as C = b first, then beta = 1, which is what
// it replaces: the bias joins the first k-block's sum). The caller makes sure the CPU runs
// `uk`'s instructions (cpu_isa_supported() >= its ISA).
void sgemm(const SgemmKernel& uk, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
           float alpha, const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
           float* C, int64_t ldc, const float* bias = nullptr);

// B packed once for several products that share it (attention multiplies every row block of
// a head by the same K^T and V). op(B) (K, N) is stored in panels of NR columns: panel p at
// data + p*NR*K, element (k, j) of it at k*NR + j, zero past column N.
// With ld > 0, data is instead a stored (not transposed) B read in place, element (k, j) at
// k*ld + j: its rows already are panel rows when N is a multiple of NR (sgemm_in_place).
struct PackedB {
  const float* data;
  int64_t K, N;
  int64_t ld = 0;
};
// Whether a stored op(B) (K, N) with rows ldb apart is read in place, by sgemm and by
// sgemm_prepacked (PackedB::ld): not transposed, only full panels (no ragged edge to pad with
// zeros), and rows close enough for a panel to stay in L2 (sgemm.cpp says why).
bool sgemm_in_place(const SgemmKernel& uk, bool tb, int64_t N, int64_t ldb);
// Whether sgemm runs a product as its transpose, C^T = op(B)^T op(A)^T (much wider than tall,
// deep, no bias: sgemm.cpp says why). The bits are those of the product run as it is.
bool sgemm_runs_transposed(int64_t M, int64_t N, int64_t K, bool bias);
int64_t sgemm_packed_floats(const SgemmKernel& uk, int64_t K, int64_t N);  // size of the buffer
void sgemm_pack(const SgemmKernel& uk, bool tb, int64_t K, int64_t N, const float* B, int64_t ldb,
                float* dst);

// The causal structure of one row block of attention, which lets sgemm_prepacked skip work
// that is known to give zeros or to be thrown away. With row i and column j of C, k the depth:
//   cols    only C[i, j <= i + off] is wanted: tiles right of a strip's last row's diagonal
//           are not computed (left as they were). Scores S = Q K^T, dP = dO V^T.
//   k_upto  op(A)[i, k] == 0 for k > i + off: a strip's sum stops at its last row's k.
//           O = P V, dQ = dS K (P and dS are 0 right of the diagonal).
//   k_from  op(A)[i, k] == 0 for k < i - off: a strip's sum starts at its first row's k.
//           dV = P^T dO, dK = dS^T Q (key i sees no query before it).
// A skipped term is 0 * b, so a sum differs at most in the sign of a zero.
struct CausalBand {
  enum Kind { none, cols, k_upto, k_from } kind = none;
  int64_t off = 0;
};

// C (M,n) = alpha * op(A) (M,kc) times the packed op(B)[0:kc, 0:n] + beta * C, for n <= b.N and
// kc <= b.K: a leading block of the packed matrix. One thread (the caller's); the same sums in
// the same order as sgemm on the unpacked B, so the same results (with a band: see above).
void sgemm_prepacked(const SgemmKernel& uk, bool ta, int64_t M, int64_t n, int64_t kc, float alpha,
                     const float* A, int64_t lda, const PackedB& b, float beta, float* C,
                     int64_t ldc, CausalBand band = {});

}  // namespace poslab::kernel
