// device.cpp — device names and the one check every entry point makes before it puts a
// tensor on the GPU. Built with and without CUDA (the runtime itself is device.cu, or
// device_stub.cpp without CUDA).
#include "tensor/device.h"

namespace poslab {

Device parse_device(const std::string& name, const std::string& flag) {
  if (name == "cpu") return Device::cpu;
  if (name == "cuda") return Device::cuda;
  fail(flag, ": unknown device '", name, "'; valid: cpu|cuda");
}

void require_device(Device device, const std::string& what) {
  if (device == Device::cuda && !cuda_available())
    fail(what, ": cannot use the GPU: ", cuda_unavailable_reason(), "; use --device cpu");
}

}  // namespace poslab
