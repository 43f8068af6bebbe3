// cublas_v2.h for the CPU emulator: the types and the calls poslab makes (fake_cublas.cpp).
#pragma once
#include "cuda_runtime.h"
#define CUBLAS_VER_MAJOR 13
typedef struct cublasContext* cublasHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUBLAS_DEFAULT_MATH = 0 } cublasMath_t;
extern "C" {
cublasStatus_t cublasCreate_v2(cublasHandle_t* h);
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s);
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m);
const char* cublasGetStatusString(cublasStatus_t s);
cublasStatus_t cublasSgemm_v2(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                              const float*, const float*, int, const float*, int, const float*,
                              float*, int);
cublasStatus_t cublasDgemm_v2(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                              const double*, const double*, int, const double*, int, const double*,
                              double*, int);
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                         int, int, const float*, const float*, int, long long,
                                         const float*, int, long long, const float*, float*, int,
                                         long long, int);
cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                         int, int, const double*, const double*, int, long long,
                                         const double*, int, long long, const double*, double*, int,
                                         long long, int);
}
