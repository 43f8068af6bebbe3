// gelu.cpp — GELU, tanh form (as GPT-2 and docs/model.md):
//   y = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + c x^3),  c = 0.044715
// Backward (derived in nn/gpt_reference.cpp, gelu_backward):
//   dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx,  du/dx = sqrt(2/pi) (1 + 3 c x^2)
// Both loops use 0.5 (1 + tanh u) = sigmoid(2u) = 1 / (1 + exp(-2u)): one exp instead of a
// tanh, faster (bench/ops, gelu), and exp(-2u) overflowing to inf for very negative u still gives
// the right limit (sigmoid -> 0). The exp is exp_k (tensor/fast_exp.h): vectorised for f32,
// std::exp for f64.
#include <omp.h>

#include <cmath>

#include "tensor/backend.h"
#include "tensor/fast_exp.h"
#include "tensor/strided.h"

namespace poslab::kernel {

static constexpr double kSqrt2OverPi = 0.7978845608028654;
static constexpr double kGeluC = 0.044715;

Tensor gelu(const Tensor& x) {
  check_defined("gelu", x, "x");
  return backend(x.device()).gelu(x);
}

Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  return backend(x.device()).gelu_backward(x, dy);
}

namespace cpu {
namespace {

Tensor gelu(const Tensor& x) {
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
      py[i] = v / (T(1) + exp_k(T(-2) * u));  // x sigmoid(2u) = 0.5 x (1 + tanh u)
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
      T u = T(kSqrt2OverPi) * (v + T(kGeluC) * v * v * v);
      T s = T(1) / (T(1) + exp_k(T(-2) * u));  // sigmoid(2u) = (1 + tanh u) / 2
      T du = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluC) * v * v);
      // 0.5 (1 - tanh^2 u) = 2 s (1 - s)
      po[i] = pd[i] * (s + v * T(2) * s * (T(1) - s) * du);
    }
  });
  return dx;
}

}  // namespace

void add_gelu(Backend& k) {
  k.gelu = gelu;
  k.gelu_backward = gelu_backward;
}

}  // namespace cpu
}  // namespace poslab::kernel
