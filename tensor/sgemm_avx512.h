// sgemm_avx512.h — our own f32 GEMM for AVX-512 CPUs (see sgemm_avx512.cpp for why and how).
// kernel::gemm<float> calls it when sgemm_avx512_enabled(), else OpenBLAS's cblas_sgemm.
#pragma once
#include <cstdint>

namespace poslab::kernel {

// True when the CPU has AVX-512F and POSLAB_GEMM is not "blas" (decided once per process).
bool sgemm_avx512_enabled();

// Row-major C (M,N) = alpha * op(A) op(B) + beta * C, op(X) = X^T when trans; same contract as
// cblas_sgemm with CblasRowMajor. beta == 0 never reads C.
void sgemm_avx512(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                  const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                  int64_t ldc);

}  // namespace poslab::kernel
