// rope.cu — the RoPE rotation on the GPU (CPU and derivation: rope.h, rope.cpp).
//
// One kernel for both directions: sign = +1 rotates pair i of every head by +a (forward),
// sign = -1 by -a (backward: the inverse rotation, R^T dy):
//   y[2i]   = x[2i] c - sign x[2i+1] s
//   y[2i+1] = sign x[2i] s + x[2i+1] c          c, s = cos/sin tables (T, D/2) at (t, i)
// One thread per pair; x: (B,T,H,D) with any strides but unit stride along D; y contiguous.
#include "posenc/rope_kernels.h"
#include "tensor/cuda_util.cuh"

namespace poslab::kernel::cuda {
namespace {

template <class T>
__global__ void rope_kernel(const T* x, int64_t sb, int64_t st, int64_t sh, const T* cos,
                            const T* sin, T* y, int64_t Tn, int64_t H, int64_t half, int64_t pairs,
                            T sign) {
  for (int64_t p = gpu::thread_index(); p < pairs; p += gpu::thread_count()) {
    int64_t i = p % half, r = p / half;  // pair i of row r = (b*T + t)*H + h
    int64_t h = r % H, t = (r / H) % Tn, b = r / (H * Tn);
    const T* xr = x + b * sb + t * st + h * sh;
    T x0 = xr[2 * i], x1 = xr[2 * i + 1], c = cos[t * half + i], s = sin[t * half + i];
    y[2 * p] = x0 * c - sign * x1 * s;
    y[2 * p + 1] = sign * x0 * s + x1 * c;
  }
}

}  // namespace

Tensor rope_apply(const Tensor& x_in, const Tensor& cos, const Tensor& sin, double sign) {
  Tensor x = x_in.strides().back() == 1 ? x_in : x_in.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::cuda);
  int64_t Tn = x.size(1), H = x.size(2), half = x.size(3) / 2, pairs = x.numel() / 2;
  if (pairs == 0) return y;
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    rope_kernel<T><<<gpu::grid_for(pairs), gpu::kThreads, 0, gpu::stream()>>>(
        x.data<T>(), x.strides()[0], x.strides()[1], x.strides()[2], cos.data<T>(), sin.data<T>(),
        y.data<T>(), Tn, H, half, pairs, static_cast<T>(sign));
  });
  gpu::check_launch("rope");
  return y;
}

}  // namespace poslab::kernel::cuda
