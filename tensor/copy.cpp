// copy.cpp — copies between tensors: copy_ and fill_ (the CPU loops here, the GPU kernels in
// copy.cu, chosen by backend()), and the copies built on them (contiguous, clone, to).
//
//   copy:  dst[i] = src[i]   i over dst's shape, row-major; src broadcast to it; any strides
//   fill:  dst[i] = value
#include <omp.h>

#include "tensor/backend.h"
#include "tensor/strided.h"

namespace poslab {

void cuda_copy(void* dst, const void* src, size_t bytes, Device dst_dev, Device src_dev);

void Tensor::copy_(const Tensor& src) const {
  // A source on the other device crosses once, then this device's copy runs.
  if (src.defined() && src.device() != device_) return copy_(src.to(device_));
  check_same("copy_", *this, src);
  if (src.dim() > dim())
    fail("copy_: cannot copy shape ", shape_str(src.shape()), " into ", shape_str(shape_));
  broadcast_shapes("copy_", shape_, src.shape());
  kernel::backend(device_).copy(*this, src);
}

void Tensor::fill_(double value) const {
  kernel::backend(device_).fill(*this, value);
}

namespace kernel::cpu {
namespace {

// dst's rows in parallel; src read through its broadcast strides (0 on a broadcast dim).
void copy(const Tensor& dst, const Tensor& src) {
  const Shape& shape = dst.shape();
  Shape sst = broadcast_strides(src, shape);
  int64_t n = dst.numel();
  if (n == 0) return;
  int64_t inner = dst.dim() ? shape.back() : 1, rows = n / inner;
  int64_t ds = dst.dim() ? dst.strides().back() : 1, ss = dst.dim() ? sst.back() : 1;
  dispatch(dst.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* pd = static_cast<T*>(dst.storage()->data());
    const T* sp = static_cast<const T*>(src.storage()->data());
#pragma omp parallel for if (n > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
      T* d = pd + row_offset(r, shape, dst.strides(), dst.offset());
      const T* s = sp + row_offset(r, shape, sst, src.offset());
      for (int64_t i = 0; i < inner; ++i) d[i * ds] = s[i * ss];
    }
  });
}

void fill(const Tensor& dst, double value) {
  dispatch(dst.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T v = static_cast<T>(value);
    if (dst.is_contiguous()) {
      T* p = dst.data<T>();
      int64_t n = dst.numel();
#pragma omp parallel for if (n > kParallelGrain)
      for (int64_t i = 0; i < n; ++i) p[i] = v;
    } else {
      copy(dst, Tensor::full({}, value, dst.dtype()));
    }
  });
}

}  // namespace

void add_copies(Backend& k) {
  k.copy = copy;
  k.fill = fill;
}

}  // namespace kernel::cpu

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_, device_);
  t.copy_(*this);
  return t;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor src = to(Device::cpu).contiguous();
  Tensor t = empty(shape_, dtype);
  int64_t n = numel();
  dispatch(dtype_, [&](auto z1) {
    using S = decltype(z1);
    dispatch(dtype, [&](auto z2) {
      using D = decltype(z2);
      const S* s = src.data<S>();
      D* d = t.data<D>();
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<D>(s[i]);
    });
  });
  return t.to(device_);
}

Tensor Tensor::to(Device device) const {
  if (device == device_) return *this;
  Tensor src = contiguous();
  Tensor t = empty(shape_, dtype_, device);
  cuda_copy(t.raw_data(), src.raw_data(), numel() * dtype_size(dtype_), device, device_);
  return t;
}

}  // namespace poslab
