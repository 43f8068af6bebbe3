// cuda_util.cuh — what every .cu file of poslab shares: error checks, the stream and the
// cuBLAS handle, uploads of small host arrays, strided layouts, launch sizes, and warp/block
// reductions. Included only by .cu files (nvcc); the host-side API is tensor/device.h.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <vector>

#include "tensor/device.h"
#include "tensor/tensor.h"

namespace poslab {

// The functions behind CUDA_CHECK / CUBLAS_CHECK (tensor/check.h): throw naming the file,
// the line, the call and the error.
void cuda_check(cudaError_t e, const char* call, const char* file, int line);
void cublas_check(cublasStatus_t s, const char* call, const char* file, int line);

namespace gpu {

cudaStream_t stream();  // the one stream every kernel of the process is queued on
int sm_count();         // multiprocessors of device 0 (sizes grids)

// The cuBLAS calls poslab makes, resolved from libcublas.so.<major> when the GPU is first
// used (dlopen): linking cuBLAS would make every run, CPU-only ones too, pay its library's
// start-up. The handle is bound to the stream above; math mode: plain FP32/FP64, no TF32.
struct Cublas {
  cublasHandle_t handle = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasDgemm_v2) dgemm = nullptr;
  decltype(&cublasSgemmStridedBatched) sgemm_batched = nullptr;
  decltype(&cublasDgemmStridedBatched) dgemm_batched = nullptr;
};
const Cublas& blas();

// After a launch: a bad configuration (too much shared memory, a grid too large) shows up
// here, named by op. Faults inside a kernel surface at the next synchronisation; run with
// CUDA_LAUNCH_BLOCKING=1 to have them reported by the launch that caused them.
void check_launch(const char* op);

// Copies `bytes` of host memory to the device pointer dst, queued on the stream. Small copies
// go through a pinned staging ring, so they neither wait for the GPU nor keep the host array
// alive; big ones wait until the copy is done.
void upload(void* dst, const void* src, size_t bytes);

// Copies `bytes` of device memory to the host and waits for them (a synchronisation point).
void download(void* dst, const void* src, size_t bytes);

// A device array of n values of T from the caching allocator, freed with its last handle.
template <class T>
struct DeviceArray {
  std::shared_ptr<Storage> storage;
  T* data() const { return static_cast<T*>(storage->data()); }
};
template <class T>
DeviceArray<T> to_device(const std::vector<T>& host) {
  DeviceArray<T> a{
      std::make_shared<Storage>(std::max<size_t>(host.size(), 1) * sizeof(T), Device::cuda)};
  if (!host.empty()) upload(a.data(), host.data(), host.size() * sizeof(T));
  return a;
}

// ---------------------------------------------------------------- strided layouts

constexpr int kMaxDims = 6;

// A strided view walked in row-major order: element i of the view sits at offset at(i).
// Dims of size 1 are dropped and adjacent dims merged where the strides allow (for every
// tensor walked together), so most layouts here have one or two dims.
struct Layout {
  int nd = 0;
  int64_t size[kMaxDims] = {};
  int64_t stride[kMaxDims] = {};
  int64_t base = 0;  // element offset of element 0
  __host__ __device__ __forceinline__ int64_t at(int64_t i) const {
    int64_t off = base;
    for (int d = nd - 1; d > 0; --d) {
      off += (i % size[d]) * stride[d];
      i /= size[d];
    }
    return nd > 0 ? off + i * stride[0] : off;
  }
};

// The layouts of tensors ts broadcast to `shape`, walked with one index (errors name op).
std::vector<Layout> make_layouts(const char* op, const Shape& shape,
                                 std::initializer_list<const Tensor*> ts);

// Element pointer of a tensor's storage (its offset applied by the Layout, not here).
template <class T>
const T* storage_ptr(const Tensor& t) {
  return static_cast<const T*>(t.storage()->data());
}

// ---------------------------------------------------------------- launches

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill the GPU, not more.
inline unsigned grid_for(int64_t n, int threads = kThreads) {
  int64_t want = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<int64_t>(want, 1, int64_t(sm_count()) * 16));
}

// One launch over a whole list of contiguous tensors (a model's ~50 parameters or gradients):
// a table of (pointer, size) uploaded once per call, and block row y of the grid walks tensor
// y. table_grid gives each row enough blocks for the largest tensor to fill the GPU.
template <class T>
struct Span {
  T* x;
  int64_t n;
};
template <class T>
DeviceArray<Span<T>> span_table(const std::vector<Tensor>& xs) {
  std::vector<Span<T>> spans;
  for (const Tensor& t : xs) spans.push_back({t.data<T>(), t.numel()});
  return to_device(spans);
}
inline dim3 table_grid(const std::vector<Tensor>& xs) {
  int64_t most = 1;
  for (const Tensor& t : xs) most = std::max(most, t.numel());
  return dim3(std::min<unsigned>(grid_for(most), 4 * sm_count()), static_cast<unsigned>(xs.size()));
}

__device__ __forceinline__ int64_t thread_index() {
  return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t thread_count() {
  return int64_t(gridDim.x) * blockDim.x;
}

// ---------------------------------------------------------------- reductions

// Combining two partial results of a reduction.
struct Plus {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a + b;
  }
};
struct Max {
  template <class A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return b > a ? b : a;
  }
};

// Reduction over the 32 lanes of a warp (butterfly: every lane ends with the result).
template <class A, class Op>
__device__ __forceinline__ A warp_reduce(A v, Op op) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <class A>
__device__ __forceinline__ A warp_sum(A v) {
  return warp_reduce(v, Plus{});
}

// Reduction over a whole block (blockDim.x a multiple of 32, at most 1024); every thread
// gets the result. `identity` is what an absent warp contributes (0 for sums).
template <class A, class Op>
__device__ A block_reduce(A v, Op op, A identity) {
  __shared__ A partial[32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_reduce(v, op);
  __syncthreads();  // partial[] may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < warps ? partial[lane] : identity;
  return warp_reduce(v, op);
}

}  // namespace gpu
}  // namespace poslab
