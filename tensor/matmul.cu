// matmul.cu — matrix products on the GPU through cuBLAS (CPU: matmul.cpp, through cblas).
//
// Scalar math: C[m,n] = sum_k A[m,k] B[k,n]. cuBLAS is column-major; a row-major matrix with
// leading dimension ld, read column-major with the same ld, is its transpose. So the row-major
// product C = op(A) op(B) is computed as the column-major product C^T = op(B)^T op(A)^T:
// the operands swap places, M and N swap, and each keeps its own Trans flag and ld. Views
// with strides (ld, 1) or (1, ld) (transposed weights, the q/k/v slices) are never copied.
// Products run in plain FP32/FP64 (no TF32; see device.cu), so they agree with the CPU to
// float rounding.
#include <algorithm>

#include "tensor/backend.h"
#include "tensor/cuda_util.cuh"
#include "tensor/reduce.cuh"
#include "tensor/strided.h"

namespace poslab::kernel::cuda {
namespace {

cublasOperation_t op_of(bool trans) {
  return trans ? CUBLAS_OP_T : CUBLAS_OP_N;
}

// Row-major C = alpha op(A) op(B) + beta C for `batch` products whose operands sit sa, sb, sc
// elements apart (0: the same matrix for every product).
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const float* A,
          int64_t lda, int64_t sa, const float* B, int64_t ldb, int64_t sb, double beta, float* C,
          int64_t ldc, int64_t sc, int64_t batch) {
  float al = static_cast<float>(alpha), be = static_cast<float>(beta);
  if (batch == 1)
    CUBLAS_CHECK(gpu::blas().sgemm(gpu::blas().handle, op_of(tb), op_of(ta), N, M, K, &al, B, ldb,
                                   A, lda, &be, C, ldc));
  else
    CUBLAS_CHECK(gpu::blas().sgemm_batched(gpu::blas().handle, op_of(tb), op_of(ta), N, M, K, &al,
                                           B, ldb, sb, A, lda, sa, &be, C, ldc, sc, batch));
}

void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
          int64_t lda, int64_t sa, const double* B, int64_t ldb, int64_t sb, double beta, double* C,
          int64_t ldc, int64_t sc, int64_t batch) {
  if (batch == 1)
    CUBLAS_CHECK(gpu::blas().dgemm(gpu::blas().handle, op_of(tb), op_of(ta), N, M, K, &alpha, B,
                                   ldb, A, lda, &beta, C, ldc));
  else
    CUBLAS_CHECK(gpu::blas().dgemm_batched(gpu::blas().handle, op_of(tb), op_of(ta), N, M, K,
                                           &alpha, B, ldb, sb, A, lda, sa, &beta, C, ldc, sc,
                                           batch));
}

// y (N, K) contiguous: every row starts as the bias b (K), for the GEMM to add x W^T to
// (beta = 1). Block row y walks rows, threads walk columns: no index division per element, as
// a broadcast copy_ (Layout::at) would make.
template <class T>
__global__ void bias_rows_kernel(T* y, const T* b, int64_t N, int64_t K) {
  for (int64_t n = blockIdx.y; n < N; n += gridDim.y)
    for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < K;
         c += int64_t(blockDim.x) * gridDim.x)
      y[n * K + c] = b[c];
}

