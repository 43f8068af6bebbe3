// cuda_stub.cpp — the fused attention's GPU kernels (attention_kernels.h) in a build without
// CUDA: no tensor can be on the GPU there, so none is reached; each would only say so.
#include "nn/attention_kernels.h"
#include "tensor/device.h"

namespace poslab::kernel::cuda {

void attention_forward(const AttentionTensors&, const AttentionOptions&) {
  no_cuda("attention");
}
void attention_backward(const AttentionTensors&, const Tensor&, const AttentionOptions&,
                        const AttentionGrads&) {
  no_cuda("attention backward");
}

}  // namespace poslab::kernel::cuda
