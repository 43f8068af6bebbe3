// backend.h — the one place a tensor kernel is chosen by device.
//
// Each op is declared once, in ops.h. Its wrapper checks the shapes, then hands the checked
// inputs to the kernel of their device:
//   Tensor layer_norm(x, w, b, eps, mean, rstd) {
//     ...shape checks...
//     return backend(x.device()).layer_norm(x, w, b, eps, mean, rstd);
//   }
// A Backend is a table with one entry per op, typed by the op's own declaration (decltype),
// so a signature is written once. Its CPU entries are the loops in each family's .cpp file
// (namespace kernel::cpu), its GPU entries the kernels in the .cu file beside it (namespace
// kernel::cuda, the scalar math in a comment above each). Each family file fills its own
// entries (add_<family> below); backend() builds each table once, on first use.
//
// Only tensor-level kernels are here. A higher layer keeps its GPU kernels in its own header
// and chooses them at its one call site (nn/attention_kernels.h, posenc/rope_kernels.h,
// train/optimizer_kernels.h).
#pragma once
#include <vector>

#include "tensor/ops.h"

namespace poslab::kernel {

struct Backend {
  // copies (Tensor::copy_, Tensor::fill_): dst = src with any strides, src broadcast to dst's
  // shape (both checked, on dst's device); dst = value
  void (*copy)(const Tensor& dst, const Tensor& src);
  void (*fill)(const Tensor& dst, double value);
  // elementwise (elementwise.cpp | .cu)
  decltype(&kernel::binary) binary;
  decltype(&kernel::unary) unary;
  decltype(&kernel::pow_scalar) pow_scalar;
  decltype(&kernel::affine) affine;
  decltype(&kernel::where) where;
  decltype(&kernel::add_) add_;
  decltype(&kernel::scale_) scale_;
  decltype(&kernel::all_finite) all_finite;
  decltype(&kernel::first_non_finite) first_non_finite;  // a list of one device and one dtype
  decltype(&kernel::zero_) zero_;  // a list of one device and one dtype, contiguous
  // reductions (reduce.cpp | .cu)
  decltype(&kernel::sum) sum;
  decltype(&kernel::max) max;
  decltype(&kernel::sum_squares) sum_squares;
  // matrix products (matmul.cpp | .cu). linear, linear_backward, layer_norm and
  // layer_norm_backward get their tensor operands contiguous from the wrapper (checked there
  // once for both devices), and return a parameter's gradient through add_or_set below.
  decltype(&kernel::matmul) matmul;
  decltype(&kernel::linear) linear;
  decltype(&kernel::linear_backward) linear_backward;
  // softmax family and cross-entropy (softmax.cpp | .cu)
  decltype(&kernel::softmax) softmax;
  decltype(&kernel::softmax_backward) softmax_backward;
  decltype(&kernel::log_softmax) log_softmax;
  decltype(&kernel::log_softmax_backward) log_softmax_backward;
  decltype(&kernel::cross_entropy) cross_entropy;
  decltype(&kernel::cross_entropy_backward) cross_entropy_backward;
  // normalisation, activation, embedding (layer_norm, gelu, embedding .cpp | .cu)
  decltype(&kernel::layer_norm) layer_norm;
  decltype(&kernel::layer_norm_backward) layer_norm_backward;
  decltype(&kernel::gelu) gelu;
  decltype(&kernel::gelu_backward) gelu_backward;
  decltype(&kernel::embedding) embedding;
  decltype(&kernel::embedding_backward) embedding_backward;
};

// A parameter's gradient g handed back through `out`: added into *out when the caller gave a
// buffer there (a parameter's gradient buffer, autograd/node.h), otherwise *out = g.
inline void add_or_set(Tensor* out, const Tensor& g) {
  if (out->defined())
    add_(*out, g);
  else
    *out = g;
}

// The kernels of `device`: the dispatch point. In a build without CUDA no tensor can be on
// the GPU, and asking for its kernels says how to get them (device_stub.cpp).
const Backend& backend(Device device);

// Each family file's part of a table: the CPU one in the .cpp file, the GPU one in the .cu.
namespace cpu {
void add_copies(Backend& k);  // copy.cpp
void add_elementwise(Backend& k);
void add_reductions(Backend& k);
void add_matmul(Backend& k);
void add_softmax(Backend& k);
void add_layer_norm(Backend& k);
void add_gelu(Backend& k);
void add_embedding(Backend& k);
}  // namespace cpu
namespace cuda {
Backend backend();            // the whole GPU table (device.cu), from the parts below
void add_copies(Backend& k);  // copy.cu
void add_elementwise(Backend& k);
void add_reductions(Backend& k);
void add_matmul(Backend& k);
void add_softmax(Backend& k);
void add_layer_norm(Backend& k);
void add_gelu(Backend& k);
void add_embedding(Backend& k);
}  // namespace cuda

}  // namespace poslab::kernel
