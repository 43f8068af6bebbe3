// matmul.cpp — matrix products: f32 through our own sgemm where the CPU has AVX2+FMA or
// AVX-512 (sgemm.cpp), otherwise — and always for f64 — through OpenBLAS's cblas_?gemm.
//
// Scalar math: C[m,n] = sum_k A[m,k] B[k,n]. BLAS wants each operand as a row-major matrix
// with a leading dimension, or its transpose. A view whose last two dims have strides
// (ld, 1) is passed as NoTrans, one with strides (1, ld) as Trans: transposed weights and
// the q/k/v slices of a fused projection never get copied.
#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "tensor/backend.h"
#include "tensor/sgemm.h"
#include "tensor/strided.h"

namespace poslab::kernel {

template <>
void gemm<float>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                 int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (const SgemmKernel* uk = sgemm_kernel())
    return sgemm(*uk, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N,
              K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <>
void gemm<double>(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
                  int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N,
              K, alpha, A, lda, B, ldb, beta, C, ldc);
}

bool blas_layout(const Tensor& t, Operand* op) {
  int64_t r = t.shape()[t.dim() - 2], c = t.shape()[t.dim() - 1];
  int64_t s0 = t.strides()[t.dim() - 2], s1 = t.strides()[t.dim() - 1];
  if ((s1 == 1 || c == 1) && (s0 >= std::max<int64_t>(c, 1) || r == 1)) {
    *op = {false, r == 1 ? std::max<int64_t>(c, 1) : s0};
    return true;
  }
  if ((s0 == 1 || r == 1) && (s1 >= std::max<int64_t>(r, 1) || c == 1)) {
    *op = {true, c == 1 ? std::max<int64_t>(r, 1) : s1};
    return true;
  }
  return false;
}

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  check_same("matmul", a_in, b_in);
  if (a_in.dim() < 2 || b_in.dim() < 2)
    fail("matmul: expected operands with at least 2 dims, but got ", shape_str(a_in.shape()),
         " and ", shape_str(b_in.shape()));
  int64_t K = a_in.size(-1);
  if (b_in.size(-2) != K)
    fail("matmul: expected (...,M,K) @ (...,K,N), but got ", shape_str(a_in.shape()), " @ ",
         shape_str(b_in.shape()), " (K = ", K, " vs ", b_in.size(-2), ")");
  return backend(a_in.device()).matmul(a_in, b_in);
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  check_same("linear", x, w);
  if (w.dim() != 2 || x.dim() < 1 || x.size(-1) != w.size(1))
    fail("linear: expected x (...,in) and W (out,in), but got x ", shape_str(x.shape()), " and W ",
         shape_str(w.shape()));
  int64_t out_f = w.size(0);
  if (b.defined() && (b.dim() != 1 || b.size(0) != out_f))
    fail("linear: expected bias (", out_f, "), but got ", shape_str(b.shape()));
  return backend(x.device())
      .linear(x.contiguous(), w.contiguous(), b.defined() ? b.contiguous() : Tensor());
}

void linear_backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                     Tensor* db) {
  check_into("linear_backward", dw, w.shape(), w, "dW");
  check_into("linear_backward", db, {w.size(0)}, w, "db");
  return backend(x.device())
      .linear_backward(x.contiguous(), w.contiguous(), dy.contiguous(), dx, dw, db);
}

