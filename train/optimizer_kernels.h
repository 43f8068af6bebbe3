// optimizer_kernels.h — the optimizer's GPU kernels (train/optimizer.cu), raw: no autograd.
// One launch over every parameter; train/optimizer.cpp calls them when the parameters live on
// the GPU. In a build without CUDA, train/cuda_stub.cpp stands in for them.
#pragma once
#include <vector>

#include "tensor/tensor.h"

namespace poslab::kernel::cuda {

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
