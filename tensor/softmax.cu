// softmax.cu — softmax, log-softmax and cross-entropy along the last axis, on the GPU
// (CPU: softmax.cpp). One warp per row: each lane walks every 32nd element, and the row's
// maximum and sum are combined across the warp with shuffles. Sums in double, as on the CPU.
#include "tensor/cuda_ops.h"
#include "tensor/reduce.cuh"

namespace poslab::kernel::cuda {
namespace {

constexpr int kRowsPerBlock = gpu::kThreads / 32;  // one warp per row

__device__ __forceinline__ int64_t warp_row() {
  return int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
}

unsigned row_blocks(int64_t rows) {
  return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

// max_j x_j and s = sum_j exp(x_j - max) of one row, on every lane of the warp.
template <class T>
__device__ void row_max_sum(const T* x, int64_t n, T* m_out, double* s_out) {
  int lane = threadIdx.x % 32;
  T m = -INFINITY;
  for (int64_t j = lane; j < n; j += 32) m = x[j] > m ? x[j] : m;
  m = gpu::warp_reduce(m, gpu::Max{});
  double s = 0;
  for (int64_t j = lane; j < n; j += 32) s += exp(static_cast<double>(x[j] - m));
  *m_out = m;
  *s_out = gpu::warp_sum(s);
}

// y = softmax(x) per row of n:  m = max_j x_j;  s = sum_j exp(x_j - m);  y_j = exp(x_j - m) / s
// (log_space: y_j = x_j - m - log s)
template <class T>
__global__ void softmax_kernel(const T* x, T* y, int64_t rows, int64_t n, bool log_space) {
  int64_t r = warp_row();
  if (r >= rows) return;
  const T* xr = x + r * n;
  T* yr = y + r * n;
  T m;
  double s;
  row_max_sum(xr, n, &m, &s);
  T ls = static_cast<T>(log(s)), inv = static_cast<T>(1.0 / s);
  for (int64_t j = threadIdx.x % 32; j < n; j += 32)
    yr[j] = log_space ? xr[j] - m - ls : exp(xr[j] - m) * inv;
}

// softmax:     dx_j = y_j (dy_j - sum_k dy_k y_k)
// log_softmax: dx_j = dy_j - exp(y_j) sum_k dy_k
template <class T>
__global__ void softmax_backward_kernel(const T* y, const T* dy, T* dx, int64_t rows, int64_t n,
                                        bool log_space) {
  int64_t r = warp_row();
  if (r >= rows) return;
  const T *yr = y + r * n, *dr = dy + r * n;
  T* xr = dx + r * n;
  double acc = 0;
  for (int64_t j = threadIdx.x % 32; j < n; j += 32)
    acc += log_space ? static_cast<double>(dr[j]) : static_cast<double>(dr[j]) * yr[j];
  T dot = static_cast<T>(gpu::warp_sum(acc));
  for (int64_t j = threadIdx.x % 32; j < n; j += 32)
    xr[j] = log_space ? dr[j] - exp(yr[j]) * dot : yr[j] * (dr[j] - dot);
}

// Per row n of logits z (N,V) with target t_n (-1: ignored):
//   p_n = softmax(z_n);   loss_n = log s + m - z_n,t_n  (= -log p_n,t_n, from the logits)
template <class T>
__global__ void cross_entropy_kernel(const T* z, const int32_t* target, T* probs, T* row_loss,
                                     int64_t N, int64_t V) {
  int64_t r = warp_row();
  if (r >= N) return;
  const T* zr = z + r * V;
  T* pr = probs + r * V;
  T m;
  double s;
  row_max_sum(zr, V, &m, &s);
  T inv = static_cast<T>(1.0 / s);
  for (int64_t v = threadIdx.x % 32; v < V; v += 32) pr[v] = exp(zr[v] - m) * inv;
  if (threadIdx.x % 32 == 0) {
    int32_t t = target[r];
    row_loss[r] = t < 0 ? T(0) : static_cast<T>(log(s) + m - zr[t]);
  }
}

// dz_nv = dloss (p_nv - [v == t_n]) / N'   (0 on ignored rows); s = dloss / N'
template <class T>
__global__ void cross_entropy_backward_kernel(const T* probs, const int32_t* target, T s, T* dz,
                                              int64_t N, int64_t V) {
  for (int64_t i = gpu::thread_index(); i < N * V; i += gpu::thread_count()) {
    int32_t t = target[i / V];
    T w = t >= 0 ? s : T(0);
    dz[i] = probs[i] * w - (t == i % V ? s : T(0));
  }
}

Tensor rowwise(const char* op, const Tensor& x, bool log_space) {
  Tensor xc = x.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::cuda);
  int64_t n = x.size(-1);
  if (n == 0 || x.numel() == 0) return y;
  int64_t rows = x.numel() / n;
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    softmax_kernel<T><<<row_blocks(rows), gpu::kThreads, 0, gpu::stream()>>>(
        xc.data<T>(), y.data<T>(), rows, n, log_space);
  });
  gpu::check_launch(op);
  return y;
}

