// rope.cu — the RoPE rotation on the GPU (CPU and derivation: rope.h, rope.cpp).
//
// One kernel for both directions: sign = +1 rotates pair i of every head by +a (forward),
// sign = -1 by -a (backward: the inverse rotation, R^T dy). Slot i = 0..D/2-1 of a head:
//   i < r/2: (lo, hi) = (2i, 2i+1) interleaved, (i, i + r/2) half, and
//            y[lo] = x[lo] c - sign x[hi] s,  y[hi] = sign x[lo] s + x[hi] c
//            with c, s = cos/sin tables (T, r/2) at (t, i);
//   i >= r/2: (lo, hi) = (r + 2(i - r/2), lo + 1), copied unchanged.
// One thread per slot; x: (B,T,H,D) with any strides but unit stride along D; y contiguous.
#include "posenc/rope_kernels.h"
#include "tensor/cuda_util.cuh"

namespace poslab::kernel::cuda {
namespace {

struct RopeDims {
  int64_t sb, st, sh;  // strides of x (batch, time, head)
  int64_t Tn, H, D, r;
  bool half_layout;
};

template <class T>
__global__ void rope_kernel(const T* x, const T* cos, const T* sin, T* y, RopeDims a, int64_t slots,
                            T sign) {
  int64_t hs = a.D / 2, half = a.r / 2;  // slots per head, rotated pairs per head
  for (int64_t p = gpu::thread_index(); p < slots; p += gpu::thread_count()) {
    int64_t i = p % hs, row = p / hs;  // slot i of row = (b*T + t)*H + h
    int64_t h = row % a.H, t = (row / a.H) % a.Tn, b = row / (a.H * a.Tn);
    const T* xr = x + b * a.sb + t * a.st + h * a.sh;
    T* yr = y + row * a.D;
    if (i >= half) {  // an unrotated pair of dims
      int64_t lo = a.r + 2 * (i - half);
      yr[lo] = xr[lo], yr[lo + 1] = xr[lo + 1];
      continue;
    }
    int64_t lo = a.half_layout ? i : 2 * i, hi = a.half_layout ? i + half : 2 * i + 1;
    T x0 = xr[lo], x1 = xr[hi], c = cos[t * half + i], s = sin[t * half + i];
    yr[lo] = x0 * c - sign * x1 * s;
    yr[hi] = sign * x0 * s + x1 * c;
  }
}

}  // namespace

Tensor rope_apply(const Tensor& x_in, const Tensor& cos, const Tensor& sin, bool half_layout,
                  double sign) {
  Tensor x = x_in.strides().back() == 1 ? x_in : x_in.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::cuda);
  RopeDims a{x.strides()[0], x.strides()[1], x.strides()[2],  x.size(1),
             x.size(2),      x.size(3),      2 * cos.size(1), half_layout};
  int64_t slots = x.numel() / 2;
  if (slots == 0) return y;
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    rope_kernel<T><<<gpu::grid_for(slots), gpu::kThreads, 0, gpu::stream()>>>(
        x.data<T>(), cos.data<T>(), sin.data<T>(), y.data<T>(), a, slots, static_cast<T>(sign));
  });
  gpu::check_launch("rope");
  return y;
}

}  // namespace poslab::kernel::cuda
