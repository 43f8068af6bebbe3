// gelu.cpp — GELU, tanh form (as GPT-2 and SPEC 1):
//   y = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
// Backward:
//   dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
#include <omp.h>

#include <cmath>

#include "tensor/ops.h"
#include "tensor/strided.h"

namespace poslab::kernel {

static constexpr double kSqrt2OverPi = 0.7978845608028654;
static constexpr double kGeluC = 0.044715;

Tensor gelu(const Tensor& x) {
  check_defined("gelu", x, "x");
  if (x.device() != Device::cpu) fail("gelu: the cuda kernel is not built");
  Tensor xc = x.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* px = xc.data<T>();
    T* py = y.data<T>();
    int64_t n = x.numel();
#pragma omp parallel for simd if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
      T v = px[i];
      T u = T(kSqrt2OverPi) * (v + T(kGeluC) * v * v * v);
      py[i] = T(0.5) * v * (T(1) + std::tanh(u));
    }
  });
  return y;
}

Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  Tensor xc = x.contiguous(), dyc = dy.contiguous();
  Tensor dx = Tensor::empty(x.shape(), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *px = xc.data<T>(), *pd = dyc.data<T>();
    T* po = dx.data<T>();
    int64_t n = x.numel();
#pragma omp parallel for simd if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
      T v = px[i];
      T t = std::tanh(T(kSqrt2OverPi) * (v + T(kGeluC) * v * v * v));
      T du = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluC) * v * v);
      po[i] = pd[i] * (T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * du);
    }
  });
  return dx;
}

}  // namespace poslab::kernel
