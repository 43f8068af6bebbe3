// backend.cpp — the dispatch point: the table of kernels of each device (backend.h).
#include "tensor/backend.h"

namespace poslab::kernel {
namespace {

Backend cpu_backend() {
  Backend k{};
  cpu::add_copies(k);
  cpu::add_elementwise(k);
  cpu::add_reductions(k);
  cpu::add_matmul(k);
  cpu::add_softmax(k);
  cpu::add_layer_norm(k);
  cpu::add_gelu(k);
  cpu::add_embedding(k);
  return k;
}

}  // namespace

const Backend& backend(Device device) {
  if (device == Device::cpu) {
    static const Backend cpu = cpu_backend();
    return cpu;
  }
  static const Backend gpu = cuda::backend();
  return gpu;
}

}  // namespace poslab::kernel