Tensor rowwise_backward(const char* op, const Tensor& y, const Tensor& dy, bool log_space) {
  Tensor yc = y.contiguous(), dyc = dy.contiguous();
  Tensor dx = Tensor::empty(y.shape(), y.dtype(), Device::cuda);
  int64_t n = y.size(-1), rows = n ? y.numel() / n : 0;
  if (rows == 0) return dx;
  dispatch(y.dtype(), [&](auto zero) {
    using T = decltype(zero);
    softmax_backward_kernel<T><<<row_blocks(rows), gpu::kThreads, 0, gpu::stream()>>>(
        yc.data<T>(), dyc.data<T>(), dx.data<T>(), rows, n, log_space);
  });
  gpu::check_launch(op);
  return dx;
}

}  // namespace

Tensor softmax(const Tensor& x) {
  return rowwise("softmax", x, false);
}
Tensor log_softmax(const Tensor& x) {
  return rowwise("log_softmax", x, true);
}
Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  return rowwise_backward("softmax_backward", y, dy, false);
}
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy) {
  return rowwise_backward("log_softmax_backward", y, dy, true);
}

// loss = (1/N') sum_n loss_n, N' = the rows whose target is not -1 (checked by the caller,
// cross_entropy in softmax.cpp: targets in range, N' > 0).
Tensor cross_entropy(const Tensor& logits, const Ids& targets, Tensor* probs, Tensor* row_loss) {
  int64_t N = logits.size(0), V = logits.size(1), counted = 0;
  for (int32_t t : targets.data) counted += t >= 0;
  Tensor zc = logits.contiguous();
  Tensor p = Tensor::empty({N, V}, logits.dtype(), Device::cuda);
  Tensor rl = Tensor::empty({N}, logits.dtype(), Device::cuda);
  Tensor loss = Tensor::empty({}, logits.dtype(), Device::cuda);
  gpu::DeviceArray<int32_t> t = gpu::to_device(targets.data);
  dispatch(logits.dtype(), [&](auto zero) {
    using T = decltype(zero);
    cross_entropy_kernel<T><<<row_blocks(N), gpu::kThreads, 0, gpu::stream()>>>(
        zc.data<T>(), t.data(), p.data<T>(), rl.data<T>(), N, V);
    gpu::check_launch("cross_entropy");
    gpu::reduce_rows<gpu::SumOp>(rl.data<T>(), 1, N, loss.data<T>(), 1.0 / counted,
                                 "cross_entropy");
  });
  if (probs) *probs = p;
  if (row_loss) *row_loss = rl;
  return loss;
}

Tensor cross_entropy_backward(const Tensor& probs, const Ids& targets, double dloss) {
  int64_t N = probs.size(0), V = probs.size(1), counted = 0;
  for (int32_t t : targets.data) counted += t >= 0;
  Tensor dz = Tensor::empty(probs.shape(), probs.dtype(), Device::cuda);
  if (N * V == 0) return dz;
  gpu::DeviceArray<int32_t> t = gpu::to_device(targets.data);
  dispatch(probs.dtype(), [&](auto zero) {
    using T = decltype(zero);
    cross_entropy_backward_kernel<T><<<gpu::grid_for(N * V), gpu::kThreads, 0, gpu::stream()>>>(
        probs.data<T>(), t.data(), static_cast<T>(dloss / counted), dz.data<T>(), N, V);
  });
  gpu::check_launch("cross_entropy_backward");
  return dz;
}

}  // namespace poslab::kernel::cuda
