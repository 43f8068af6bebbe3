// softmax.cpp — softmax, log-softmax and cross-entropy along the last axis.
//
// Stability: every row subtracts its maximum first, so exp never overflows and the largest
// term is exp(0) = 1 (the sum is >= 1, its log finite). Rows are independent: one OpenMP
// task per row.
#include <omp.h>

#include <cmath>

#include "tensor/backend.h"
#include "tensor/fast_exp.h"
#include "tensor/strided.h"

namespace poslab::kernel {
namespace {

void check_rows(const char* op, const Tensor& x) {
  check_defined(op, x, "x");
  if (x.dim() < 1) fail(op, ": expected at least one dim, but got a scalar");
}

// y = softmax(x) per row (log_space: y = log softmax(x)).
//   m = max_j x_j;  s = sum_j exp(x_j - m);  y_j = exp(x_j - m) / s  |  x_j - m - log s
template <class T>
void softmax_rows(const T* x, T* y, int64_t rows, int64_t n, bool log_space) {
#pragma omp parallel for if (rows * n > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    T m = xr[0];
    for (int64_t j = 1; j < n; ++j) m = xr[j] > m ? xr[j] : m;
    double s = 0;  // exp(x_j - m) lands in y first: one (vectorised) exp per element
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < n; ++j) {
      yr[j] = exp_k(xr[j] - m);
      s += yr[j];
    }
    if (log_space) {
      T ls = static_cast<T>(std::log(s));
      for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - m - ls;
    } else {
      T inv = static_cast<T>(1.0 / s);
      for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
    }
  }
}

// The backward of softmax_rows, per row, from the saved output y (log_space: y = log p):
//   softmax:     dx_j = y_j (dy_j - sum_k dy_k y_k)      (the Jacobian diag(y) - y y^T)
//   log_softmax: dx_j = dy_j - exp(y_j) sum_k dy_k       (the Jacobian I - 1 p^T, p = exp(y))
// The row's sum is accumulated in double, then rounded once to T.
template <class T>
void softmax_rows_backward(const T* y, const T* dy, T* dx, int64_t rows, int64_t n,
                           bool log_space) {
#pragma omp parallel for if (rows * n > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const T *yr = y + r * n, *dyr = dy + r * n;
    T* dxr = dx + r * n;
    double acc = 0;
    for (int64_t j = 0; j < n; ++j)
      acc += log_space ? static_cast<double>(dyr[j]) : static_cast<double>(dyr[j]) * yr[j];
    T s = static_cast<T>(acc);
    for (int64_t j = 0; j < n; ++j)
      dxr[j] = log_space ? dyr[j] - std::exp(yr[j]) * s : yr[j] * (dyr[j] - s);
  }
}

Tensor rowwise(const Tensor& x, bool log_space) {
  Tensor xc = x.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  int64_t n = x.size(-1);
  if (n == 0 || x.numel() == 0) return y;
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    softmax_rows<T>(xc.data<T>(), y.data<T>(), x.numel() / n, n, log_space);
  });
  return y;
}

Tensor rowwise_backward(const Tensor& y, const Tensor& dy, bool log_space) {
  Tensor yc = y.contiguous(), dyc = dy.contiguous();
  Tensor dx = Tensor::empty(y.shape(), y.dtype());
  int64_t n = y.size(-1), rows = n ? y.numel() / n : 0;
  dispatch(y.dtype(), [&](auto zero) {
    using T = decltype(zero);
    softmax_rows_backward<T>(yc.data<T>(), dyc.data<T>(), dx.data<T>(), rows, n, log_space);
  });
  return dx;
}

}  // namespace

Tensor softmax(const Tensor& x) {
  check_rows("softmax", x);
  return backend(x.device()).softmax(x);
}
Tensor log_softmax(const Tensor& x) {
  check_rows("log_softmax", x);
  return backend(x.device()).log_softmax(x);
}

Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  return backend(y.device()).softmax_backward(y, dy);
}
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy) {
  return backend(y.device()).log_softmax_backward(y, dy);
}

Tensor cross_entropy(const Tensor& logits, const Ids& targets, Tensor* probs, Tensor* row_loss) {
  check_rows("cross_entropy", logits);
  if (logits.dim() != 2)
    fail("cross_entropy: expected logits (N,V), but got ", shape_str(logits.shape()));
  int64_t N = logits.size(0), V = logits.size(1);
  if (static_cast<int64_t>(targets.data.size()) != N)
    fail("cross_entropy: expected ", N, " targets for logits ", shape_str(logits.shape()),
         ", but got ", targets.data.size());
  if (N == 0)
    fail("cross_entropy: expected at least one row, but got logits ", shape_str(logits.shape()));
  int64_t counted = 0;
  for (int64_t n = 0; n < N; ++n) {
    if (targets.data[n] < -1 || targets.data[n] >= V)
      fail("cross_entropy: target ", targets.data[n], " at row ", n, " is outside [0, ", V,
           ") (or -1 to ignore the row)");
    counted += targets.data[n] >= 0;
  }
  if (counted == 0) fail("cross_entropy: every one of the ", N, " rows is ignored (target -1)");
  return backend(logits.device()).cross_entropy(logits, targets, probs, row_loss);
}

