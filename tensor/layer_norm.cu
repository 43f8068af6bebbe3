// layer_norm.cu — LayerNorm over the last dim on the GPU (CPU: layer_norm.cpp, the same
// formulas; the backward derived in nn/gpt_reference.cpp). One warp per row of C values;
// statistics in double, two-pass variance.
#include <cmath>

#include "tensor/backend.h"
#include "tensor/reduce.cuh"

namespace poslab::kernel::cuda {
namespace {

constexpr int kRowsPerBlock = gpu::kThreads / 32;  // one warp per row

// mean = (1/C) sum_c x_c;  var = (1/C) sum_c (x_c - mean)^2;  rstd = 1/sqrt(var + eps)
// y_c = (x_c - mean) rstd w_c + b_c
template <class T>
__global__ void layer_norm_kernel(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd,
                                  int64_t rows, int64_t C, double eps) {
  int64_t r = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (r >= rows) return;
  int lane = threadIdx.x % 32;
  const T* xr = x + r * C;
  double mu = 0;
  for (int64_t c = lane; c < C; c += 32) mu += xr[c];
  mu = gpu::warp_sum(mu) / C;
  double var = 0;
  for (int64_t c = lane; c < C; c += 32) var += (xr[c] - mu) * (xr[c] - mu);
  var = gpu::warp_sum(var) / C;
  T s = static_cast<T>(1.0 / sqrt(var + eps)), mt = static_cast<T>(mu);
  for (int64_t c = lane; c < C; c += 32) y[r * C + c] = (xr[c] - mt) * s * w[c] + b[c];
  if (lane == 0) mean[r] = mt, rstd[r] = s;
}

// dx_c = rstd (g_c - mean_k(g_k) - xhat_c mean_k(g_k xhat_k)), g_c = dy_c w_c (layer_norm.cpp)
template <class T>
__global__ void layer_norm_dx_kernel(const T* x, const T* w, const T* mean, const T* rstd,
                                     const T* dy, T* dx, int64_t rows, int64_t C) {
  int64_t r = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (r >= rows) return;
  int lane = threadIdx.x % 32;
  const T *xr = x + r * C, *dr = dy + r * C;
  T mu = mean[r], s = rstd[r];
  double mg = 0, mgx = 0;
  for (int64_t c = lane; c < C; c += 32) {
    T xhat = (xr[c] - mu) * s, g = dr[c] * w[c];
    mg += g;
    mgx += g * xhat;
  }
  T a = static_cast<T>(gpu::warp_sum(mg) / C), bb = static_cast<T>(gpu::warp_sum(mgx) / C);
  for (int64_t c = lane; c < C; c += 32) {
    T xhat = (xr[c] - mu) * s;
    dx[r * C + c] = s * (dr[c] * w[c] - a - xhat * bb);
  }
}

// The parameter gradients, summed over rows: dw_c += dy_c xhat_c (acc[0]), db_c += dy_c (acc[1])
template <class T>
struct ParamGrads {
  const T *x, *dy, *mean, *rstd;
  int64_t C;
  __device__ void operator()(int64_t r, int64_t c, double* acc) const {
    T d = dy[r * C + c], xhat = (x[r * C + c] - mean[r]) * rstd[r];
    acc[0] += d * xhat;
    acc[1] += d;
  }
};

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps, Tensor* mean,
                  Tensor* rstd) {
  int64_t C = x.size(-1), rows = x.numel() / C;
  Tensor y = Tensor::empty(x.shape(), x.dtype(), Device::cuda);
  Tensor m = Tensor::empty({rows}, x.dtype(), Device::cuda),
         rs = Tensor::empty({rows}, x.dtype(), Device::cuda);
  if (rows > 0)
    dispatch(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      unsigned blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
      layer_norm_kernel<T><<<blocks, gpu::kThreads, 0, gpu::stream()>>>(
          x.data<T>(), w.data<T>(), b.data<T>(), y.data<T>(), m.data<T>(), rs.data<T>(), rows, C,
          eps);
    });
  gpu::check_launch("layer_norm");
  if (mean) *mean = m;
  if (rstd) *rstd = rs;
  return y;
}

void layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                         const Tensor& dy, Tensor* dx, Tensor* dw, Tensor* db) {
  int64_t C = x.size(-1), rows = x.numel() / C;
  Tensor dxt = Tensor::empty(x.shape(), x.dtype(), Device::cuda);
  // dw, db added into the parameters' buffers when given (both or neither), else new
  bool add = dw && dw->defined() && db && db->defined();
  Tensor dwt = add ? *dw : Tensor::empty({C}, x.dtype(), Device::cuda),
         dbt = add ? *db : Tensor::empty({C}, x.dtype(), Device::cuda);
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if (rows > 0) {
      unsigned blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
      layer_norm_dx_kernel<T><<<blocks, gpu::kThreads, 0, gpu::stream()>>>(
          x.data<T>(), w.data<T>(), mean.data<T>(), rstd.data<T>(), dy.data<T>(), dxt.data<T>(),
          rows, C);
      gpu::check_launch("layer_norm_backward");
    }
    ParamGrads<T> f{x.data<T>(), dy.data<T>(), mean.data<T>(), rstd.data<T>(), C};
    gpu::column_sums<T, 2>(f, rows, C, {{dwt.data<T>(), dbt.data<T>()}, add},
                           "layer_norm_backward");
  });
  if (dx) *dx = dxt;
  if (!add)  // not added in the sums' last pass (then only one buffer, or none, was given)
    for (auto [out, t] : {std::pair{dw, &dwt}, std::pair{db, &dbt}})
      if (out) add_or_set(out, *t);
}

void add_layer_norm(Backend& k) {
  k.layer_norm = layer_norm;
  k.layer_norm_backward = layer_norm_backward;
}

}  // namespace poslab::kernel::cuda
