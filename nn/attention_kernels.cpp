// attention_kernels.cpp — the fused attention on the CPU (semantics: attention_op.h; the same
// math as plain loops: attention_reference.cpp, its reference). The entry points are
// at the bottom: forward_heads and backward_heads share out the (b,h) heads among threads.
//
// Rows are processed in blocks of kRowBlock queries: a block needs only the keys its rows can
// see (causal: up to its last row's position; with a window W, from its first row's first
// key: about 48 + W keys), so about half of the T x T work of a causal head is skipped, and
// with a window all but a band; memory is one block of scores per thread (48 x Tk), never a
// T x T matrix. Per block:
//   S = scale Q K^T  (R, J)    then per row: S += bias, S *= lambda, mask, softmax  (P, lse)
//   O = P V          (R, D)
// A head's K^T and V enter every block's products: they are packed once per head
// (PackedOperand, tensor/parallel.h), not once per block; with a window, once per block, for
// the block's keys only.
//
// Inside a block the causal mask still zeroes a triangle: the block's last keys are seen by
// only some of its rows. Each product tells our sgemm where (CausalBand, tensor/sgemm.h), and
// sgemm skips the register tiles of masked scores and the k-terms that multiply masked zeros
// (bench/ops, attention forward + backward, against whole blocks). The threads share out whole
// heads (parallel_items, tensor/parallel.h; bench/train_step).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "nn/attention_kernels.h"
#include "tensor/fast_exp.h"
#include "tensor/parallel.h"

