// cuda_stub.cpp — the optimizer's GPU kernels (optimizer_kernels.h) in a build without CUDA:
// no tensor can be on the GPU there, so none is reached; each would only say so.
#include "tensor/device.h"
#include "train/optimizer_kernels.h"

namespace poslab::kernel::cuda {

void adamw_update(const std::vector<Tensor>&, const std::vector<Tensor>&,
                  const std::vector<Tensor>&, const std::vector<Tensor>&,
                  const std::vector<double>&, const AdamWArgs&) {
  no_cuda("adamw");
}
double clip_grad_norm(const std::vector<Tensor>&, double) {
  no_cuda("clip_grad_norm");
}

}  // namespace poslab::kernel::cuda
