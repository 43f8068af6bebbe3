// ops.h — the kernels of poslab behind a Tensor-level API (namespace poslab::kernel).
//
// These functions check shapes, dispatch on device and dtype, and run the loops; they record
// no gradients. The differentiable ops in autograd/ call them for both their forward and
// their backward, so each backward formula lives beside its forward in autograd/, while the
// loops live here (one file per family, the scalar math in a comment above each loop).
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace poslab {

// Integer token ids with a shape, e.g. (B,T). Kept apart from Tensor, whose dtypes are the
// two float types.
struct Ids {
  std::vector<int32_t> data;
  Shape shape;
};

namespace kernel {

// ---- elementwise (elementwise.cpp); binary ops broadcast like NumPy ----
enum class BinaryOp { add, sub, mul, div, maximum, gt, lt, eq };
enum class UnaryOp { neg, exp, log, tanh, sqrt, abs };
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor unary(UnaryOp op, const Tensor& x);
Tensor pow_scalar(const Tensor& x, double p);                        // x^p
Tensor affine(const Tensor& x, double scale, double shift);          // x*scale + shift
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);  // cond != 0 ? a : b
// dst += alpha*src; dst may be a strided view (a slice) on the CPU, never an expanded one
void add_(const Tensor& dst, const Tensor& src, double alpha = 1);
void scale_(const Tensor& dst, double alpha);  // dst *= alpha
bool all_finite(const Tensor& x);
// Index of the first of xs holding a NaN or +-inf, or -1: on the GPU one launch and one
// read-back for the whole list (the trainer checks every weight after every update).
int64_t first_non_finite(const std::vector<Tensor>& xs);
// Sets every tensor of xs to 0: on the GPU one launch for the whole list (zero_grad, each step).
void zero_(const std::vector<Tensor>& xs);

// ---- reductions (reduce.cpp) ----
Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim);  // {} = all axes
Tensor sum_to(const Tensor& x, const Shape& shape);  // undo broadcasting by summing
Tensor max(const Tensor& x, int64_t axis, bool keepdim);
double sum_squares(const Tensor& x);  // for the global grad norm

// ---- matrix products (matmul.cpp) through cblas_?gemm ----
// (...,M,K) @ (...,K,N) -> (...,M,N); batch dims broadcast; transposed operands (stride 1 on
// the second-to-last dim) are passed to BLAS as Trans, never copied.
Tensor matmul(const Tensor& a, const Tensor& b);
// Row-major C = alpha * op(A) op(B) + beta * C on raw pointers.
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
          int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc);
// y = x W^T + b with x: (...,in), W: (out,in), b: (out) or undefined -> (...,out)
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);
// Each gradient asked for (a non-null pointer) is made; where *dw or *db is already a tensor
// (contiguous, W's or b's shape; a parameter's gradient buffer), it is added into instead.
void linear_backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                     Tensor* db);

// ---- softmax family along the last axis (softmax.cpp) ----
Tensor softmax(const Tensor& x);
Tensor softmax_backward(const Tensor& y, const Tensor& dy);
Tensor log_softmax(const Tensor& x);
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy);
// mean over rows of -log softmax(logits)[target]; logits: (N,V); saves the probabilities.
// Returns per-row losses in *row_loss when given (used by eval's per-position buckets).
Tensor cross_entropy(const Tensor& logits, const Ids& targets, Tensor* probs,
                     Tensor* row_loss = nullptr);
// dloss: the incoming gradient, one element on probs' device (read there: on the GPU the host
// does not wait for it).
Tensor cross_entropy_backward(const Tensor& probs, const Ids& targets, const Tensor& dloss);

// ---- normalisation and activation ----
Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps, Tensor* mean,
                  Tensor* rstd);
// dw, db: added into where already a tensor, as for linear_backward.
void layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                         const Tensor& dy, Tensor* dx, Tensor* dw, Tensor* db);
Tensor gelu(const Tensor& x);
Tensor gelu_backward(const Tensor& x, const Tensor& dy);

// ---- embedding gather and its scatter-add (embedding.cpp) ----
Tensor embedding(const Tensor& table, const Ids& ids);  // (V,C), ids (...) -> (...,C)
Tensor embedding_backward(const Tensor& dout, const Ids& ids, int64_t V);

}  // namespace kernel
}  // namespace poslab