namespace poslab::kernel {
namespace {

// 48 rows: a multiple of both micro-kernels' tile heights (12 with AVX-512, 6 with AVX2), so
// no strip of a block is ragged, and small enough that the causal blocks skip most of the
// masked half. Larger blocks do not speed up a training step (bench/train_step), and each
// thread's block of scores (rows x Tk) grows with them: too much memory for evaluation windows
// of thousands of tokens.
constexpr int64_t kRowBlock = 48;

struct Dims {
  int64_t B, Tq, Tk, H, D;
};

Dims dims_of(const AttentionTensors& t) {
  return {t.q.size(0), t.q.size(1), t.k.size(1), t.q.size(2), t.q.size(3)};
}

// A (b,h) slice of x (B,T,H,D) as a row-major (T, D) matrix, its row stride x.strides()[1].
template <class T>
T* head_ptr(const Tensor& x, int64_t b, int64_t h) {
  return x.data<T>() + b * x.strides()[0] + h * x.strides()[2];
}

// The keys [lo, hi) the query at position P may attend to: j <= P (causal) and |P - j| <
// window (window > 0). Empty (lo == hi) when the masks leave it none.
struct KeySpan {
  int64_t lo, hi;
};
inline KeySpan row_keys(const AttentionOptions& o, int64_t Tk, int64_t P) {
  int64_t lo = 0, hi = o.causal ? P + 1 : Tk;
  if (o.window > 0) {
    lo = P - o.window + 1;
    if (!o.causal) hi = P + o.window;
  }
  lo = std::clamp<int64_t>(lo, 0, Tk);
  return {lo, std::clamp<int64_t>(hi, lo, Tk)};
}

// Keys [lo, hi) seen by the row block [i0, i1): from its first row's first key to its last
// row's last key (both grow with the row). With a window, key tiles left of lo are skipped.
inline KeySpan block_keys(const Dims& d, const AttentionOptions& o, int64_t i0, int64_t i1) {
  KeySpan first = row_keys(o, d.Tk, o.q_pos0 + i0), last = row_keys(o, d.Tk, o.q_pos0 + i1 - 1);
  return {first.lo, std::max(first.lo, last.hi)};
}

// lambda = max(1, ln n / ln T0) of a row that sees n keys (opt.log_scale_len = T0; 1 when
// off). Exactly 1 for n <= T0, and then the row is not multiplied at all.
inline double log_scale(const AttentionOptions& o, int64_t n) {
  if (o.log_scale_len <= 0 || n <= o.log_scale_len) return 1.0;
  return std::log(static_cast<double>(n)) / std::log(static_cast<double>(o.log_scale_len));
}

// Row i's keys as columns [a, e) of its block's (R, J - j0) scores, whose column 0 is key j0.
struct RowSpan {
  int64_t a, e;
};
inline RowSpan row_span(const Dims& d, const AttentionOptions& o, int64_t i, int64_t j0) {
  KeySpan k = row_keys(o, d.Tk, o.q_pos0 + i);
  return {k.lo - j0, k.hi - j0};
}

// The exp loops of a row run over whole vectors: up to its last key rounded up to a multiple
// of kLanes (16 floats: one AVX-512 vector, two AVX2 ones), at most J. The masked columns in
// the padding are first set to -inf, whose exp is 0, so they add nothing to a maximum or a sum
// and come out as P = 0. Without it each row ended in a scalar remainder loop of up to 15
// exps, one element at a time (bench/ops, attention forward).
constexpr int64_t kLanes = 16;
inline int64_t vector_end(int64_t visible, int64_t J) {
  return std::min(J, (visible + kLanes - 1) / kLanes * kLanes);
}

// Row i's slice of head h's bias table: bias_row(...)[j] = rel_bias[h, j - i + Tq - 1].
template <class T>
const T* bias_row(const AttentionOptions& o, const Dims& d, int64_t h, int64_t i) {
  if (!o.rel_bias.defined()) return nullptr;
  return o.rel_bias.data<T>() + h * (d.Tq + d.Tk - 1) + (d.Tq - 1 - i);
}

// Row i of (b,h) in the per-pair bias: pair_row(...)[j] = bias[b or 0, h, i, j].
template <class T>
const T* pair_row(const AttentionOptions& o, const Dims& d, int64_t b, int64_t h, int64_t i) {
  if (!o.bias.defined()) return nullptr;
  const int64_t bb = o.bias.size(0) == 1 ? 0 : b;
  return o.bias.data<T>() + ((bb * d.H + h) * d.Tq + i) * d.Tk;
}

// The band of a causal row block whose row 0 is the query at position `row0` and whose column
// 0 is key j0 (sgemm.h): row i sees columns j <= row0 - j0 + i.
inline CausalBand causal_band(const AttentionOptions& o, CausalBand::Kind kind, int64_t row0,
                              int64_t j0) {
  return o.causal ? CausalBand{kind, row0 - j0} : CausalBand{};
}

// Scores of rows [i0, i1) of one (b,h) against the J keys j0 .. j0+J-1 (K points at key j0)
// with per-row frequencies (opt.row_freqs), into S (row stride ldS). Scalar math per row i at
// position P, frequencies w (written for j0 = 0; otherwise q is turned by (P - j0) w, the
// same relative angles):
//   q' = R(P w) q_i;  for j < J: k'_j = R(j w) k_j;  S_ij = scale q' . k'_j
// (= scale q_i . R((j - P) w) k_j). Per pair p, with (a, b) = q' and (x, y) = k_j:
//   q' . R(t) k = cos t (a x + b y) + sin t (b x - a y)
// Each row has its own w, so this is no matrix product: O(J D) work per row, in double.
// The loops run over keys, kLanesF64 at a time, one pair p after another, adding each pair's
// term into the row's sums: lane l of a chunk starting at key c0 holds cos, sin of
// (c0 + l) w_p, and the next chunk's come from the angle-addition rule with the step
// kLanesF64 w_p (no trig in the loop; in double the error stays ~1e-13 over 10^4 keys).
// The keys' pairs are split once per block into x[p][j], y[p][j], contiguous in j. Each row
// stops at the keys it can see (rounded up to whole lanes): scores_to_probs reads no further.
// (Not the pairs inside each key: that needs a sum across the vector's lanes for every score;
// bench/eval_study, the dynamic-scaling evaluation.)
constexpr int64_t kLanesF64 = 8;
template <class T>
void rotary_scores(const T* Q, int64_t sq, const T* K, int64_t sk, const AttentionOptions& o,
                   const Dims& d, int64_t i0, int64_t i1, int64_t j0, int64_t J, T* S,
                   int64_t ldS) {
  const int64_t half = d.D / 2, Jp = (J + kLanesF64 - 1) / kLanesF64 * kLanesF64;
  std::vector<double> kx(half * Jp, 0.0), ky(half * Jp, 0.0), acc(Jp);  // pair p: [p Jp + j]
  for (int64_t j = 0; j < J; ++j)
    for (int64_t p = 0; p < half; ++p)
      kx[p * Jp + j] = K[j * sk + 2 * p], ky[p * Jp + j] = K[j * sk + 2 * p + 1];
  for (int64_t i = i0; i < i1; ++i) {
    const double* w = o.row_freqs.data<double>() + i * half;
    const T* qi = Q + i * sq;
    const int64_t P = o.q_pos0 + i - j0;
    const int64_t n = vector_end(row_span(d, o, i, j0).e, Jp);  // a multiple of 8, or Jp
    std::fill(acc.begin(), acc.begin() + n, 0.0);
    for (int64_t p = 0; p < half; ++p) {
      const double c = std::cos(double(P) * w[p]), s = std::sin(double(P) * w[p]);
      const double a = qi[2 * p] * c - qi[2 * p + 1] * s;  // q' = R(P w) q, pair p
      const double bq = qi[2 * p] * s + qi[2 * p + 1] * c;
      // lanes: the angles l w_p for l < kLanesF64; each chunk of keys steps them by kLanesF64 w_p
      double cs[kLanesF64], sn[kLanesF64];
      const double c1 = std::cos(w[p]), s1 = std::sin(w[p]);
      cs[0] = 1, sn[0] = 0;
      for (int64_t l = 1; l < kLanesF64; ++l)
        cs[l] = cs[l - 1] * c1 - sn[l - 1] * s1, sn[l] = sn[l - 1] * c1 + cs[l - 1] * s1;
      const double cstep = std::cos(kLanesF64 * w[p]), sstep = std::sin(kLanesF64 * w[p]);
      const double *x = kx.data() + p * Jp, *y = ky.data() + p * Jp;
      for (int64_t c0 = 0; c0 < n; c0 += kLanesF64) {
#pragma omp simd
        for (int64_t l = 0; l < kLanesF64; ++l) {
          const double xv = x[c0 + l], yv = y[c0 + l];
          acc[c0 + l] += cs[l] * (a * xv + bq * yv) + sn[l] * (bq * xv - a * yv);
          const double nc = cs[l] * cstep - sn[l] * sstep;
          sn[l] = sn[l] * cstep + cs[l] * sstep;
          cs[l] = nc;
        }
      }
    }
    T* out = S + (i - i0) * ldS;
    for (int64_t j = 0; j < std::min(n, J); ++j) out[j] = static_cast<T>(o.scale * acc[j]);
  }
}

// Row i's scores over its keys, columns [a, e) of s (column 0: key j0), before the softmax:
//   s_j += bias_ij (the table's, the per-pair tensor's, and the one bias_rows makes now);  s_j *=
//   lambda_i (log scale, when lambda_i != 1)
// the same operations in forward and in rebuild_probs, so P is rebuilt to the same bits.
template <class T>
void bias_and_scale(T* s, RowSpan r, int64_t b, int64_t i, int64_t j0, int64_t h, const Dims& d,
                    const AttentionOptions& o) {
  if (const T* bias = bias_row<T>(o, d, h, i)) {
    bias += j0;
#pragma omp simd
    for (int64_t j = r.a; j < r.e; ++j) s[j] += bias[j];
  }
  if (const T* pair = pair_row<T>(o, d, b, h, i)) {
    pair += j0;
#pragma omp simd
    for (int64_t j = r.a; j < r.e; ++j) s[j] += pair[j];
  }
  if (o.bias_rows) o.bias_rows->add_row(b, h, i, j0 + r.a, j0 + r.e, s + r.a);  // made here
  const double lambda = log_scale(o, r.e - r.a);
  if (lambda == 1.0) return;
  const T l = static_cast<T>(lambda);
#pragma omp simd
  for (int64_t j = r.a; j < r.e; ++j) s[j] *= l;
}

// The exp loops of a row with keys [a, e) run over whole vectors from `begin`: a rounded down
// to a multiple of kLanes (0 without a window), to vector_end(e, J). Returns begin, and sets
// the masked columns inside [begin, end) to -inf (exp: 0) and those outside to 0.
template <class T>
int64_t mask_row(T* s, RowSpan r, int64_t J, int64_t* end) {
  const T minus_inf = -std::numeric_limits<T>::infinity();
  const int64_t begin = r.a / kLanes * kLanes;
  *end = vector_end(r.e, J);
  std::fill(s, s + begin, T(0));
  std::fill(s + begin, s + r.a, minus_inf);
  std::fill(s + r.e, s + *end, minus_inf);
  return begin;
}

// Scores -> probabilities for rows [i0, i1) of one (b,h), in place in S (row stride ldS),
// over the J columns of keys j0 .. j0+J-1 (columns J..ldS are not touched here).
//   S_ij += bias_ij (the table's and the per-pair one's);  S_ij *= lambda_i;  S_ij = -inf where
//   masked;  S_i = softmax(S_i)
// lse (optional) receives log sum_j exp(S_ij) per row: all backward needs to rebuild P. A row
// that sees no key gets P = 0 (out 0) and lse = -inf.
template <class T>
void scores_to_probs(T* S, int64_t ldS, int64_t i0, int64_t i1, int64_t j0, int64_t J, int64_t b,
                     int64_t h, const Dims& d, const AttentionOptions& o, T* lse) {
  for (int64_t i = i0; i < i1; ++i) {
    T* s = S + (i - i0) * ldS;
    const RowSpan r = row_span(d, o, i, j0);
    const T minus_inf = -std::numeric_limits<T>::infinity();
    if (r.a >= r.e) {
      std::fill(s, s + J, T(0));
      if (lse) lse[i] = minus_inf;
      continue;
    }
    bias_and_scale(s, r, b, i, j0, h, d, o);
    int64_t end;
    const int64_t begin = mask_row(s, r, J, &end);
    T m = minus_inf;
    // written as a compare-select, which GCC turns into vector maxima; std::max here compiles
    // to a scalar chain (bench/ops, attention forward)
#pragma omp simd reduction(max : m)
    for (int64_t j = begin; j < end; ++j) m = s[j] > m ? s[j] : m;
    // z sums in T, one partial sum per vector lane: every term is in (0, 1] and one is 1, so
    // float's relative error stays ~1e-7 sqrt(J / lanes). Not in double: that halves the lanes
    // and adds a conversion per element (bench/ops, attention forward).
    T z = 0;
#pragma omp simd reduction(+ : z)
    for (int64_t j = begin; j < end; ++j) {
      s[j] = exp_k(s[j] - m);  // vectorised exp for f32 (tensor/fast_exp.h)
      z += s[j];
    }
    T inv = 1 / z;
#pragma omp simd
    for (int64_t j = begin; j < end; ++j) s[j] *= inv;
    std::fill(s + end, s + J, T(0));
    if (lse) lse[i] = m + std::log(z);
  }
}

// One thread's operands: K^T (D,J) and V (J,D) of the head (or, with a window, the block) it
// packed last.
template <class T>
struct ForwardThread {
  PackedOperand<T> kt{0}, vb{1};
  int64_t packed = -1;  // the head whose whole K^T and V they hold, or -1
};

// Rows [i0, i0 + kRowBlock) of head bh: S = scale Q K^T (or the rotary scores) against the
// keys the block sees, softmax in place (with lse), O = P V.
template <class T>
void forward_block(const AttentionTensors& t, const AttentionOptions& o, const Dims& d,
                   ForwardThread<T>& th, int64_t bh, int64_t i0) {
  int64_t sq = t.q.strides()[1], sk = t.k.strides()[1], sv = t.v.strides()[1], so = d.H * d.D;
  int64_t b = bh / d.H, h = bh % d.H, i1 = std::min(d.Tq, i0 + kRowBlock);
  T* lse = t.lse.defined() ? t.lse.data<T>() + bh * d.Tq : nullptr;
  const KeySpan keys = block_keys(d, o, i0, i1);
  const int64_t j0 = keys.lo, J = keys.hi - keys.lo;  // the block's keys j0 .. j0+J-1
  T* O = t.out.data<T>() + b * d.Tq * so + h * d.D;
  if (J <= 0) {  // no row of the block sees a key: out 0
    for (int64_t i = i0; i < i1; ++i) {
      std::fill(O + i * so, O + i * so + d.D, T(0));
      if (lse) lse[i] = -std::numeric_limits<T>::infinity();
    }
    return;
  }
  const T *Q = head_ptr<T>(t.q, b, h), *K = head_ptr<T>(t.k, b, h) + j0 * sk,
          *V = head_ptr<T>(t.v, b, h) + j0 * sv;
  if (o.window > 0) {  // each block its own keys: packed per block, only its window
    th.kt.set(K, sk, true, d.D, J), th.vb.set(V, sv, false, J, d.D);
  } else if (th.packed != bh) {
    prefetch_rows(Q, sq, i0, i1, d.D);  // arrives while K^T is packed
    th.kt.set(K, sk, true, d.D, d.Tk), th.vb.set(V, sv, false, d.Tk, d.D);
    th.packed = bh;
  }
  prefetch_rows(Q, sq, i1, std::min(d.Tq, i1 + kRowBlock), d.D);  // the next block's
  T* S = thread_scratch<T>(0, kRowBlock * d.Tk);  // scores, then probabilities (R, J)
  const int64_t row0 = o.q_pos0 + i0;
  if (o.row_freqs.defined())
    rotary_scores<T>(Q, sq, K, sk, o, d, i0, i1, j0, J, S, J);
  else
    packed_gemm<T>(false, i1 - i0, J, d.D, static_cast<T>(o.scale), Q + i0 * sq, sq, th.kt, T(0), S,
                   J, causal_band(o, CausalBand::cols, row0, j0));
  scores_to_probs<T>(S, J, i0, i1, j0, J, b, h, d, o, lse);
  packed_gemm<T>(false, i1 - i0, d.D, J, T(1), S, J, th.vb, T(0), O + i0 * so, so,
                 causal_band(o, CausalBand::k_upto, row0, j0));
}

// Forward for every (b,h), in row blocks. Whole heads per thread when there are enough heads
// to share out: a head's K^T and V are then packed once for all its blocks, and a thread's
// heads are rows it wrote in the q, k, v projection (bench/train_step). Few heads (one long
// window): single row blocks, claimed one at a time, since a causal block's cost grows with
// its row.
template <class T>
void forward_heads(const AttentionTensors& t, const AttentionOptions& o) {
  const Dims d = dims_of(t);
  const int64_t heads = d.B * d.H, blocks = (d.Tq + kRowBlock - 1) / kRowBlock;
  if (heads >= 4 * omp_get_max_threads()) {
    parallel_items<ForwardThread<T>>(heads, true, [&](ForwardThread<T>& th, int64_t bh) {
      for (int64_t i0 = 0; i0 < d.Tq; i0 += kRowBlock) forward_block(t, o, d, th, bh, i0);
    });
  } else {
    parallel_items<ForwardThread<T>>(heads * blocks, false, [&](ForwardThread<T>& th, int64_t n) {
      forward_block(t, o, d, th, n / blocks, n % blocks * kRowBlock);
    });
  }
}

// ---- backward ----
//
// For every (b,h), with dO = dout[b,:,h,:] and only the row log-sum-exp saved (the
// recomputation of FlashAttention-2: T. Dao, arXiv:2307.08691, section 3.1.2):
//   P  = exp(lambda (scale Q K^T + bias) - lse)   rebuilt per row block (masked entries: 0)
//   dV = P^T dO                          (Tk,Tq)(Tq,D)
//   dP = dO V^T                          (Tq,D)(D,Tk)
//   dS_ij = lambda_i P_ij (dP_ij - sum_k dP_ik P_ik)   softmax backward, then the log scale
//   dQ = scale dS K,  dK = scale dS^T Q          S = scale Q K^T + bias
//   dbias[h, j - i + Tq - 1] += dS_ij            S_ij = ... + bias[h, j - i + Tq - 1]
// (the derivation: attention_reference.cpp). The mask is a constant added to S (-inf): masked
// entries have P = 0, hence dS = 0. The bias passes dS through unchanged; each table entry
// collects the dS of every (b, i, j) that read it (one diagonal j - i per entry). Row blocks
// of kRowBlock queries touch only the keys they can see, and add their share into dK and dV
// (beta = 1); within a block each product skips the tiles and terms the causal mask zeroes
// (CausalBand). One extra Q K^T product buys memory O(Tq) per head instead of O(Tq Tk) for a
// saved P (which would not speed up a step: it goes out of cache and back; bench/train_step).
// Tests: "gradcheck: ops: attention ..." (tests/nn/gradcheck_nn.cpp,
// test_attention_interventions.cpp), and the comparisons with attention_reference
// (tests/nn/test_attention.cpp, test_attention_interventions.cpp).

// P (R, J) of rows [i0, i0+R) against keys j0 .. j0+J-1, row stride J, rebuilt from the
// scores and the saved lse (kt: K^T from key j0).
template <class T>
void rebuild_probs(T* P, const T* Q, int64_t sq, const PackedOperand<T>& kt, const T* lse,
                   int64_t i0, int64_t R, int64_t j0, int64_t J, int64_t b, int64_t h,
                   const Dims& d, const AttentionOptions& o) {
  packed_gemm<T>(false, R, J, d.D, static_cast<T>(o.scale), Q + i0 * sq, sq, kt, T(0), P, J,
                 causal_band(o, CausalBand::cols, o.q_pos0 + i0, j0));
  for (int64_t r = 0; r < R; ++r) {
    T* p = P + r * J;
    const RowSpan span = row_span(d, o, i0 + r, j0);
    if (span.a >= span.e) {
      std::fill(p, p + J, T(0));
      continue;
    }
    bias_and_scale(p, span, b, i0 + r, j0, h, d, o);
    int64_t end;
    const int64_t begin = mask_row(p, span, J, &end);
    T l = lse[i0 + r];
#pragma omp simd
    for (int64_t j = begin; j < end; ++j) p[j] = exp_k(p[j] - l);
    std::fill(p + end, p + J, T(0));
  }
}

// dP (R, J) -> dS in place: dS_ij = lambda_i P_ij (dP_ij - sum_k dP_ik P_ik) (lambda_i: the
// row's log scale, a constant factor of its scores, so of their gradient); and, when dbias is
// given (this (b,h)'s row of the table's gradient), dbias[j - i + Tq - 1] += dS_ij; and, when
// dpair is given (this (b,h)'s (Tq, Tk) block of the per-pair bias's gradient), dpair[i, j] =
// dS_ij (one reader per entry: a copy, with 0 where masked). Masked
// entries have P = 0, so dS = 0 there: they are written as 0 without reading dP, which the
// product may have left unwritten (CausalBand::cols).
template <class T>
void softmax_backward_rows(T* dS, const T* P, int64_t i0, int64_t R, int64_t j0, int64_t J,
                           const Dims& d, const AttentionOptions& o, T* dbias, T* dpair) {
  for (int64_t r = 0; r < R; ++r) {
    T* row = dS + r * J;
    const T* p = P + r * J;
    const RowSpan span = row_span(d, o, i0 + r, j0);
    const int64_t a = span.a, e = std::max(span.a, span.e);
    T dot = 0;  // in T, one partial sum per lane, as z in scores_to_probs
#pragma omp simd reduction(+ : dot)
    for (int64_t j = a; j < e; ++j) dot += row[j] * p[j];
#pragma omp simd
    for (int64_t j = a; j < e; ++j) row[j] = p[j] * (row[j] - dot);
    const double lambda = log_scale(o, e - a);
    if (lambda != 1.0) {
      const T l = static_cast<T>(lambda);
#pragma omp simd
      for (int64_t j = a; j < e; ++j) row[j] *= l;
    }
    std::fill(row, row + a, T(0));
    std::fill(row + e, row + J, T(0));
    if (dbias) {
      T* db = dbias + (d.Tq - 1 - (i0 + r)) + j0;
      for (int64_t j = a; j < e; ++j) db[j] += row[j];
    }
    if (dpair) {
      T* dp = dpair + (i0 + r) * d.Tk;
      std::fill(dp, dp + d.Tk, T(0));
      std::copy(row + a, row + e, dp + j0 + a);
    }
  }
}

// One (b,h): dq rows, and dk, dv accumulated over the row blocks. dbias: this (b,h)'s (Tq+Tk-1)
// gradient row, or null.
template <class T>
void backward_head(const AttentionTensors& t, const T* dout, const AttentionGrads& g,
                   const AttentionOptions& o, const Dims& d, int64_t bh, T* Pb, T* dS, T* dbias,
                   T* dpair) {
  int64_t sq = t.q.strides()[1], sk = t.k.strides()[1], sv = t.v.strides()[1], so = d.H * d.D;
  // dq, dk, dv rows: strided when they are the three parts of one (B,T,3C) gradient
  int64_t sdq = g.dq.strides()[1], sdk = g.dk.strides()[1], sdv = g.dv.strides()[1];
  int64_t b = bh / d.H, h = bh % d.H;
  const T *Q = head_ptr<T>(t.q, b, h), *K = head_ptr<T>(t.k, b, h), *V = head_ptr<T>(t.v, b, h);
  const T* dO = dout + b * d.Tq * so + h * d.D;
  T* dq = head_ptr<T>(g.dq, b, h);
  T* dk = head_ptr<T>(g.dk, b, h);
  T* dv = head_ptr<T>(g.dv, b, h);
  // K^T (D,Tk) and V^T (D,Tk): packed once per head; K (Tk,D): read in place where it can be;
  // and per row block dO and Q (R,D), read in place where they can be
  PackedOperand<T> kt(0), vt(1), kb(2), dob(3), qb(4);
  if (o.window == 0)
    kt.set(K, sk, true, d.D, d.Tk), vt.set(V, sv, true, d.D, d.Tk), kb.set(K, sk, false, d.Tk, d.D);
  auto zero_keys = [&](int64_t j_from, int64_t j_to) {
    for (int64_t j = j_from; j < j_to; ++j)
      std::fill(dk + j * sdk, dk + j * sdk + d.D, T(0)),
          std::fill(dv + j * sdv, dv + j * sdv + d.D, T(0));
  };
  // dK and dV sum over the row blocks. The blocks run last to first: a block sees the keys
  // [j0, j1), and both ends only shrink on the way, so the first block writes its rows
  // (beta = 0), the others add to them, after zeroing the keys left of those written (only a
  // window has such keys). Keys no block sees get 0.
  int64_t w0 = 0, w1 = 0;  // keys [w0, w1) of dK and dV hold sums
  const int64_t last = (d.Tq - 1) / kRowBlock * kRowBlock;
  for (int64_t i0 = last; i0 >= 0; i0 -= kRowBlock) {
    int64_t R = std::min(d.Tq, i0 + kRowBlock) - i0;
    const KeySpan keys = block_keys(d, o, i0, i0 + R);
    const int64_t j0 = keys.lo, J = keys.hi - keys.lo;
    if (J <= 0) {
      for (int64_t i = i0; i < i0 + R; ++i) std::fill(dq + i * sdq, dq + i * sdq + d.D, T(0));
      if (dpair) std::fill(dpair + i0 * d.Tk, dpair + (i0 + R) * d.Tk, T(0));
      continue;
    }
    if (w1 > w0) zero_keys(j0, w0);
    const T beta = w1 > w0 ? T(1) : T(0);
    if (w1 <= w0) w1 = keys.hi;
    w0 = j0;
    const int64_t row0 = o.q_pos0 + i0;
    const int64_t next = std::max<int64_t>(0, i0 - kRowBlock);  // the next block's rows
    prefetch_rows(Q, sq, next, i0, d.D), prefetch_rows(dO, so, next, i0, d.D);
    if (o.window > 0) {  // this block's keys only
      const T *Kb = K + j0 * sk, *Vb = V + j0 * sv;
      kt.set(Kb, sk, true, d.D, J), vt.set(Vb, sv, true, d.D, J), kb.set(Kb, sk, false, J, d.D);
    }
    rebuild_probs<T>(Pb, Q, sq, kt, t.lse.data<T>() + bh * d.Tq, i0, R, j0, J, b, h, d, o);
    const T* dOb = dO + i0 * so;
    dob.set(dOb, so, false, R, d.D), qb.set(Q + i0 * sq, sq, false, R, d.D);
    T *dkb = dk + j0 * sdk, *dvb = dv + j0 * sdv;
    packed_gemm<T>(true, J, d.D, R, T(1), Pb, J, dob, beta, dvb, sdv,
                   causal_band(o, CausalBand::k_from, row0, j0));
    packed_gemm<T>(false, R, J, d.D, T(1), dOb, so, vt, T(0), dS, J,
                   causal_band(o, CausalBand::cols, row0, j0));
    softmax_backward_rows<T>(dS, Pb, i0, R, j0, J, d, o, dbias, dpair);
    packed_gemm<T>(false, R, d.D, J, static_cast<T>(o.scale), dS, J, kb, T(0), dq + i0 * sdq, sdq,
                   causal_band(o, CausalBand::k_upto, row0, j0));
    packed_gemm<T>(true, J, d.D, R, static_cast<T>(o.scale), dS, J, qb, beta, dkb, sdk,
                   causal_band(o, CausalBand::k_from, row0, j0));
  }
  zero_keys(0, w0), zero_keys(w1, d.Tk);
}

// dst[h, c] = sum over b of src[(b, h), c], c < n: the per-(b,h) gradient rows of a table the
// batch shares, added in one order (the same bits on every run).
template <class T>
void sum_over_batch(const T* src, const Dims& d, int64_t n, T* dst) {
  for (int64_t h = 0; h < d.H; ++h)
    for (int64_t c = 0; c < n; ++c) {
      T acc = 0;
      for (int64_t b = 0; b < d.B; ++b) acc += src[(b * d.H + h) * n + c];
      dst[h * n + c] = acc;
    }
}

template <class T>
void backward_heads(const AttentionTensors& t, const Tensor& dout, const AttentionOptions& o,
                    const AttentionGrads& g) {
  Dims d = dims_of(t);
  int64_t W = d.Tq + d.Tk - 1, TT = d.Tq * d.Tk;
  // dbias per (b,h) first, summed over b after: every thread writes its own rows, and the sum
  // runs in one order (the same bits on every run). The per-pair bias's gradient likewise when
  // the batch shares it (Bb = 1); with Bb = B each (b,h) writes its own block of dpair.
  std::vector<T> dbias_bh(g.dbias.defined() ? d.B * d.H * W : 0, T(0));
  const bool pair_shared = g.dpair.defined() && g.dpair.size(0) == 1 && d.B > 1;
  std::vector<T> dpair_bh(pair_shared ? d.B * d.H * TT : 0);
  T* dpair = pair_shared ? dpair_bh.data() : g.dpair.defined() ? g.dpair.data<T>() : nullptr;
  struct NoState {};
  // whole heads per thread, in contiguous ranges first, as in forward_heads
  parallel_items<NoState>(d.B * d.H, true, [&](NoState&, int64_t bh) {
    T *Pb = thread_scratch<T>(0, kRowBlock * d.Tk), *dS = thread_scratch<T>(1, kRowBlock * d.Tk);
    backward_head<T>(t, dout.data<T>(), g, o, d, bh, Pb, dS,
                     dbias_bh.empty() ? nullptr : dbias_bh.data() + bh * W,
                     dpair ? dpair + bh * TT : nullptr);
  });
  if (pair_shared) sum_over_batch(dpair_bh.data(), d, TT, g.dpair.data<T>());
  if (g.dbias.defined()) sum_over_batch(dbias_bh.data(), d, W, g.dbias.data<T>());
}

}  // namespace

void attention_forward(const AttentionTensors& t, const AttentionOptions& opt) {
  dispatch(t.q.dtype(), [&](auto zero) { forward_heads<decltype(zero)>(t, opt); });
}

void attention_backward(const AttentionTensors& t, const Tensor& dout, const AttentionOptions& opt,
                        const AttentionGrads& g) {
  dispatch(t.q.dtype(), [&](auto zero) { backward_heads<decltype(zero)>(t, dout, opt, g); });
}

}  // namespace poslab::kernel
