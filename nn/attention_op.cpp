#include "nn/attention_op.h"

#include "tensor/fast_exp.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/cuda_ops.h"

namespace poslab {
namespace {

// Rows are processed in blocks of this many queries: a block needs only the keys its last
// row can see (causal), so about half of the T x T work of a causal head is skipped.
constexpr int64_t kRowBlock = 64;

struct Dims {
  int64_t B, Tq, Tk, H, D;
};

// A (b,h) slice of x (B,T,H,D) as a row-major (T, D) matrix: pointer and row stride.
template <class T>
const T* head_ptr(const Tensor& x, int64_t b, int64_t h) {
  return x.data<T>() + b * x.strides()[0] + h * x.strides()[2];
}

// Adds the ALiBi bias to one row of scores s over its `visible` keys (query at position P):
// -m |P - j|, shifted by the row's largest bias (that of the nearest key). Softmax is
// unchanged by a constant per row, and the shifted bias stays small (at most m * Tk) even at
// positions in the millions, where -m P alone would swamp float precision.
template <class T>
void add_alibi_row(T* s, int64_t P, int64_t visible, double slope) {
  if (slope == 0 || visible <= 0) return;
  int64_t nearest = std::clamp<int64_t>(P, 0, visible - 1);
  double dmin = static_cast<double>(P > nearest ? P - nearest : nearest - P);
#pragma omp simd
  for (int64_t j = 0; j < visible; ++j)
    s[j] -= static_cast<T>(slope * (static_cast<double>(P > j ? P - j : j - P) - dmin));
}

// Keys visible to the query at position P among the J columns of its block.
inline int64_t visible_keys(int64_t P, int64_t J, bool causal) {
  return causal ? std::clamp<int64_t>(P + 1, 0, J) : J;
}

// Scores -> probabilities for rows [i0, i1) of one (b,h), in place in S (row stride ldS),
// over the J visible columns (columns J..ldS are not touched here).
//   S_ij += bias_ij;  S_ij = -inf where masked;  S_i = softmax(S_i)
// lse (optional) receives log sum_j exp(S_ij) per row: all backward needs to rebuild P.
template <class T>
void scores_to_probs(T* S, int64_t ldS, int64_t i0, int64_t i1, int64_t J, double slope,
                     const AttentionOptions& o, T* lse) {
  for (int64_t i = i0; i < i1; ++i) {
    T* s = S + (i - i0) * ldS;
    int64_t P = o.q_pos0 + i, visible = visible_keys(P, J, o.causal);
    add_alibi_row(s, P, visible, slope);
    T m = -std::numeric_limits<T>::infinity();
    // written as a compare-select, which GCC turns into vector maxima; std::max here stayed
    // a scalar chain, half the time of this function
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < visible; ++j) m = s[j] > m ? s[j] : m;
    double z = 0;
#pragma omp simd reduction(+ : z)
    for (int64_t j = 0; j < visible; ++j) {
      s[j] = exp_k(s[j] - m);  // vectorised exp for f32 (tensor/fast_exp.h)
      z += s[j];
    }
    T inv = static_cast<T>(1 / z);
#pragma omp simd
    for (int64_t j = 0; j < visible; ++j) s[j] *= inv;
    for (int64_t j = visible; j < J; ++j) s[j] = 0;
    if (lse) lse[i] = m + static_cast<T>(std::log(z));
  }
}

// Forward for every (b,h), in row blocks: S = scale Q K^T for 64 queries at a time against
// the keys the block can see, softmax in place, O = P V. Memory is one block of scores per
// thread (64 x Tk), never a T x T matrix. lse: (B,H,Tq) to save for backward, or null.
template <class T>
void forward(const Tensor& q, const Tensor& k, const Tensor& v, T* out, T* lse, const Dims& d,
             const AttentionOptions& o, double scale) {
  int64_t sq = q.strides()[1], sk = k.strides()[1], sv = v.strides()[1], so = d.H * d.D;
  const int64_t block = kRowBlock;
#pragma omp parallel
  {
    std::vector<T> scratch(block * d.Tk);
#pragma omp for collapse(2) schedule(dynamic)
    for (int64_t bh = 0; bh < d.B * d.H; ++bh)
      for (int64_t i0 = 0; i0 < d.Tq; i0 += block) {
        int64_t b = bh / d.H, h = bh % d.H, i1 = std::min(d.Tq, i0 + block);
        // keys visible to the last row of the block
        int64_t J = o.causal ? std::min(d.Tk, o.q_pos0 + i1) : d.Tk;
        T* S = scratch.data();
        const int64_t ldS = d.Tk;
        T* O = out + b * d.Tq * so + h * d.D;
        if (J <= 0) continue;
        const T *Q = head_ptr<T>(q, b, h), *K = head_ptr<T>(k, b, h), *V = head_ptr<T>(v, b, h);
        kernel::gemm<T>(false, true, i1 - i0, J, d.D, static_cast<T>(scale), Q + i0 * sq, sq, K, sk,
                        T(0), S, ldS);
        double slope = o.alibi_slopes.empty() ? 0 : o.alibi_slopes[h];
        scores_to_probs<T>(S, ldS, i0, i1, J, slope, o, lse ? lse + bh * d.Tq : nullptr);
        kernel::gemm<T>(false, false, i1 - i0, d.D, J, T(1), S, ldS, V, sv, T(0), O + i0 * so, so);
      }
  }
}

// Backward for every (b,h), with dO = dout[b,:,h,:] and only the row log-sum-exp saved
// (the recomputation of FlashAttention-2: T. Dao, arXiv:2307.08691, section 3.1.2):
//   P  = exp(scale Q K^T + bias - lse)   rebuilt per row block (masked entries: 0)
//   dV = P^T dO                          (Tk,Tq)(Tq,D)
//   dP = dO V^T                          (Tq,D)(D,Tk)
//   dS_ij = P_ij (dP_ij - sum_k dP_ik P_ik)      softmax backward, row by row
//   dQ = scale dS K,  dK = scale dS^T Q          S = scale Q K^T + bias
// The bias (ALiBi) and the mask are constants added to S: they pass dS through unchanged and
// receive nothing; masked entries have P = 0, hence dS = 0. Row blocks of kRowBlock queries
// touch only the J keys they can see, and add their share into dK and dV (beta = 1). One
// extra Q K^T product buys memory O(Tq) per head instead of O(Tq Tk) for a saved P.
template <class T>
void backward(const Tensor& q, const Tensor& k, const Tensor& v, const T* lse, const T* dout, T* dq,
              T* dk, T* dv, const Dims& d, double scale, const AttentionOptions& o) {
  int64_t sq = q.strides()[1], sk = k.strides()[1], sv = v.strides()[1], so = d.H * d.D;
#pragma omp parallel
  {
    std::vector<T> Pb(kRowBlock * d.Tk), dS(kRowBlock * d.Tk);
#pragma omp for schedule(dynamic)
    for (int64_t bh = 0; bh < d.B * d.H; ++bh) {
      int64_t b = bh / d.H, h = bh % d.H;
      const T* dO = dout + b * d.Tq * so + h * d.D;
      const T *Q = head_ptr<T>(q, b, h), *K = head_ptr<T>(k, b, h), *V = head_ptr<T>(v, b, h);
      int64_t ok = b * d.Tk * so + h * d.D, oq = b * d.Tq * so + h * d.D;
      double slope = o.alibi_slopes.empty() ? 0 : o.alibi_slopes[h];
      for (int64_t j = 0; j < d.Tk; ++j)  // dK, dV accumulate over row blocks
        std::fill(dk + ok + j * so, dk + ok + j * so + d.D, T(0)),
            std::fill(dv + ok + j * so, dv + ok + j * so + d.D, T(0));
      for (int64_t i0 = 0; i0 < d.Tq; i0 += kRowBlock) {
        int64_t i1 = std::min(d.Tq, i0 + kRowBlock), R = i1 - i0;
        int64_t J = o.causal ? std::min(d.Tk, o.q_pos0 + i1) : d.Tk;
        if (J <= 0) {
          for (int64_t i = i0; i < i1; ++i)
            std::fill(dq + oq + i * so, dq + oq + i * so + d.D, T(0));
          continue;
        }
        // P (R, J), row stride J, rebuilt from the scores and the saved lse
        T* P = Pb.data();
        kernel::gemm<T>(false, true, R, J, d.D, static_cast<T>(scale), Q + i0 * sq, sq, K, sk, T(0),
                        P, J);
        for (int64_t i = 0; i < R; ++i) {
          T* p = P + i * J;
          int64_t pos = o.q_pos0 + i0 + i, visible = visible_keys(pos, J, o.causal);
          add_alibi_row(p, pos, visible, slope);
          T l = lse[bh * d.Tq + i0 + i];
#pragma omp simd
          for (int64_t j = 0; j < visible; ++j) p[j] = exp_k(p[j] - l);
          for (int64_t j = visible; j < J; ++j) p[j] = 0;
        }
        const T* dOb = dO + i0 * so;
        kernel::gemm<T>(true, false, J, d.D, R, T(1), P, J, dOb, so, T(1), dv + ok, so);
        kernel::gemm<T>(false, true, R, J, d.D, T(1), dOb, so, V, sv, T(0), dS.data(), J);
        for (int64_t i = 0; i < R; ++i) {
          T* r = dS.data() + i * J;
          const T* p = P + i * J;
          double dot = 0;
#pragma omp simd reduction(+ : dot)
          for (int64_t j = 0; j < J; ++j) dot += static_cast<double>(r[j]) * p[j];
#pragma omp simd
          for (int64_t j = 0; j < J; ++j) r[j] = p[j] * (r[j] - static_cast<T>(dot));
        }
        kernel::gemm<T>(false, false, R, d.D, J, static_cast<T>(scale), dS.data(), J, K, sk, T(0),
                        dq + oq + i0 * so, so);
        kernel::gemm<T>(true, false, J, d.D, R, static_cast<T>(scale), dS.data(), J, Q + i0 * sq,
                        sq, T(1), dk + ok, so);
      }
    }
  }
}

Tensor rows_unit_stride(const Tensor& x) {
  return x.strides()[3] == 1 ? x : x.contiguous();
}

}  // namespace

