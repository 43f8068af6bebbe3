// attention_reference.cpp — the fused attention op as plain loops over its math, forward and
// backward: the reference its kernels (attention_kernels.cpp, .cu) are tested against
// (tests/nn/test_attention*.cpp), with every option the op has (decoding offsets, windows, log
// scale, per-row frequencies, the bias table and per-pair bias). Semantics: attention_op.h. In
// double. The model's attention layer in training, with each scheme's positional term, is
// written out on its own in nn/gpt_reference.cpp (read that first); this file is the op's.
//
// For batch b, head h (dropped below), query row i at position P_i = q_pos0 + i, and key j:
//   s_ij = scale q_i . k_j + rel_bias[h, j - i + Tq - 1]      (bias: 0 without a table)
//          + bias[b, h, i, j]                                  (the per-pair bias, if any:
//                                                                a tensor, or bias_rows)
//          (row_freqs w: q_i . k_j with each pair p of k_j turned by (j - P_i) w_ip)
//   row i sees key j iff j <= P_i (causal) and |P_i - j| < W (window W > 0): n_i keys
//   z_ij = lambda_i s_ij,  lambda_i = max(1, ln n_i / ln T0)   (log scale T0 > 0; else 1)
//   p_ij = exp(z_ij) / sum_k exp(z_ik) over the keys row i sees; 0 for the others
//   out_i = sum_j p_ij v_j
// Backward, from dout_i = dL/dout_i, each step inverting the forward line on its left:
//   out_i = sum_j p_ij v_j   ->  dv_j += p_ij dout_i,  dp_ij = dout_i . v_j
//   p_i = softmax(z_i)       ->  dz_ij = sum_k dp_ik p_ik (δ_kj - p_ij)
//                                      = p_ij (dp_ij - sum_k dp_ik p_ik)
//   z_ij = lambda_i s_ij     ->  ds_ij = lambda_i dz_ij  (lambda_i: a constant of the row)
//   s_ij = scale q_i . k_j   ->  dq_i += scale ds_ij k_j,  dk_j += scale ds_ij q_i
//          + bias[h, c]      ->  dbias[h, c] += ds_ij  (c = j - i + Tq - 1, over b too)
//          + bias[b,h,i,j]   ->  dbias[b,h,i,j] += ds_ij  (over b too when the batch shares it)
// Masked keys have p = 0, hence no gradient. With row_freqs: forward only.
#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/attention_reference.h"

#include "nn/attention_op.h"

namespace poslab {
namespace {

using Problem = AttentionProblem;

// The tensors' values as doubles, the scale resolved; no tensor that holds a node.
Problem problem_of(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o) {
  Problem p;
  p.B = q.size(0), p.Tq = q.size(1), p.Tk = k.size(1), p.H = q.size(2), p.D = q.size(3);
  p.q = q.to_vector(), p.k = k.to_vector(), p.v = v.to_vector(), p.o = o;
  if (p.o.scale <= 0) p.o.scale = 1 / std::sqrt(static_cast<double>(p.D));
  if (o.rel_bias.defined()) p.bias = o.rel_bias.to_vector();
  if (o.row_freqs.defined()) p.freqs = o.row_freqs.to_vector();
  if (o.bias.defined()) p.pair = o.bias.to_vector(), p.Bp = o.bias.size(0);
  p.o.rel_bias = p.o.row_freqs = p.o.bias = Tensor();
  return p;
}

// Whether the query at position P sees key j.
bool sees(const AttentionOptions& o, int64_t P, int64_t j) {
  if (o.causal && j > P) return false;
  return o.window <= 0 || std::abs(P - j) < o.window;
}

// s_ij of head h, before the log scale.
double score(const Problem& p, int64_t b, int64_t h, int64_t i, int64_t j) {
  const double *q = &p.q[p.at(p.Tq, b, i, h)], *k = &p.k[p.at(p.Tk, b, j, h)];
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
  if (!p.pair.empty()) s += p.pair[p.pair_at(b, h, i, j)];
  if (p.o.bias_rows) {  // the per-pair bias made row by row: asked for key j alone
    double x = 0;
    p.o.bias_rows->add_row(b, h, i, j, j + 1, &x);
    s += x;
  }
  return s;
}

// p_i (Tk values, 0 where masked) of row i of (b,h); returns lambda_i.
double row_probs(const Problem& p, int64_t b, int64_t h, int64_t i, std::vector<double>& prob) {
  const int64_t P = p.o.q_pos0 + i, T0 = p.o.log_scale_len;
  int64_t n = 0;
  for (int64_t j = 0; j < p.Tk; ++j) n += sees(p.o, P, j);
  const double lambda = T0 > 0 && n > T0 ? std::log(double(n)) / std::log(double(T0)) : 1.0;
  double m = -INFINITY, z = 0;  // the row's maximum, then sum of exps
  for (int64_t j = 0; j < p.Tk; ++j)
    if (sees(p.o, P, j)) m = std::max(m, prob[j] = lambda * score(p, b, h, i, j));
  for (int64_t j = 0; j < p.Tk; ++j) z += prob[j] = sees(p.o, P, j) ? std::exp(prob[j] - m) : 0;
  for (int64_t j = 0; j < p.Tk; ++j) prob[j] = z > 0 ? prob[j] / z : 0;
  return lambda;
}

Tensor tensor_like(const std::vector<double>& values, const Tensor& x) {  // x's shape, dtype
  return Tensor::from_vector(values, x.shape(), x.dtype()).to(x.device());
}

}  // namespace

// out (B,Tq,H,D): out_i = sum_j p_ij v_j.
std::vector<double> attention_reference_forward(const Problem& p) {
  std::vector<double> out(p.q.size(), 0.0), prob(p.Tk);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t i = 0; i < p.Tq; ++i) {
        row_probs(p, b, h, i, prob);
        for (int64_t j = 0; j < p.Tk; ++j)
          for (int64_t d = 0; d < p.D; ++d)
            out[p.at(p.Tq, b, i, h) + d] += prob[j] * p.v[p.at(p.Tk, b, j, h) + d];
      }
  return out;
}

