// device.h — what the rest of poslab asks of the GPU runtime, without any CUDA header.
//
// A tensor lives on Device::cpu or Device::cuda (tensor.h). The CUDA backend (tensor/device.cu
// and the .cu file beside each CPU kernel) is built when nvcc is found (CMake option
// POSLAB_CUDA); without it, tensor/device_stub.cpp answers every call below, and asking for
// a CUDA tensor is an error that says how to get one.
//
// One process uses one GPU (device 0) and one CUDA stream: every kernel, cuBLAS call and copy
// is queued on it in program order, so the host waits only where it reads a value back
// (Tensor::to(Device::cpu), item(), to_vector(), a loss, a gradient norm, all_finite).
#pragma once
#include <string>

#include "tensor/tensor.h"

namespace poslab {

// True when the backend is built and a GPU answers; otherwise cuda_unavailable_reason()
// says why, in words a user can act on.
bool cuda_available();
std::string cuda_unavailable_reason();
// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)": for logs and benchmark reports.
std::string cuda_device_name();

// Fails with "<what>: <reason>" when `device` is cuda and no GPU can be used.
void require_device(Device device, const std::string& what);
// "cpu" | "cuda" -> Device; anything else is an error naming the flag.
Device parse_device(const std::string& name, const std::string& flag = "--device");

// Waits until every queued GPU operation has finished (timing, tests). No-op on the CPU.
void synchronize(Device device);

// The GPU caching allocator's statistics (see tensor/device.cu), and a way to give the cached
// blocks back to the driver.
AllocStats cuda_alloc_stats();
void cuda_empty_cache();

// The error of a GPU kernel reached in a build without CUDA: "<what>: this poslab was built
// without CUDA ...". Defined in tensor/device_stub.cpp; each layer's cuda_stub.cpp calls it.
[[noreturn]] void no_cuda(const char* what);

}  // namespace poslab