Tensor cross_entropy_backward(const Tensor& probs, const Ids& targets, const Tensor& dl) {
  check_same("cross_entropy_backward", probs, dl);
  if (dl.numel() != 1)
    fail("cross_entropy_backward: expected a one-element incoming gradient, but got shape ",
         shape_str(dl.shape()));
  return backend(probs.device()).cross_entropy_backward(probs, targets, dl);
}

namespace cpu {
namespace {

Tensor softmax(const Tensor& x) {
  return rowwise(x, false);
}
Tensor log_softmax(const Tensor& x) {
  return rowwise(x, true);
}
Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  return rowwise_backward(y, dy, false);
}
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy) {
  return rowwise_backward(y, dy, true);
}

// loss = (1/N') sum_n [ log sum_v exp(z_nv) - z_n,t_n ]     (log-sum-exp with the max trick)
// A target of -1 marks a row to ignore (masked-LM positions that were not masked): it adds
// nothing to the loss, N' counts the other rows, and its row_loss is 0.
Tensor cross_entropy(const Tensor& logits, const Ids& targets, Tensor* probs, Tensor* row_loss) {
  int64_t N = logits.size(0), V = logits.size(1), counted = 0;
  for (int32_t t : targets.data) counted += t >= 0;
  // One pass per row: p = softmax(z) (saved for backward) and -log p_t = lse(z) - z_t, with
  // lse(z) = m + log sum_v exp(z_v - m) from the logits themselves (not log p_t: accurate
  // when p_t underflows).
  Tensor zc = logits.contiguous();
  Tensor p = Tensor::empty(logits.shape(), logits.dtype());
  Tensor rl = Tensor::empty({N}, logits.dtype());
  double total = 0;
  dispatch(logits.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* pz = zc.data<T>();
    T* pp = p.data<T>();
    T* pl = rl.data<T>();
#pragma omp parallel for reduction(+ : total) if (N * V > kParallelGrain)
    for (int64_t n = 0; n < N; ++n) {
      const T* z = pz + n * V;
      T* pr = pp + n * V;
      T m = z[0];
      for (int64_t v = 1; v < V; ++v) m = z[v] > m ? z[v] : m;
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t v = 0; v < V; ++v) {
        pr[v] = exp_k(z[v] - m);
        s += pr[v];
      }
      T inv = static_cast<T>(1 / s);
      for (int64_t v = 0; v < V; ++v) pr[v] *= inv;
      if (targets.data[n] < 0) {  // ignored row
        pl[n] = 0;
        continue;
      }
      double l = std::log(s) + m - z[targets.data[n]];
      pl[n] = static_cast<T>(l);
      total += l;
    }
  });
  if (probs) *probs = p;
  if (row_loss) *row_loss = rl;
  return Tensor::full({}, total / counted, logits.dtype());
}

// dz_nv = dloss * (p_nv - [v == t_n]) / N'   (0 on ignored rows)
Tensor cross_entropy_backward(const Tensor& probs, const Ids& targets, const Tensor& dl) {
  double dloss = dl.item();
  int64_t N = probs.size(0), V = probs.size(1), counted = 0;
  for (int32_t t : targets.data) counted += t >= 0;
  Tensor dz = Tensor::empty(probs.shape(), probs.dtype());
  dispatch(probs.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* pp = probs.data<T>();
    T* pd = dz.data<T>();
    T s = static_cast<T>(dloss / counted);
#pragma omp parallel for if (N * V > kParallelGrain)
    for (int64_t n = 0; n < N; ++n) {
      T w = targets.data[n] >= 0 ? s : T(0);
      for (int64_t v = 0; v < V; ++v) pd[n * V + v] = pp[n * V + v] * w;
      if (targets.data[n] >= 0) pd[n * V + targets.data[n]] -= s;
    }
  });
  return dz;
}

}  // namespace

void add_softmax(Backend& k) {
  k.softmax = softmax;
  k.softmax_backward = softmax_backward;
  k.log_softmax = log_softmax;
  k.log_softmax_backward = log_softmax_backward;
  k.cross_entropy = cross_entropy;
  k.cross_entropy_backward = cross_entropy_backward;
}

}  // namespace cpu
}  // namespace poslab::kernel
