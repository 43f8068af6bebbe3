// rope_kernels.h — RoPE's GPU kernel (posenc/rope.cu), raw: no autograd. posenc/rope.cpp
// records the op and calls it when x lives on the GPU; in a build without CUDA,
// posenc/cuda_stub.cpp stands in for it.
#pragma once
#include "tensor/tensor.h"

namespace poslab::kernel::cuda {

// x: (B,T,H,D) with unit stride along D; cos, sin: (T, r/2) -> (B,T,H,D) contiguous with the
// first r dims of each head rotated in pairs (2i, 2i+1), or (i, i + r/2) when half_layout;
// sign = -1 rotates backwards (the backward pass).
Tensor rope_apply(const Tensor& x, const Tensor& cos, const Tensor& sin, bool half_layout,
                  double sign);

}  // namespace poslab::kernel::cuda
