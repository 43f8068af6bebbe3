// cblas.h — the two BLAS calls of tensor/matmul.cpp, for the explorer's WebAssembly build,
// which has no OpenBLAS. f32 products never come here: our sgemm multiplies them with the
// WebAssembly SIMD micro-kernel (tensor/sgemm_wasm.cpp). What is left is f64 (which inference
// does not use): plain loops, the scalar math of matmul.cpp's header.
//   C[m,n] = alpha * sum_k op(A)[m,k] op(B)[k,n] + beta * C[m,n]   (beta == 0: C not read)
#pragma once
#include <cstdint>

enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112 };

template <class T>
inline void poslab_compat_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N,
                               int64_t K, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb,
                               T beta, T* C, int64_t ldc) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      T acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += (ta == CblasTrans ? A[k * lda + m] : A[m * lda + k]) *
               (tb == CblasTrans ? B[n * ldb + k] : B[k * ldb + n]);
      C[m * ldc + n] = alpha * acc + (beta == 0 ? T(0) : beta * C[m * ldc + n]);
    }
}

inline void cblas_sgemm(CBLAS_ORDER, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N,
                        int64_t K, float alpha, const float* A, int64_t lda, const float* B,
                        int64_t ldb, float beta, float* C, int64_t ldc) {
  poslab_compat_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline void cblas_dgemm(CBLAS_ORDER, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N,
                        int64_t K, double alpha, const double* A, int64_t lda, const double* B,
                        int64_t ldb, double beta, double* C, int64_t ldc) {
  poslab_compat_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
