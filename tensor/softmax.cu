// softmax.cu — softmax, log-softmax and cross-entropy along the last axis, on the GPU
// (CPU: softmax.cpp). One warp per row: each lane walks every 32nd element, and the row's
// maximum and sum are combined across the warp with shuffles. Sums in double, as on the CPU.
#include "tensor/backend.h"
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

// One row of n by the 32 lanes of a warp:
//   m = max_j x_j;  s = sum_j exp(x_j - m);  y_j = exp(x_j - m) / s   (log_space: x_j - m - log s)
// m and s are returned to every lane (cross-entropy needs them too).
template <class T>
__device__ void softmax_row(const T* x, T* y, int64_t n, bool log_space, T* m_out, double* s_out) {
  int lane = threadIdx.x % 32;
  T m = -INFINITY;
  for (int64_t j = lane; j < n; j += 32) m = x[j] > m ? x[j] : m;
  m = gpu::warp_reduce(m, gpu::Max{});
  double s = 0;
  for (int64_t j = lane; j < n; j += 32) s += exp(static_cast<double>(x[j] - m));
  s = gpu::warp_sum(s);
  T ls = static_cast<T>(log(s)), inv = static_cast<T>(1.0 / s);
  for (int64_t j = lane; j < n; j += 32) y[j] = log_space ? x[j] - m - ls : exp(x[j] - m) * inv;
  *m_out = m, *s_out = s;
}

template <class T>
__global__ void softmax_kernel(const T* x, T* y, int64_t rows, int64_t n, bool log_space) {
  int64_t r = warp_row();
  T m;
  double s;
  if (r < rows) softmax_row(x + r * n, y + r * n, n, log_space, &m, &s);
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
  T m;
  double s;
  softmax_row(z + r * V, probs + r * V, V, false, &m, &s);
  int32_t t = target[r];
  if (threadIdx.x % 32 == 0) row_loss[r] = t < 0 ? T(0) : static_cast<T>(log(s) + m - z[r * V + t]);
}

// dz_nv = dloss (p_nv - [v == t_n]) / N'   (0 on ignored rows); s = dloss / N', with dloss
// read on the device (the host never waits for it)
template <class T>
__global__ void cross_entropy_backward_kernel(const T* probs, const int32_t* target, const T* dloss,
                                              T inv_counted, T* dz, int64_t N, int64_t V) {
  T s = *dloss * inv_counted;
  for (int64_t i = gpu::thread_index(); i < N * V; i += gpu::thread_count()) {
    int32_t t = target[i / V];
    T w = t >= 0 ? s : T(0);
    dz[i] = probs[i] * w - (t == i % V ? s : T(0));
  }
}

// The four row ops: forward from x (dy undefined), or backward from the saved y and dy.
Tensor rows(const char* op, const Tensor& x_or_y, const Tensor& dy, bool log_space) {
  Tensor a = x_or_y.contiguous(), da = dy.defined() ? dy.contiguous() : Tensor();
  Tensor out = Tensor::empty(a.shape(), a.dtype(), Device::cuda);
  int64_t n = a.dim() ? a.size(-1) : 0, rows = n ? a.numel() / n : 0;
  if (rows == 0) return out;
  dispatch(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if (!da.defined())
      softmax_kernel<T><<<row_blocks(rows), gpu::kThreads, 0, gpu::stream()>>>(
          a.data<T>(), out.data<T>(), rows, n, log_space);
    else
      softmax_backward_kernel<T><<<row_blocks(rows), gpu::kThreads, 0, gpu::stream()>>>(
          a.data<T>(), da.data<T>(), out.data<T>(), rows, n, log_space);
  });
  gpu::check_launch(op);
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x) {
  return rows("softmax", x, Tensor(), false);
}
Tensor log_softmax(const Tensor& x) {
  return rows("log_softmax", x, Tensor(), true);
}
Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  return rows("softmax_backward", y, dy, false);
}
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy) {
  return rows("log_softmax_backward", y, dy, true);
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

Tensor cross_entropy_backward(const Tensor& probs, const Ids& targets, const Tensor& dloss) {
  int64_t N = probs.size(0), V = probs.size(1), counted = 0;
  for (int32_t t : targets.data) counted += t >= 0;
  Tensor dz = Tensor::empty(probs.shape(), probs.dtype(), Device::cuda);
  if (N * V == 0) return dz;
  gpu::DeviceArray<int32_t> t = gpu::to_device(targets.data);
  dispatch(probs.dtype(), [&](auto zero) {
    using T = decltype(zero);
    cross_entropy_backward_kernel<T><<<gpu::grid_for(N * V), gpu::kThreads, 0, gpu::stream()>>>(
        probs.data<T>(), t.data(), dloss.data<T>(), static_cast<T>(1.0 / counted), dz.data<T>(), N,
        V);
  });
  gpu::check_launch("cross_entropy_backward");
  return dz;
}

void add_softmax(Backend& k) {
  k.softmax = softmax;
  k.softmax_backward = softmax_backward;
  k.log_softmax = log_softmax;
  k.log_softmax_backward = log_softmax_backward;
  k.cross_entropy = cross_entropy;
  k.cross_entropy_backward = cross_entropy_backward;
}

}  // namespace poslab::kernel::cuda
