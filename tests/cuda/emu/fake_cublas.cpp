// libcublas.so.13 for the CPU emulator (poslab opens cuBLAS with dlopen; run.sh puts this one
// first on LD_LIBRARY_PATH): column-major GEMMs as plain loops in double, checking the
// arguments as cuBLAS does (sizes, leading dimensions).
#include <cstdio>
#include <stdexcept>

#include "cublas_v2.h"

extern "C" void emu_access(int on);
extern "C" void emu_count(int what);

template <class T>
static cublasStatus_t gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                           const T* alpha, const T* A, int lda, long long sa, const T* B, int ldb,
                           long long sb, const T* beta, T* C, int ldc, long long sc, int batch) {
  // column-major: op(A) m x k, op(B) k x n, C m x n
  int rows_a = ta == CUBLAS_OP_N ? m : k, rows_b = tb == CUBLAS_OP_N ? k : n;
  if (m < 0 || n < 0 || k < 0 || lda < (rows_a > 1 ? rows_a : 1) ||
      ldb < (rows_b > 1 ? rows_b : 1) || ldc < (m > 1 ? m : 1)) {
    fprintf(stderr, "fake cublas: invalid value m=%d n=%d k=%d lda=%d ldb=%d ldc=%d ta=%d tb=%d\n",
            m, n, k, lda, ldb, ldc, ta, tb);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  emu_count(1);
  emu_access(1);
  for (int bi = 0; bi < batch; ++bi) {
    const T *a = A + bi * sa, *b = B + bi * sb;
    T* c = C + bi * sc;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double s = 0;
        for (int p = 0; p < k; ++p) {
          T x = ta == CUBLAS_OP_N ? a[i + p * (long)lda] : a[p + i * (long)lda];
          T y = tb == CUBLAS_OP_N ? b[p + j * (long)ldb] : b[j + p * (long)ldb];
          s += double(x) * double(y);
        }
        T& out = c[i + j * (long)ldc];
        out = *beta == T(0) ? T(*alpha * s) : T(*alpha * s + *beta * out);
      }
  }
  emu_access(0);
  return CUBLAS_STATUS_SUCCESS;
}

extern "C" {
cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
  *h = nullptr;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t, cudaStream_t) {
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t) {
  return CUBLAS_STATUS_SUCCESS;
}
const char* cublasGetStatusString(cublasStatus_t) {
  return "emulated cuBLAS error";
}
cublasStatus_t cublasSgemm_v2(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m,
                              int n, int k, const float* al, const float* A, int lda,
                              const float* B, int ldb, const float* be, float* C, int ldc) {
  return gemm(ta, tb, m, n, k, al, A, lda, 0, B, ldb, 0, be, C, ldc, 0, 1);
}
cublasStatus_t cublasDgemm_v2(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m,
                              int n, int k, const double* al, const double* A, int lda,
                              const double* B, int ldb, const double* be, double* C, int ldc) {
  return gemm(ta, tb, m, n, k, al, A, lda, 0, B, ldb, 0, be, C, ldc, 0, 1);
}
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb,
                                         int m, int n, int k, const float* al, const float* A,
                                         int lda, long long sa, const float* B, int ldb,
                                         long long sb, const float* be, float* C, int ldc,
                                         long long sc, int batch) {
  return gemm(ta, tb, m, n, k, al, A, lda, sa, B, ldb, sb, be, C, ldc, sc, batch);
}
cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb,
                                         int m, int n, int k, const double* al, const double* A,
                                         int lda, long long sa, const double* B, int ldb,
                                         long long sb, const double* be, double* C, int ldc,
                                         long long sc, int batch) {
  return gemm(ta, tb, m, n, k, al, A, lda, sa, B, ldb, sb, be, C, ldc, sc, batch);
}
}
