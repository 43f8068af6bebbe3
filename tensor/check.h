// check.h — user-facing checks that throw, with messages of the form
//   "rope: expected an even head dim D, but got x of shape (2,5,2,3)"
// The only macros in poslab live here.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace poslab {

// "(2,5,2,3)"
std::string shape_str(const std::vector<int64_t>& shape);

// The index of `name` among `names` (an enum's names, in the enum's order), or an error naming
// the flag and every valid name: "--pe: expected one of none|learned|..., but got 'xpos'".
size_t name_index(const std::vector<std::string>& names, const std::string& name,
                  const std::string& flag);

// Builds a message from any streamable parts: fail("matmul: expected ", a, " but got ", b).
template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw std::runtime_error(os.str());
}

}  // namespace poslab

// POSLAB_CHECK(cond, parts...) throws std::runtime_error(parts...) when cond is false.
#define POSLAB_CHECK(cond, ...)               \
  do {                                        \
    if (!(cond)) ::poslab::fail(__VA_ARGS__); \
  } while (0)

// CUDA_CHECK(cudaMalloc(&p, n)), CUBLAS_CHECK(cublasSgemm(...)): on failure, throw
// "CUDA error at tensor/device.cu:88: cudaMalloc(&p, n): cudaErrorMemoryAllocation (out of
// memory)". Used only in .cu files; the functions they call are in tensor/cuda_util.cuh.
#define CUDA_CHECK(call) ::poslab::cuda_check((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) ::poslab::cublas_check((call), #call, __FILE__, __LINE__)

// POSLAB_HOST_DEVICE marks a function that the CPU loops and the CUDA kernels both call (the
// scalar math of tensor/scalar_ops.h): one definition for both devices.
#ifdef __CUDACC__
#define POSLAB_HOST_DEVICE __host__ __device__
#else
#define POSLAB_HOST_DEVICE
#endif