namespace cpu {
namespace {

// Where the matrix of batch i starts in x's storage: i counts the broadcast batch shape
// `batch` in row-major order, and x's batch dims (all but its last two) are aligned with the
// last dims of `batch`; a dim x lacks, or holds once (size 1), is broadcast: it moves nothing.
int64_t batch_offset(const Tensor& x, const Shape& batch, int64_t i) {
  const int64_t missing = static_cast<int64_t>(batch.size()) - (x.dim() - 2);
  int64_t offset = x.offset();
  for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
    const int64_t index = i % batch[d];
    i /= batch[d];
    if (d >= missing && x.size(d - missing) != 1) offset += index * x.strides()[d - missing];
  }
  return offset;
}

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  int64_t M = a_in.size(-2), K = a_in.size(-1), N = b_in.size(-1);
  Tensor a = a_in, b = b_in;
  // A 2-D right operand: fold a's batch dims into M and make one BLAS call.
  if (b.dim() == 2 && a.dim() > 2) {
    Shape out_shape(a.shape().begin(), a.shape().end() - 1);
    out_shape.push_back(N);
    Operand oa;
    Tensor a2 = a.reshape({-1, K});
    if (!blas_layout(a2, &oa)) a2 = a2.contiguous();
    return matmul(a2, b).view(out_shape);
  }
  Shape batch = broadcast_shapes("matmul", Shape(a.shape().begin(), a.shape().end() - 2),
                                 Shape(b.shape().begin(), b.shape().end() - 2));
  Operand oa, ob;
  if (!blas_layout(a, &oa)) a = a.contiguous(), blas_layout(a, &oa);
  if (!blas_layout(b, &ob)) b = b.contiguous(), blas_layout(b, &ob);
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = Tensor::empty(out_shape, a.dtype());
  if (out.numel() == 0) return out;
  int64_t nb = numel_of(batch);
  bool parallel_batches = nb > 1 && M * N * K < (1 << 21);
  dispatch(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* pa = static_cast<const T*>(a.storage()->data());
    const T* pb = static_cast<const T*>(b.storage()->data());
    T* po = out.data<T>();
    auto one = [&](int64_t i) {
      const T* A = pa + batch_offset(a, batch, i);
      const T* B = pb + batch_offset(b, batch, i);
      if (K == 0) return std::fill(po + i * M * N, po + (i + 1) * M * N, T(0));
      gemm<T>(oa.trans, ob.trans, M, N, K, T(1), A, oa.ld, B, ob.ld, T(0), po + i * M * N, N);
    };
    // Small products: threads over batches (each product then runs on one thread). Otherwise
    // no parallel region of our own at all: an `if(false)` region is still a region, and the
    // product's threads would become a nested team, which libgomp starts afresh (new threads)
    // on every call.
    if (parallel_batches) {
#pragma omp parallel for
      for (int64_t i = 0; i < nb; ++i) one(i);
    } else {
      for (int64_t i = 0; i < nb; ++i) one(i);
    }
  });
  return out;
}

// ---------------------------------------------------------------- linear

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  int64_t in = w.size(1), out_f = w.size(0);
  Shape out_shape = x.shape();
  out_shape.back() = out_f;
  Tensor y = Tensor::empty(out_shape, x.dtype());
  int64_t N = x.numel() / std::max<int64_t>(in, 1);
  const SgemmKernel* uk = sgemm_kernel();
  if (x.dtype() == DType::f32 && uk && N > 0 && out_f > 0) {  // the bias in sgemm's epilogue
    sgemm(*uk, false, true, N, out_f, in, 1.f, x.data<float>(), in, w.data<float>(), in, 0.f,
          y.data<float>(), out_f, b.defined() ? b.data<float>() : nullptr);
    return y;
  }
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* py = y.data<T>();
    T beta = 0;
    if (b.defined()) {  // y rows start as the bias, then gemm adds x W^T (beta = 1)
      const T* pb = b.data<T>();
#pragma omp parallel for if (N * out_f > kParallelGrain)
      for (int64_t n = 0; n < N; ++n) std::copy(pb, pb + out_f, py + n * out_f);
      beta = 1;
    }
    if (N > 0 && out_f > 0)
      gemm<T>(false, true, N, out_f, in, T(1), x.data<T>(), in, w.data<T>(), in, beta, py, out_f);
  });
  return y;
}

void linear_backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                     Tensor* db) {
  int64_t in = w.size(1), out_f = w.size(0), N = x.numel() / std::max<int64_t>(in, 1);
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if (dx) {  // dx (N,in) = dy (N,out) @ W (out,in)
      *dx = Tensor::empty(x.shape(), x.dtype());
      gemm<T>(false, false, N, in, out_f, T(1), dy.data<T>(), out_f, w.data<T>(), in, T(0),
              dx->data<T>(), in);
    }
    if (dw) {  // dW (out,in) = dy^T (out,N) @ x (N,in), added into *dw when given (beta = 1)
      T beta = dw->defined() ? T(1) : T(0);
      if (!dw->defined()) *dw = Tensor::empty(w.shape(), w.dtype());
      gemm<T>(true, false, out_f, in, N, T(1), dy.data<T>(), out_f, x.data<T>(), in, beta,
              dw->data<T>(), in);
    }
  });
  if (db) add_or_set(db, sum(dy.reshape({N, out_f}), {0}, false));  // db (out) = sum_n dy[n]
}

}  // namespace

void add_matmul(Backend& k) {
  k.matmul = matmul;
  k.linear = linear;
  k.linear_backward = linear_backward;
}

}  // namespace cpu
}  // namespace poslab::kernel
