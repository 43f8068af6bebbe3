// attention_reference.cpp — attention as plain loops over its math, forward and backward: the
// file to read first, and the reference the fused kernels (attention_kernels.cpp, .cu) are
// tested against (tests/nn/test_attention.cpp). Semantics: attention_op.h.
//
// For one batch b and head h (dropped below), query row i at position P_i = q_pos0 + i, key j:
//   s_ij = scale q_i . k_j + rel_bias[h, j - i + Tq - 1]        (bias: 0 without a table)
//     or, with row_freqs w: s_ij = scale sum_p (q_i,2p, q_i,2p+1) . R((j - P_i) w_ip) (k_j,2p, ..)
//   row i sees key j iff j <= P_i (causal) and |P_i - j| < W (window W > 0); n_i keys
//   z_ij = lambda_i s_ij,  lambda_i = max(1, ln n_i / ln T0)     (log scale T0 > 0; else 1)
//   p_ij = exp(z_ij) / sum_j' exp(z_ij')  over the keys row i sees; 0 for the others
//   out_i = sum_j p_ij v_j
//
// Backward, with dout_i = dL/dout_i, every sum over the keys row i sees:
//   out_i = sum_j p_ij v_j       ->  dv_j += p_ij dout_i,   dp_ij = dout_i . v_j
//   p_i = softmax(z_i)           ->  dz_ij = sum_k dp_ik dp_ik/dz_ij = sum_k dp_ik p_ik (δ_kj -
//   p_ij)
//                                          = p_ij (dp_ij - sum_k dp_ik p_ik)
//   z_ij = lambda_i s_ij         ->  ds_ij = lambda_i dz_ij   (lambda_i: a constant of the row)
//   s_ij = scale q_i . k_j + bias ->  dq_i += scale ds_ij k_j,  dk_j += scale ds_ij q_i,
//                                     dbias[h, j - i + Tq - 1] += ds_ij  (summed over b too)
// Masked keys have p = 0, hence no gradient. Everything runs in double, whatever the dtype.
#include <cmath>
#include <vector>

#include "nn/attention_op.h"

namespace poslab {
namespace {

// The inputs as row-major doubles: x[((b T + t) H + h) D + d] for q (T = Tq), k and v (Tk).
struct Problem {
  int64_t B, Tq, Tk, H, D;
  std::vector<double> q, k, v, bias, freqs;  // bias (H, Tq+Tk-1), freqs (Tq, D/2): or empty
  AttentionOptions o;
  const double* row(const std::vector<double>& x, int64_t T, int64_t b, int64_t t,
                    int64_t h) const {
    return x.data() + ((b * T + t) * H + h) * D;
  }
};

Problem problem_of(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o) {
  Problem p{q.size(0),     q.size(1),     k.size(1), q.size(2), q.size(3), q.to_vector(),
            k.to_vector(), v.to_vector(), {},        {},        o};
  if (p.o.scale <= 0) p.o.scale = 1 / std::sqrt(static_cast<double>(p.D));
  p.o.rel_bias = o.rel_bias.defined() ? o.rel_bias.detach() : Tensor();  // no node held
  p.o.row_freqs = Tensor();
  if (o.rel_bias.defined()) p.bias = o.rel_bias.to_vector();
  if (o.row_freqs.defined()) p.freqs = o.row_freqs.to_vector();
  return p;
}

// Whether row i (at position P) sees key j.
bool sees(const AttentionOptions& o, int64_t P, int64_t j) {
  if (o.causal && j > P) return false;
  return o.window <= 0 || std::abs(P - j) < o.window;
}

// s_ij, before the log scale.
double score(const Problem& p, int64_t b, int64_t h, int64_t i, int64_t j) {
  const double *q = p.row(p.q, p.Tq, b, i, h), *k = p.row(p.k, p.Tk, b, j, h);
  double s = 0;
  if (p.freqs.empty()) {
    for (int64_t d = 0; d < p.D; ++d) s += q[d] * k[d];
  } else {
    for (int64_t c = 0; c < p.D / 2; ++c) {  // q . R(t) k per pair, t = (j - P_i) w_ic
      double t = static_cast<double>(j - (p.o.q_pos0 + i)) * p.freqs[i * (p.D / 2) + c];
      double x = k[2 * c], y = k[2 * c + 1];
      s += q[2 * c] * (x * std::cos(t) - y * std::sin(t)) +
           q[2 * c + 1] * (x * std::sin(t) + y * std::cos(t));
    }
  }
  s *= p.o.scale;
  if (!p.bias.empty()) s += p.bias[h * (p.Tq + p.Tk - 1) + (j - i + p.Tq - 1)];
  return s;
}

// p_i (Tk values, 0 where masked) of row i of (b,h); returns lambda_i.
double row_probs(const Problem& p, int64_t b, int64_t h, int64_t i, std::vector<double>& prob) {
  const int64_t P = p.o.q_pos0 + i;
  int64_t n = 0;
  for (int64_t j = 0; j < p.Tk; ++j) n += sees(p.o, P, j);
  const int64_t T0 = p.o.log_scale_len;
  const double lambda = T0 > 0 && n > T0 ? std::log(double(n)) / std::log(double(T0)) : 1.0;
  double m = -INFINITY, z = 0;
  for (int64_t j = 0; j < p.Tk; ++j)
    if (sees(p.o, P, j)) m = std::max(m, prob[j] = lambda * score(p, b, h, i, j));
  for (int64_t j = 0; j < p.Tk; ++j) z += prob[j] = sees(p.o, P, j) ? std::exp(prob[j] - m) : 0;
  for (int64_t j = 0; j < p.Tk; ++j) prob[j] = z > 0 ? prob[j] / z : 0;
  return lambda;
}

}  // namespace

Tensor attention_probs_reference(const Tensor& q, const Tensor& k, const AttentionOptions& opt) {
  Problem p = problem_of(q, k, k, opt);
  std::vector<double> out(p.B * p.H * p.Tq * p.Tk), prob(p.Tk);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t i = 0; i < p.Tq; ++i) {
        row_probs(p, b, h, i, prob);
        std::copy(prob.begin(), prob.end(), out.begin() + ((b * p.H + h) * p.Tq + i) * p.Tk);
      }
  return Tensor::from_vector(out, {p.B, p.H, p.Tq, p.Tk}, q.dtype()).to(q.device());
}

