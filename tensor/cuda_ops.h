// cuda_ops.h — the GPU twin of every kernel: the same signatures as tensor/ops.h.
//
// Each CPU kernel begins with one dispatch line,
//   if (x.device() == Device::cuda) return cuda::layer_norm(x, w, b, eps, mean, rstd);
// placed after its shape checks, so a CUDA function receives inputs that are already checked
// and only has to run. Each lives in the .cu file beside the CPU file of the same op
// (tensor/layer_norm.cu beside tensor/layer_norm.cpp, nn/attention_op.cu beside
// nn/attention_op.cpp, ...), with the scalar math in a comment above the optimised loop.
//
// The ops of the higher layers (attention, RoPE, dynamic-NTK attention, AdamW) are declared
// here too, with tensor-level types only, so that one file, tensor/device_stub.cpp, stands in
// for all of them in a build without CUDA (where no tensor can be on the GPU, and each stub
// only says so).
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

// ---- fused attention (nn/attention_op.cu), FlashAttention-2 style ----
// The differentiable op itself (it records its node, like nn/attention_op.cpp's attention):
// q: (B,Tq,H,D), k, v: (B,Tk,H,D), each with unit stride along D -> out (B,Tq,H,D)
// contiguous, with the semantics of nn/attention_op.h (scale, ALiBi slopes, causal mask,
// q_pos0). It saves out and the log-sum-exp of each score row (B,H,Tq), never P: the
// backward recomputes the probabilities tile by tile.
struct AttentionArgs {
  bool causal = true;
  double scale = 1;
  std::vector<double> alibi_slopes;  // one per head, or empty
  int64_t q_pos0 = 0;
};
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionArgs& a);

// ---- RoPE (posenc/rope.cu, posenc/rope_scaling.cu) ----
// x: (B,T,H,D) with unit stride along D; cos, sin: (T, r/2) -> (B,T,H,D) contiguous with the
// first r dims of each head rotated in pairs (2i, 2i+1), or (i, i + r/2) when half_layout;
// sign = -1 rotates backwards (the backward pass).
Tensor rope_apply(const Tensor& x, const Tensor& cos, const Tensor& sin, bool half_layout,
                  double sign);
// Causal attention with dynamic-NTK RoPE on the first r dims, evaluation only
// (posenc/rope_scaling.h).
Tensor dynamic_rope_attention(const Tensor& q, const Tensor& k, const Tensor& v, double theta,
                              int64_t T0, int64_t q_pos0, int64_t r, bool half_layout);

// ---- the optimizer (train/optimizer.cu): one launch over every parameter ----
struct AdamWArgs {
  double lr, beta1, beta2, eps, bc1, bc2;  // bc = 1 - beta^t, the bias corrections
};
// params[i] -= lr (mhat / (sqrt(vhat) + eps) + decay[i] params[i]), m and v updated in place.
void adamw_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& m, const std::vector<Tensor>& v,
                  const std::vector<double>& decay, const AdamWArgs& a);
// sqrt(sum of squares of every tensor), one read back; then, when above max_norm, every
// tensor scaled by max_norm / norm in one launch. Returns the norm before clipping.
double clip_grad_norm(const std::vector<Tensor>& grads, double max_norm);

}  // namespace poslab::kernel::cuda