Tensor attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                 const AttentionOptions& opt) {
  check_same("attention", q_in, k_in);
  check_same("attention", q_in, v_in);
  if (q_in.dim() != 4 || k_in.dim() != 4 || k_in.shape() != v_in.shape() ||
      q_in.size(0) != k_in.size(0) || q_in.size(2) != k_in.size(2) || q_in.size(3) != k_in.size(3))
    fail("attention: expected q (B,Tq,H,D), k and v (B,Tk,H,D), but got q ",
         shape_str(q_in.shape()), ", k ", shape_str(k_in.shape()), ", v ", shape_str(v_in.shape()));
  Dims d{q_in.size(0), q_in.size(1), k_in.size(1), q_in.size(2), q_in.size(3)};
  if (!opt.alibi_slopes.empty() && static_cast<int64_t>(opt.alibi_slopes.size()) != d.H)
    fail("attention: expected ", d.H, " ALiBi slopes (one per head), but got ",
         opt.alibi_slopes.size());
  Tensor q = rows_unit_stride(q_in), k = rows_unit_stride(k_in), v = rows_unit_stride(v_in);
  double scale = opt.scale > 0 ? opt.scale : 1 / std::sqrt(static_cast<double>(d.D));
  if (q_in.device() == Device::cuda)
    return kernel::cuda::attention(q_in, k_in, v_in,
                                   {opt.causal, scale, opt.alibi_slopes, opt.q_pos0});
  bool grad = any_requires_grad({&q_in, &k_in, &v_in});
  Tensor out = Tensor::empty({d.B, d.Tq, d.H, d.D}, q.dtype());
  Tensor lse = grad ? Tensor::empty({d.B, d.H, d.Tq}, q.dtype()) : Tensor();  // saved
  dispatch(q.dtype(), [&](auto zero) {
    using T = decltype(zero);
    forward<T>(q, k, v, out.data<T>(), grad ? lse.data<T>() : nullptr, d, opt, scale);
  });
  Tensor sq = q.detach(), sk = k.detach(), sv = v.detach();
  return record("attention", out, {&q_in, &k_in, &v_in},
                [sq, sk, sv, lse, d, scale, opt](const Tensor& dy) {
                  Tensor dout = dy.contiguous();
                  Tensor dq = Tensor::empty(sq.shape(), sq.dtype()),
                         dk = Tensor::empty(sk.shape(), sk.dtype()),
                         dv = Tensor::empty(sv.shape(), sv.dtype());
                  dispatch(sq.dtype(), [&](auto zero) {
                    using T = decltype(zero);
                    backward<T>(sq, sk, sv, lse.data<T>(), dout.data<T>(), dq.data<T>(),
                                dk.data<T>(), dv.data<T>(), d, scale, opt);
                  });
                  return std::vector<Tensor>{dq, dk, dv};
                });
}

