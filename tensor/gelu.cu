// gelu.cu — GELU, tanh form, on the GPU: the sigmoid form of the CPU's loops (gelu.cpp, which
// says why), so both compute the same formula; the backward derived in nn/gpt_reference.cpp.
#include "tensor/backend.h"
#include "tensor/cuda_util.cuh"

namespace poslab::kernel::cuda {
namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kGeluC = 0.044715;

template <class T>
__global__ void gelu_kernel(const T* x, T* y, int64_t n) {
  for (int64_t i = gpu::thread_index(); i < n; i += gpu::thread_count()) {
    T v = x[i];
    T u = T(kSqrt2OverPi) * (v + T(kGeluC) * v * v * v);
    y[i] = v / (T(1) + exp(T(-2) * u));
  }
}

template <class T>
__global__ void gelu_backward_kernel(const T* x, const T* dy, T* dx, int64_t n) {
  for (int64_t i = gpu::thread_index(); i < n; i += gpu::thread_count()) {
    T v = x[i];
    T u = T(kSqrt2OverPi) * (v + T(kGeluC) * v * v * v);
    T s = T(1) / (T(1) + exp(T(-2) * u));
    T du = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluC) * v * v);
    dx[i] = dy[i] * (s + v * T(2) * s * (T(1) - s) * du);
  }
}

}  // namespace

Tensor gelu(const Tensor& x) {
  Tensor xc = x.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::cuda);
  int64_t n = x.numel();
  if (n == 0) return y;
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    gelu_kernel<T>
        <<<gpu::grid_for(n), gpu::kThreads, 0, gpu::stream()>>>(xc.data<T>(), y.data<T>(), n);
  });
  gpu::check_launch("gelu");
  return y;
}

Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  Tensor xc = x.contiguous(), dyc = dy.contiguous();
  Tensor dx = Tensor::empty(x.shape(), x.dtype(), Device::cuda);
  int64_t n = x.numel();
  if (n == 0) return dx;
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    gelu_backward_kernel<T><<<gpu::grid_for(n), gpu::kThreads, 0, gpu::stream()>>>(
        xc.data<T>(), dyc.data<T>(), dx.data<T>(), n);
  });
  gpu::check_launch("gelu_backward");
  return dx;
}

void add_gelu(Backend& k) {
  k.gelu = gelu;
  k.gelu_backward = gelu_backward;
}

}  // namespace poslab::kernel::cuda