// The matrix at batch index 0 of x: its batch dims as a view (shape and strides).
Tensor batch_view(const Tensor& x) {
  return x.slice(-1, 0, 1).slice(-2, 0, 1).squeeze(-1).squeeze(-1);
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  int64_t M = a_in.size(-2), K = a_in.size(-1), N = b_in.size(-1);
  Tensor a = a_in, b = b_in;
  Operand oa, ob;
  // A 2-D right operand: fold a's batch dims into M and make one call.
  if (b.dim() == 2 && a.dim() > 2) {
    Shape out_shape(a.shape().begin(), a.shape().end() - 1);
    out_shape.push_back(N);
    Tensor a2 = a.reshape({-1, K});
    if (!blas_layout(a2, &oa)) a2 = a2.contiguous();
    return matmul(a2, b).view(out_shape);
  }
  Shape batch = broadcast_shapes("matmul", Shape(a.shape().begin(), a.shape().end() - 2),
                                 Shape(b.shape().begin(), b.shape().end() - 2));
  if (!blas_layout(a, &oa)) a = a.contiguous(), blas_layout(a, &oa);
  if (!blas_layout(b, &ob)) b = b.contiguous(), blas_layout(b, &ob);
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = Tensor::empty(out_shape, a.dtype(), Device::cuda);
  if (out.numel() == 0) return out;
  if (K == 0) {  // a sum of nothing
    out.fill_(0);
    return out;
  }
  // Batch offsets: the batch dims of a, b and out merged where they allow; the innermost
  // merged dim is one strided-batched call, any outer ones a loop here (rare: the batch
  // dims of a permuted view that do not merge).
  Tensor ab = batch_view(a), bb = batch_view(b), cb = batch_view(out);
  auto l = gpu::make_layouts("matmul", batch, {&ab, &bb, &cb});
  int nd = l[0].nd;
  int64_t inner = nd ? l[0].size[nd - 1] : 1, outer = numel_of(batch) / inner;
  dispatch(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *pa = gpu::storage_ptr<T>(a), *pb = gpu::storage_ptr<T>(b);
    T* pc = static_cast<T*>(out.storage()->data());
    for (int64_t i = 0; i < outer; ++i) {
      int64_t first = i * inner;  // row-major index of this call's first product
      gemm(oa.trans, ob.trans, M, N, K, 1.0, pa + l[0].at(first), oa.ld,
           nd ? l[0].stride[nd - 1] : 0, pb + l[1].at(first), ob.ld, nd ? l[1].stride[nd - 1] : 0,
           0.0, pc + l[2].at(first), N, nd ? l[2].stride[nd - 1] : 0, inner);
    }
  });
  return out;
}

// ---------------------------------------------------------------- linear

// y = x W^T + b: y's rows start as the bias (a broadcast copy), then one GEMM adds x W^T
// (beta = 1).
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  int64_t in = w.size(1), out_f = w.size(0);
  Shape out_shape = x.shape();
  out_shape.back() = out_f;
  Tensor y = Tensor::empty(out_shape, x.dtype(), Device::cuda);
  int64_t N = x.numel() / std::max<int64_t>(in, 1);
  if (y.numel() == 0) return y;
  if (b.defined()) {  // y rows start as the bias, then gemm adds x W^T (beta = 1)
    dim3 grid(static_cast<unsigned>((out_f + gpu::kThreads - 1) / gpu::kThreads),
              static_cast<unsigned>(std::min<int64_t>(N, 65535)));
    dispatch(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      bias_rows_kernel<T>
          <<<grid, gpu::kThreads, 0, gpu::stream()>>>(y.data<T>(), b.data<T>(), N, out_f);
    });
    gpu::check_launch("linear");
  } else if (in == 0)
    y.fill_(0);
  if (in == 0) return y;
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    gemm(false, true, N, out_f, in, 1.0, x.data<T>(), in, 0, w.data<T>(), in, 0,
         b.defined() ? 1.0 : 0.0, y.data<T>(), out_f, 0, 1);
  });
  return y;
}

void linear_backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                     Tensor* db) {
  int64_t in = w.size(1), out_f = w.size(0), N = x.numel() / std::max<int64_t>(in, 1);
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if (dx) {  // dx (N,in) = dy (N,out) @ W (out,in)
      *dx = Tensor::empty(x.shape(), x.dtype(), Device::cuda);
      gemm(false, false, N, in, out_f, 1.0, dy.data<T>(), out_f, 0, w.data<T>(), in, 0, 0.0,
           dx->data<T>(), in, 0, 1);
    }
    if (dw) {  // dW (out,in) = dy^T (out,N) @ x (N,in), added into *dw when given (beta = 1)
      double beta = dw->defined() ? 1.0 : 0.0;
      if (!dw->defined()) *dw = Tensor::empty(w.shape(), w.dtype(), Device::cuda);
      gemm(true, false, out_f, in, N, 1.0, dy.data<T>(), out_f, 0, x.data<T>(), in, 0, beta,
           dw->data<T>(), in, 0, 1);
    }
    if (db && db->defined() && N > 0) {  // db (out) += sum over rows of dy, in the sum's last pass
      gpu::column_sums<T, 1>(gpu::ColumnOf<T>{dy.data<T>(), out_f}, N, out_f,
                             {{db->data<T>()}, true}, "linear_backward");
    }
  });
  if (db && !db->defined()) *db = sum(dy.reshape({N, out_f}), {0}, false);  // db = sum_n dy[n]
}

void add_matmul(Backend& k) {
  k.matmul = matmul;
  k.linear = linear;
  k.linear_backward = linear_backward;
}

}  // namespace poslab::kernel::cuda
