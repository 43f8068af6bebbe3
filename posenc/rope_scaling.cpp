#include "posenc/rope_scaling.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "tensor/cuda_ops.h"

namespace poslab {

std::vector<double> rope_base_frequencies(int64_t D, double theta) {
  std::vector<double> f(D / 2);
  for (int64_t i = 0; i < D / 2; ++i) f[i] = std::pow(theta, -2.0 * i / D);
  return f;
}

double rope_scale_factor(const RopeScaling& sc, int64_t L) {
  if (sc.factor > 0) return sc.factor;
  if (sc.train_len <= 0) fail("rope scaling: the training length T0 is unknown");
  return std::max(1.0, static_cast<double>(L) / sc.train_len);
}

double ntk_theta(double theta, int64_t D, double s) {
  if (D <= 2)
    fail(
        "rope scaling ntk/dynamic: theta s^(r/(r-2)) needs more than r = 2 rotated dims, but "
        "got r = ",
        D);
  return theta * std::pow(s, static_cast<double>(D) / (D - 2));
}

std::vector<double> yarn_frequencies(int64_t D, double theta, double s, int64_t T0) {
  const double alpha = 1, beta = 32;
  std::vector<double> f = rope_base_frequencies(D, theta);
  for (double& fi : f) {
    double lambda = 2 * M_PI / fi, r = T0 / lambda;
    double gamma = std::clamp((r - alpha) / (beta - alpha), 0.0, 1.0);
    fi = (1 - gamma) * fi / s + gamma * fi;
  }
  return f;
}

double yarn_mscale(double s) {
  return 0.1 * std::log(s) + 1;
}

RopeFrequencies rope_frequencies(int64_t D, double theta, const RopeScaling& sc, int64_t L) {
  RopeFrequencies r;
  switch (sc.kind) {
    case ScalingKind::none:
      r.freq = rope_base_frequencies(D, theta);
      break;
    case ScalingKind::linear:
      r.freq = rope_base_frequencies(D, theta);
      r.pos_scale = 1 / rope_scale_factor(sc, L);
      break;
    case ScalingKind::ntk:
      r.freq = rope_base_frequencies(D, ntk_theta(theta, D, rope_scale_factor(sc, L)));
      break;
    case ScalingKind::yarn: {
      double s = rope_scale_factor(sc, L);
      r.freq = yarn_frequencies(D, theta, s, sc.train_len);
      r.mscale = yarn_mscale(s);
      break;
    }
    case ScalingKind::dynamic:
      fail("rope_frequencies: dynamic scaling has per-row frequencies");
  }
  return r;
}

// Scalar math per (b, h) and query row i at position P, over the r/2 rotated pairs (lo_p, hi_p)
// of the layout (rope.h) and the D - r unrotated dims:
//   w_p = ntk_theta(theta, r, max(1, (P+1)/T0))^(-2p/r)
//   q' = R(P w) q_i;  for j <= P: k'_j = R(j w) k_j;  score_j = q' . k'_j / sqrt(D)
//   out_i = sum_j softmax(score)_j v_j
// R(j w) for j = 0, 1, 2, ... comes from the angle-addition recurrence (cos, sin of (j+1)w
// from those of j w), in double: no trig in the inner loop, error ~1e-13 after 10^4 steps.
struct DynamicArgs {
  double theta;
  int64_t T0, q_pos0, r;
  bool half_layout;
};

template <class T>
static void dynamic_kernel(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out,
                           const DynamicArgs& a) {
  int64_t B = q.size(0), Tq = q.size(1), H = q.size(2), D = q.size(3), r = a.r, half = r / 2;
  int64_t Tk = k.size(1), lo_step = a.half_layout ? 1 : 2, hi_off = a.half_layout ? half : 1;
  const T *pq = q.data<T>(), *pk = k.data<T>(), *pv = v.data<T>();
  T* po = out.data<T>();
  double inv_sqrt_d = 1 / std::sqrt(static_cast<double>(D));
#pragma omp parallel
  {
    std::vector<double> w(half), cs(half), sn(half), c1(half), s1(half), qr(D), score(Tk), acc(D);
#pragma omp for collapse(2) schedule(dynamic, 4)
    for (int64_t i = 0; i < Tq; ++i)
      for (int64_t bh = 0; bh < B * H; ++bh) {
        int64_t b = bh / H, h = bh % H, P = a.q_pos0 + i, J = std::min(P + 1, Tk);
        double s = std::max(1.0, static_cast<double>(P + 1) / a.T0);
        double th = ntk_theta(a.theta, r, s);
        for (int64_t p = 0; p < half; ++p) w[p] = std::pow(th, -2.0 * p / r);
        const T* qi = pq + ((b * Tq + i) * H + h) * D;
        for (int64_t d = r; d < D; ++d) qr[d] = qi[d];
        for (int64_t p = 0; p < half; ++p) {  // q' = R(P w) q
          int64_t lo = p * lo_step, hi = lo + hi_off;
          double ang = P * w[p], c = std::cos(ang), sa = std::sin(ang);
          qr[lo] = qi[lo] * c - qi[hi] * sa;
          qr[hi] = qi[lo] * sa + qi[hi] * c;
          cs[p] = 1, sn[p] = 0, c1[p] = std::cos(w[p]), s1[p] = std::sin(w[p]);
        }
        double m = -INFINITY;
        for (int64_t j = 0; j < J; ++j) {
          const T* kj = pk + ((b * Tk + j) * H + h) * D;
          double dot = 0;
          for (int64_t d = r; d < D; ++d) dot += qr[d] * kj[d];
          for (int64_t p = 0; p < half; ++p) {  // k' = R(j w) k, dotted with q'
            int64_t lo = p * lo_step, hi = lo + hi_off;
            double k0 = kj[lo] * cs[p] - kj[hi] * sn[p];
            double k1 = kj[lo] * sn[p] + kj[hi] * cs[p];
            dot += qr[lo] * k0 + qr[hi] * k1;
            double nc = cs[p] * c1[p] - sn[p] * s1[p];  // advance the angle by w
            sn[p] = sn[p] * c1[p] + cs[p] * s1[p];
            cs[p] = nc;
          }
          score[j] = dot * inv_sqrt_d;
          m = std::max(m, score[j]);
        }
        double z = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < J; ++j) {
          double e = std::exp(score[j] - m);
          z += e;
          const T* vj = pv + ((b * Tk + j) * H + h) * D;
          for (int64_t d = 0; d < D; ++d) acc[d] += e * vj[d];
        }
        T* oi = po + ((b * Tq + i) * H + h) * D;
        for (int64_t d = 0; d < D; ++d) oi[d] = static_cast<T>(acc[d] / z);
      }
  }
}

