// rope_kernels.h — RoPE's GPU kernel (posenc/rope.cu), raw: no autograd. posenc/rope.cpp
// records the op and calls it when x lives on the GPU; in a build without CUDA,
// posenc/cuda_stub.cpp stands in for it.
#pragma once
#include "tensor/tensor.h"

namespace poslab::kernel::cuda {

// x: (B,T,H,D) with unit stride along D; cos, sin: (T, D/2) -> rotated (B,T,H,D) contiguous;
// sign = -1 rotates backwards (the backward pass).
Tensor rope_apply(const Tensor& x, const Tensor& cos, const Tensor& sin, double sign);

}  // namespace poslab::kernel::cuda
