// ops.h — the differentiable ops. Each records a node whose backward is written by hand
// beside its forward (one .cpp per family). Layouts and shapes follow tensor/ops.h.
#pragma once
#include <vector>

#include "autograd/node.h"
#include "tensor/ops.h"

namespace poslab {

// ---- elementwise (elementwise.cpp); binary ops broadcast ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor scale(const Tensor& x, double s);  // x * s
Tensor shift(const Tensor& x, double s);  // x + s
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor pow(const Tensor& x, double p);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);  // cond gets no gradient
Tensor gt(const Tensor& a, const Tensor& b);  // 1 where a > b, else 0; no gradient
Tensor lt(const Tensor& a, const Tensor& b);

// ---- reductions (reduce.cpp) ----
Tensor sum(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdim = false);
Tensor max(const Tensor& x, int64_t axis, bool keepdim = false);

// ---- views and copies (shape.cpp) ----
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor transpose(const Tensor& x, int64_t a, int64_t b);
Tensor permute(const Tensor& x, const std::vector<int64_t>& order);
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor contiguous(const Tensor& x);

// ---- linear algebra (matmul.cpp) ----
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);  // x W^T + b

// ---- neural-network ops (nn_ops.cpp) ----
Tensor softmax(const Tensor& x);      // along the last axis
Tensor log_softmax(const Tensor& x);  // along the last axis
Tensor gelu(const Tensor& x);         // tanh form
Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps = 1e-5);
Tensor embedding(const Tensor& table, const Ids& ids);
// mean cross-entropy of logits (N,V) against targets (N); row_loss gets the per-row losses
Tensor cross_entropy(const Tensor& logits, const Ids& targets, Tensor* row_loss = nullptr);

}  // namespace poslab