Tensor attention_reference(const Tensor& q, const Tensor& k, const Tensor& v,
                           const AttentionOptions& opt) {
  Problem p = problem_of(q, k, v, opt);
  std::vector<double> out(p.q.size(), 0.0), prob(p.Tk);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t i = 0; i < p.Tq; ++i) {
        row_probs(p, b, h, i, prob);
        double* o = out.data() + ((b * p.Tq + i) * p.H + h) * p.D;
        for (int64_t j = 0; j < p.Tk; ++j)
          for (int64_t d = 0; d < p.D; ++d) o[d] += prob[j] * p.row(p.v, p.Tk, b, j, h)[d];
      }
  Tensor y = Tensor::from_vector(out, q.shape(), q.dtype()).to(q.device());
  if (any_requires_grad({&q, &k, &v, &opt.rel_bias}) && opt.row_freqs.defined())
    fail("attention_reference: with row_freqs (evaluation only), run it under NoGrad");
  // what the gradients look like: shape, dtype, device (empty tensors, no node held)
  auto like = [](const Tensor& x) { return Tensor::empty(x.shape(), x.dtype(), x.device()); };
  Tensor gq = like(q), gk = like(k), gv = like(v),
         gb = p.bias.empty() ? Tensor() : like(p.o.rel_bias);
  return record("attention_reference", y, {&q, &k, &v, &opt.rel_bias},
                [p, gq, gk, gv, gb](const Tensor& dy) {
                  std::vector<double> dout = dy.to_vector(), dq(p.q.size()), dk(p.k.size()),
                                      dv(p.v.size()), dbias(p.bias.size()), prob(p.Tk), dp(p.Tk);
                  for (int64_t b = 0; b < p.B; ++b)
                    for (int64_t h = 0; h < p.H; ++h)
                      for (int64_t i = 0; i < p.Tq; ++i) {
                        const double lambda = row_probs(p, b, h, i, prob);
                        const double* go = dout.data() + ((b * p.Tq + i) * p.H + h) * p.D;
                        double dot = 0;  // sum_k dp_ik p_ik
                        for (int64_t j = 0; j < p.Tk; ++j) {
                          dp[j] = 0;
                          for (int64_t d = 0; d < p.D; ++d)
                            dp[j] += go[d] * p.row(p.v, p.Tk, b, j, h)[d];
                          dot += dp[j] * prob[j];
                        }
                        for (int64_t j = 0; j < p.Tk; ++j) {
                          if (prob[j] == 0) continue;  // masked (or underflowed): no gradient
                          const double ds = lambda * prob[j] * (dp[j] - dot);
                          for (int64_t d = 0; d < p.D; ++d) {
                            dv[((b * p.Tk + j) * p.H + h) * p.D + d] += prob[j] * go[d];
                            dq[((b * p.Tq + i) * p.H + h) * p.D + d] +=
                                p.o.scale * ds * p.row(p.k, p.Tk, b, j, h)[d];
                            dk[((b * p.Tk + j) * p.H + h) * p.D + d] +=
                                p.o.scale * ds * p.row(p.q, p.Tq, b, i, h)[d];
                          }
                          if (!dbias.empty())
                            dbias[h * (p.Tq + p.Tk - 1) + (j - i + p.Tq - 1)] += ds;
                        }
                      }
                  auto as = [](const std::vector<double>& g, const Tensor& x) {
                    return Tensor::from_vector(g, x.shape(), x.dtype()).to(x.device());
                  };
                  return std::vector<Tensor>{as(dq, gq), as(dk, gk), as(dv, gv),
                                             dbias.empty() ? Tensor() : as(dbias, gb)};
                });
}

}  // namespace poslab
