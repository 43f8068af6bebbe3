// copy.cu — Tensor::copy_ and Tensor::fill_ on the GPU (their CPU loops are in copy.cpp).
//
//   copy:  dst[i] = src[i]   i over dst's shape, row-major; src broadcast to it; any strides
//   fill:  dst[i] = value
// The views behind contiguous(), clone(), slice-backward and the KV cache all come here.
#include "tensor/backend.h"
#include "tensor/cuda_util.cuh"

namespace poslab::kernel::cuda {
namespace {

template <class T>
__global__ void copy_kernel(T* dst, gpu::Layout ld, const T* src, gpu::Layout ls, int64_t n) {
  for (int64_t i = gpu::thread_index(); i < n; i += gpu::thread_count())
    dst[ld.at(i)] = src[ls.at(i)];
}

template <class T>
__global__ void fill_kernel(T* dst, gpu::Layout ld, T value, int64_t n) {
  for (int64_t i = gpu::thread_index(); i < n; i += gpu::thread_count()) dst[ld.at(i)] = value;
}

}  // namespace

void copy(const Tensor& dst, const Tensor& src) {
  int64_t n = dst.numel();
  if (n == 0) return;
  auto l = gpu::make_layouts("copy_", dst.shape(), {&dst, &src});
  dispatch(dst.dtype(), [&](auto zero) {
    using T = decltype(zero);
    copy_kernel<T><<<gpu::grid_for(n), gpu::kThreads, 0, gpu::stream()>>>(
        static_cast<T*>(dst.storage()->data()), l[0], gpu::storage_ptr<T>(src), l[1], n);
  });
  gpu::check_launch("copy_");
}

void fill(const Tensor& dst, double value) {
  int64_t n = dst.numel();
  if (n == 0) return;
  if (value == 0 && dst.is_contiguous()) {  // all-zero bits: a memset
    CUDA_CHECK(cudaMemsetAsync(dst.raw_data(), 0, n * dtype_size(dst.dtype()), gpu::stream()));
    return;
  }
  auto l = gpu::make_layouts("fill_", dst.shape(), {&dst});
  dispatch(dst.dtype(), [&](auto zero) {
    using T = decltype(zero);
    fill_kernel<T><<<gpu::grid_for(n), gpu::kThreads, 0, gpu::stream()>>>(
        static_cast<T*>(dst.storage()->data()), l[0], static_cast<T>(value), n);
  });
  gpu::check_launch("fill_");
}

void add_copies(Backend& k) {
  k.copy = copy;
  k.fill = fill;
}

}  // namespace poslab::kernel::cuda
