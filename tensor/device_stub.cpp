// device_stub.cpp — the CUDA entry points when poslab is built without CUDA: no tensor can be
// put on the GPU (cuda_allocate refuses, naming what was asked for and how to get it), so
// no GPU kernel is ever asked for; the entry points exist for the linker and would only say so.
#include "tensor/backend.h"
#include "tensor/device.h"

namespace poslab {

static const char* kNoCuda =
    "this poslab was built without CUDA (nvcc not found at configure time, or "
    "-DPOSLAB_CUDA=OFF); install the CUDA toolkit and rebuild";

void no_cuda(const char* what) {
  fail(what, ": ", kNoCuda);
}

bool cuda_available() {
  return false;
}
std::string cuda_unavailable_reason() {
  return kNoCuda;
}
std::string cuda_device_name() {
  return std::string("no GPU: ") + kNoCuda;
}
void synchronize(Device) {}
AllocStats cuda_alloc_stats() {
  return {};
}
void cuda_empty_cache() {}

void* cuda_allocate(size_t) {
  no_cuda("a tensor on device cuda");
}
void cuda_deallocate(void*, size_t) {}
void cuda_copy(void*, const void*, size_t, Device, Device) {
  no_cuda("a copy to or from device cuda");
}

// No GPU kernels: backend(Device::cuda) is never reached (no tensor can be on the GPU).
kernel::Backend kernel::cuda::backend() {
  no_cuda("a kernel on device cuda");
}

}  // namespace poslab