Tensor dynamic_rope_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                              double theta, int64_t T0, int64_t q_pos0, int64_t r,
                              RopeLayout layout) {
  if (q_in.requires_grad() && grad_enabled())
    fail("rope: dynamic scaling is for evaluation only (no gradient); run it under NoGrad");
  if (q_in.dim() != 4 || k_in.shape() != v_in.shape() || q_in.size(3) != k_in.size(3) ||
      q_in.size(3) % 2 != 0)
    fail("dynamic_rope_attention: expected q (B,Tq,H,D), k and v (B,Tk,H,D) with even D, but got ",
         shape_str(q_in.shape()), ", ", shape_str(k_in.shape()), ", ", shape_str(v_in.shape()));
  if (r <= 2 || r % 2 != 0 || r > q_in.size(3))  // r = 2: theta s^(r/(r-2)) is infinite
    fail("dynamic_rope_attention: expected an even number r of rotated dims with 2 < r <= D = ",
         q_in.size(3), ", but got r = ", r);
  bool half_layout = layout == RopeLayout::half;
  if (q_in.device() == Device::cuda)
    return kernel::cuda::dynamic_rope_attention(q_in, k_in, v_in, theta, T0, q_pos0, r,
                                                half_layout);
  Tensor q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
  Tensor out = Tensor::empty(q.shape(), q.dtype());
  dispatch(q.dtype(), [&](auto zero) {
    using T = decltype(zero);
    dynamic_kernel<T>(q, k, v, out, {theta, T0, q_pos0, r, half_layout});
  });
  return out;
}

}  // namespace poslab
