// cuda_ops.h — the GPU twin of every tensor kernel: the same signatures as tensor/ops.h.
//
// Each CPU kernel begins with one dispatch line,
//   if (x.device() == Device::cuda) return cuda::layer_norm(x, w, b, eps, mean, rstd);
// placed after its shape checks, so a CUDA function receives inputs that are already checked
// and only has to run. Each lives in the .cu file beside the CPU file of the same op
// (tensor/layer_norm.cu beside tensor/layer_norm.cpp, ...), with the scalar math in a comment
// above the optimised loop. In a build without CUDA, tensor/device_stub.cpp stands in for
// them (no tensor can be on the GPU there, and each stub only says so).
//
// Only tensor-level kernels are declared here. A higher layer declares its own GPU kernels in
// its own header and stubs them in its own cuda_stub.cpp (nn/attention_kernels.h,
// posenc/rope_kernels.h, train/optimizer_kernels.h).
#pragma once
#include <vector>

#include "tensor/ops.h"

namespace poslab::kernel::cuda {

// ---- copies (tensor.cu): dst = src with any strides, src broadcast to dst's shape ----
void copy(const Tensor& dst, const Tensor& src);
void fill(const Tensor& dst, double value);

// ---- elementwise (elementwise.cu) ----
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor unary(UnaryOp op, const Tensor& x);
Tensor pow_scalar(const Tensor& x, double p);
Tensor affine(const Tensor& x, double scale, double shift);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
void add_(const Tensor& dst, const Tensor& src, double alpha);
void scale_(const Tensor& dst, double alpha);
int64_t first_non_finite(const std::vector<Tensor>& xs);  // GPU tensors of one dtype
void zero_(const std::vector<Tensor>& xs);                // contiguous GPU tensors of one dtype

// ---- reductions (reduce.cu) ----
Tensor sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdim);
Tensor max(const Tensor& x, int64_t axis, bool keepdim);
double sum_squares(const Tensor& x);

// ---- matrix products (matmul.cu) through cuBLAS ----
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);
void linear_backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                     Tensor* db);

// ---- softmax family and cross-entropy (softmax.cu) ----
Tensor softmax(const Tensor& x);
Tensor softmax_backward(const Tensor& y, const Tensor& dy);
Tensor log_softmax(const Tensor& x);
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy);
Tensor cross_entropy(const Tensor& logits, const Ids& targets, Tensor* probs, Tensor* row_loss);
Tensor cross_entropy_backward(const Tensor& probs, const Ids& targets, const Tensor& dloss);

// ---- normalisation, activation, embedding (layer_norm.cu, gelu.cu, embedding.cu) ----
Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps, Tensor* mean,
                  Tensor* rstd);
void layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                         const Tensor& dy, Tensor* dx, Tensor* dw, Tensor* db);
Tensor gelu(const Tensor& x);
Tensor gelu_backward(const Tensor& x, const Tensor& dy);
Tensor embedding(const Tensor& table, const Ids& ids);
Tensor embedding_backward(const Tensor& dout, const Ids& ids, int64_t V);

}  // namespace poslab::kernel::cuda