Tensor attention_probs_reference(const Tensor& q, const Tensor& k, const AttentionOptions& opt) {
  int64_t Tq = q.size(1), Tk = k.size(1), H = q.size(2), D = q.size(3);
  double sc = opt.scale > 0 ? opt.scale : 1 / std::sqrt(static_cast<double>(D));
  // constants (H,Tq,Tk): the ALiBi bias and the causal mask
  std::vector<double> bias(H * Tq * Tk, 0.0), keep(H * Tq * Tk, 1.0);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < Tq; ++i)
      for (int64_t j = 0; j < Tk; ++j) {
        int64_t P = opt.q_pos0 + i, at = (h * Tq + i) * Tk + j;
        if (!opt.alibi_slopes.empty())
          bias[at] = -opt.alibi_slopes[h] * std::abs(static_cast<double>(P - j));
        if (opt.causal && j > P) keep[at] = 0;
      }
  Tensor qh = permute(q, {0, 2, 1, 3}), kh = permute(k, {0, 2, 1, 3});
  Tensor s = scale(matmul(qh, transpose(kh, 2, 3)), sc);  // (B,H,Tq,Tk)
  s = add(s, Tensor::from_vector(bias, {H, Tq, Tk}, q.dtype()).to(q.device()));
  Tensor minus_inf =
      Tensor::full({}, -std::numeric_limits<double>::infinity(), q.dtype()).to(q.device());
  s = where(Tensor::from_vector(keep, {H, Tq, Tk}, q.dtype()).to(q.device()), s, minus_inf);
  return softmax(s);
}

Tensor attention_reference(const Tensor& q, const Tensor& k, const Tensor& v,
                           const AttentionOptions& opt) {
  Tensor out =
      matmul(attention_probs_reference(q, k, opt), permute(v, {0, 2, 1, 3}));  // (B,H,Tq,D)
  return contiguous(permute(out, {0, 2, 1, 3}));
}

}  // namespace poslab
