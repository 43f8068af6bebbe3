// layer_norm.cpp — LayerNorm over the last dim, as PyTorch computes it.
//
// Scalar math per row x (C values):
//   mean = (1/C) sum_c x_c;  var = (1/C) sum_c (x_c - mean)^2  (biased);  rstd = 1/sqrt(var + eps)
//   xhat_c = (x_c - mean) rstd;  y_c = xhat_c w_c + b_c
// The variance is computed two-pass (subtract the mean first): no cancellation when the mean
// is large compared with the spread. Row sums accumulate in double (`omp simd reduction`
// lets them vectorise).
#include <omp.h>

#include <algorithm>

#include <cmath>

#include "tensor/backend.h"
#include "tensor/strided.h"

namespace poslab::kernel {

Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps, Tensor* mean,
                  Tensor* rstd) {
  check_same("layer_norm", x, w);
  check_same("layer_norm", x, b);
  int64_t C = x.dim() ? x.size(-1) : 0;
  if (C == 0 || w.shape() != Shape{C} || b.shape() != Shape{C})
    fail("layer_norm: expected x (...,C) with weight (C) and bias (C), but got x ",
         shape_str(x.shape()), ", weight ", shape_str(w.shape()), ", bias ", shape_str(b.shape()));
  return backend(x.device())
      .layer_norm(x.contiguous(), w.contiguous(), b.contiguous(), eps, mean, rstd);
}

void layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                         const Tensor& dy, Tensor* dx, Tensor* dw, Tensor* db) {
  check_into("layer_norm_backward", dw, w.shape(), w, "dw");
  check_into("layer_norm_backward", db, w.shape(), w, "db");
  return backend(x.device())
      .layer_norm_backward(x.contiguous(), w.contiguous(), mean, rstd, dy.contiguous(), dx, dw, db);
}

namespace cpu {
namespace {

Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps, Tensor* mean,
                  Tensor* rstd) {
  int64_t C = x.size(-1);
  int64_t rows = x.numel() / C;
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  Tensor m = Tensor::empty({rows}, x.dtype()), rs = Tensor::empty({rows}, x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *px = x.data<T>(), *pw = w.data<T>(), *pb = b.data<T>();
    T *py = y.data<T>(), *pm = m.data<T>(), *pr = rs.data<T>();
#pragma omp parallel for if (x.numel() > kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = px + r * C;
      double mu = 0;
#pragma omp simd reduction(+ : mu)
      for (int64_t c = 0; c < C; ++c) mu += xr[c];
      mu /= C;
      double var = 0;
#pragma omp simd reduction(+ : var)
      for (int64_t c = 0; c < C; ++c) var += (xr[c] - mu) * (xr[c] - mu);
      var /= C;
      T s = static_cast<T>(1.0 / std::sqrt(var + eps)), mt = static_cast<T>(mu);
      for (int64_t c = 0; c < C; ++c) py[r * C + c] = (xr[c] - mt) * s * pw[c] + pb[c];
      pm[r] = mt;
      pr[r] = s;
    }
  });
  if (mean) *mean = m;
  if (rstd) *rstd = rs;
  return y;
}

// Backward (derived in nn/gpt_reference.cpp, layernorm_backward), with g_c = dy_c w_c:
//   db_c += dy_c;   dw_c += dy_c xhat_c
//   dx_c = rstd (g_c - mean_k(g_k) - xhat_c mean_k(g_k xhat_k))
void layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                         const Tensor& dy, Tensor* dx, Tensor* dw, Tensor* db) {
  int64_t C = x.size(-1), rows = x.numel() / C;
  Tensor dxt = Tensor::empty(x.shape(), x.dtype());
  int nt = omp_get_max_threads();
  // per-thread partial sums of dw, db (rows are split across threads), reduced at the end
  std::vector<double> pdw(static_cast<size_t>(nt) * C, 0.0), pdb(static_cast<size_t>(nt) * C, 0.0);
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *px = x.data<T>(), *pw = w.data<T>(), *pd = dy.data<T>();
    const T *pm = mean.data<T>(), *pr = rstd.data<T>();
    T* pdx = dxt.data<T>();
#pragma omp parallel if (x.numel() > kParallelGrain)
    {
      // This thread's sums in its own buffers, copied out once at the end: sums into
      // neighbouring slices of one shared array put the two threads' ends of the slices on
      // one cache line, written by both on every row (false sharing: the line moves between
      // the cores at every write, and a second thread gains nothing).
      std::vector<double> tdw_buf(C, 0.0), tdb_buf(C, 0.0);
      double *tdw = tdw_buf.data(), *tdb = tdb_buf.data();
#pragma omp for nowait
      for (int64_t r = 0; r < rows; ++r) {
        const T *xr = px + r * C, *dr = pd + r * C;
        T mu = pm[r], s = pr[r];
        double mg = 0, mgx = 0;
#pragma omp simd reduction(+ : mg, mgx)
        for (int64_t c = 0; c < C; ++c) {
          T xhat = (xr[c] - mu) * s, g = dr[c] * pw[c];
          mg += g;
          mgx += g * xhat;
          tdw[c] += dr[c] * xhat;
          tdb[c] += dr[c];
        }
        T a = static_cast<T>(mg / C), bb = static_cast<T>(mgx / C);
        for (int64_t c = 0; c < C; ++c) {
          T xhat = (xr[c] - mu) * s;
          pdx[r * C + c] = s * (dr[c] * pw[c] - a - xhat * bb);
        }
      }
      const size_t t = static_cast<size_t>(omp_get_thread_num()) * C;
      std::copy(tdw_buf.begin(), tdw_buf.end(), pdw.begin() + t);
      std::copy(tdb_buf.begin(), tdb_buf.end(), pdb.begin() + t);
    }
  });
  std::vector<double> sw(C, 0.0), sb(C, 0.0);
  for (int t = 0; t < nt; ++t)
    for (int64_t c = 0; c < C; ++c) sw[c] += pdw[t * C + c], sb[c] += pdb[t * C + c];
  if (dx) *dx = dxt;
  for (auto [out, sums] : {std::pair{dw, &sw}, std::pair{db, &sb}})
    if (out) add_or_set(out, Tensor::from_vector(*sums, {C}, x.dtype()));
}

}  // namespace

void add_layer_norm(Backend& k) {
  k.layer_norm = layer_norm;
  k.layer_norm_backward = layer_norm_backward;
}

}  // namespace cpu
}  // namespace poslab::kernel
