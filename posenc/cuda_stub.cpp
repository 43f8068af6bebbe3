// cuda_stub.cpp — RoPE's GPU kernel (rope_kernels.h) in a build without CUDA: no tensor can
// be on the GPU there, so it is never reached; it would only say so.
#include "posenc/rope_kernels.h"
#include "tensor/device.h"

namespace poslab::kernel::cuda {

Tensor rope_apply(const Tensor&, const Tensor&, const Tensor&, bool, double) {
  no_cuda("rope");
}

}  // namespace poslab::kernel::cuda
