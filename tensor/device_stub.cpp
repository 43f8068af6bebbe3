// device_stub.cpp — the CUDA entry points when poslab is built without CUDA: each names
// what was asked for and how to get it.
#include "tensor/tensor.h"

namespace poslab {

static void no_cuda(const char* what) {
  fail(what,
       ": this poslab was built without CUDA (nvcc not found at configure time); "
       "use --device cpu, or install the CUDA toolkit and rebuild");
}

void* cuda_allocate(size_t) {
  no_cuda("cuda allocate");
  return nullptr;
}
void cuda_deallocate(void*, size_t) {}
void cuda_copy(void*, const void*, size_t, Device, Device) {
  no_cuda("cuda copy");
}
bool cuda_available() {
  return false;
}

}  // namespace poslab