// (B,H,Tq,Tk): row i of (b,h) is row_probs's p_i.
std::vector<double> attention_reference_probs(const Problem& p) {
  std::vector<double> out(p.B * p.H * p.Tq * p.Tk), prob(p.Tk);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t i = 0; i < p.Tq; ++i) {
        row_probs(p, b, h, i, prob);
        std::copy(prob.begin(), prob.end(), out.begin() + ((b * p.H + h) * p.Tq + i) * p.Tk);
      }
  return out;
}

// The gradients of q, k, v and the bias table, from dout (B,Tq,H,D): the formulas at the top.
AttentionProblemGrads attention_reference_backward(const Problem& p,
                                                   const std::vector<double>& dout) {
  AttentionProblemGrads g{std::vector<double>(p.q.size()), std::vector<double>(p.k.size()),
                          std::vector<double>(p.v.size()), std::vector<double>(p.bias.size()),
                          std::vector<double>(p.pair.size())};
  std::vector<double> prob(p.Tk), dp(p.Tk);
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t i = 0; i < p.Tq; ++i) {
        const double lambda = row_probs(p, b, h, i, prob);
        const int64_t qi = p.at(p.Tq, b, i, h);
        double dot = 0;  // sum_k dp_ik p_ik
        for (int64_t j = 0; j < p.Tk; ++j) {
          dp[j] = 0;
          for (int64_t d = 0; d < p.D; ++d) dp[j] += dout[qi + d] * p.v[p.at(p.Tk, b, j, h) + d];
          dot += dp[j] * prob[j];
        }
        for (int64_t j = 0; j < p.Tk; ++j) {
          const double ds = lambda * prob[j] * (dp[j] - dot);  // 0 where masked (p = 0)
          const int64_t kj = p.at(p.Tk, b, j, h);
          for (int64_t d = 0; d < p.D; ++d) {
            g.dv[kj + d] += prob[j] * dout[qi + d];
            g.dq[qi + d] += p.o.scale * ds * p.k[kj + d];
            g.dk[kj + d] += p.o.scale * ds * p.q[qi + d];
          }
          if (!g.dbias.empty()) g.dbias[h * (p.Tq + p.Tk - 1) + (j - i + p.Tq - 1)] += ds;
          if (!g.dpair.empty()) g.dpair[p.pair_at(b, h, i, j)] += ds;
        }
      }
  return g;
}

Tensor attention_probs_reference(const Tensor& q, const Tensor& k, const AttentionOptions& opt) {
  const Problem p = problem_of(q, k, k, opt);
  return Tensor::from_vector(attention_reference_probs(p), {p.B, p.H, p.Tq, p.Tk}, q.dtype())
      .to(q.device());
}

Tensor attention_reference(const Tensor& q, const Tensor& k, const Tensor& v,
                           const AttentionOptions& opt) {
  if (opt.row_freqs.defined() && any_requires_grad({&q, &k, &v, &opt.rel_bias, &opt.bias}))
    fail("attention_reference: with row_freqs (evaluation only), run it under NoGrad");
  Problem p = problem_of(q, k, v, opt);
  Tensor y = tensor_like(attention_reference_forward(p), q);
  // shapes, dtypes and devices of the gradients (empty tensors: the closure holds no node)
  auto like = [](const Tensor& x) { return Tensor::empty(x.shape(), x.dtype(), x.device()); };
  Tensor lq = like(q), lk = like(k), lv = like(v),
         lb = opt.rel_bias.defined() ? like(opt.rel_bias) : Tensor(),
         lp = opt.bias.defined() ? like(opt.bias) : Tensor();
  return record("attention_reference", y, {&q, &k, &v, &opt.rel_bias, &opt.bias},
                [p, lq, lk, lv, lb, lp](const Tensor& dy) {
                  AttentionProblemGrads g = attention_reference_backward(p, dy.to_vector());
                  return std::vector<Tensor>{tensor_like(g.dq, lq), tensor_like(g.dk, lk),
                                             tensor_like(g.dv, lv),
                                             lb.defined() ? tensor_like(g.dbias, lb) : Tensor(),
                                             lp.defined() ? tensor_like(g.dpair, lp) : Tensor()};
                });
}

}  // namespace poslab
