// gpt_reference.cpp — read this file first. The whole model of docs/model.md and its training,
// as plain loops in double: every layer's forward followed by its backward, the schemes' position
// terms, then AdamW, gradient clipping and the data. No tensors, threads or autograd, and only
// the standard library: with gpt_reference_main.cpp it compiles alone into a program that trains
// (`make reference-train PE=rope`). The framework computes the same (GPT::loss in nn/gpt.h, the
// engine's backward in autograd/engine.cpp, AdamW in train/optimizer.cpp, the loop in
// train/trainer.cpp), in f32, blocked and threaded; tests/nn/test_gpt_reference.cpp checks that
// the two agree (loss and every gradient, every scheme and option) and
// tests/train/test_reference_train.cpp that a run of this file is a run of `poslab train`.
//
// Shapes: B batch, T time, C width, H heads, D = C/H head dim, V vocabulary. Every array is
// row-major: x (B,T,C) holds x[b,t,c] at (b*T + t)*C + c, and N = B*T counts its rows.
// Backward rules, stated once:
//   - gradients are accumulated (+=) into arrays that start at zero: a value used twice (the
//     residual stream, wte in the embedding and the tied head, T5's and KERPLE's parameters in
//     every layer) gets the sum of its uses;
//   - each backward line names, after "<-", the forward line it inverts.
#include "gpt_reference.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace poslab::reference {
namespace {

void check(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("gpt_reference: " + message);
}

// ---- LayerNorm over the last dim: x, y (N,C); w, b (C); mean, rstd (N) ----
//   mean = (1/C) sum_c x_c;  var = (1/C) sum_c (x_c - mean)^2;  rstd = 1 / sqrt(var + 1e-5)
//   xhat_c = (x_c - mean) rstd;  y_c = xhat_c w_c + b_c
void layernorm_forward(double* y, double* mean, double* rstd, const double* x, const double* w,
                       const double* b, int64_t N, int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const double* xn = x + n * C;
    double m = 0, var = 0;
    for (int64_t c = 0; c < C; ++c) m += xn[c];
    m /= C;
    for (int64_t c = 0; c < C; ++c) var += (xn[c] - m) * (xn[c] - m);
    var /= C;
    const double s = 1 / std::sqrt(var + 1e-5);
    for (int64_t c = 0; c < C; ++c) y[n * C + c] = (xn[c] - m) * s * w[c] + b[c];
    mean[n] = m, rstd[n] = s;
  }
}

// The derivation (the framework's LayerNorm, autograd/nn_ops.cpp and tensor/layer_norm.cpp,
// computes the same formulas and points here). y_c reaches x only through xhat_c, but mean and
// rstd depend on every x_k of the row, so each xhat_c depends on every x_k:
//   dmean/dx_k = 1/C
//   dvar/dx_k  = (2/C) sum_c (x_c - mean)([c == k] - 1/C) = 2 (x_k - mean) / C
//                (the 1/C term vanishes: sum_c (x_c - mean) = 0)
//   drstd/dx_k = -1/2 (var + eps)^(-3/2) dvar/dx_k = -rstd^3 (x_k - mean) / C
//              = -rstd^2 xhat_k / C
//   dxhat_c/dx_k = rstd ([c == k] - dmean/dx_k) + (x_c - mean) drstd/dx_k
//                = rstd ([c == k] - 1/C - xhat_c xhat_k / C)
// With g_c = dy_c w_c, the gradient that reaches xhat_c, the chain rule sums over c:
//   dx_k = sum_c g_c dxhat_c/dx_k = rstd (g_k - mean_c g_c - xhat_k mean_c(g_c xhat_c))
// Line by line:
//   db_c += dy_c                                      <- y_c = ... + b_c
//   dw_c += dy_c xhat_c                               <- y_c = xhat_c w_c ...
//   dx_c += rstd (g_c - mean_k g_k - xhat_c mean_k(g_k xhat_k))   <- xhat_c = (x_c - mean) rstd
// Tests: this function against the framework (tests/nn/test_gpt_reference.cpp), whose op is
// checked against finite differences ("ops: layer_norm", tests/autograd/test_gradcheck.cpp).
void layernorm_backward(double* dx, double* dw, double* db, const double* dy, const double* x,
                        const double* w, const double* mean, const double* rstd, int64_t N,
                        int64_t C) {
  for (int64_t n = 0; n < N; ++n) {
    const double *xn = x + n * C, *dyn = dy + n * C;
    double g_mean = 0, gx_mean = 0;
    for (int64_t c = 0; c < C; ++c) {
      const double xhat = (xn[c] - mean[n]) * rstd[n], g = dyn[c] * w[c];
      g_mean += g / C, gx_mean += g * xhat / C;
    }
    for (int64_t c = 0; c < C; ++c) {
      const double xhat = (xn[c] - mean[n]) * rstd[n], g = dyn[c] * w[c];
      db[c] += dyn[c];
      dw[c] += dyn[c] * xhat;
      dx[n * C + c] += rstd[n] * (g - g_mean - xhat * gx_mean);
    }
  }
}

// ---- Linear, PyTorch layout: x (N,I), W (O,I), b (O) or null (the tied head), y (N,O) ----
//   y_no = b_o + sum_i x_ni W_oi
void linear_forward(double* y, const double* x, const double* W, const double* b, int64_t N,
                    int64_t I, int64_t O) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      double s = b ? b[o] : 0;
      for (int64_t i = 0; i < I; ++i) s += x[n * I + i] * W[o * I + i];
      y[n * O + o] = s;
    }
}

// All three from y_no = b_o + sum_i x_ni W_oi:
//   dx_ni += sum_o dy_no W_oi
//   dW_oi += sum_n dy_no x_ni
//   db_o  += sum_n dy_no
void linear_backward(double* dx, double* dW, double* db, const double* dy, const double* x,
                     const double* W, int64_t N, int64_t I, int64_t O) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      const double g = dy[n * O + o];
      for (int64_t i = 0; i < I; ++i) {
        dx[n * I + i] += g * W[o * I + i];
        dW[o * I + i] += g * x[n * I + i];
      }
      if (db) db[o] += g;
    }
}

// ---- GELU, tanh form, elementwise on n values ----
//   y = 0.5 x (1 + tanh u),  u = sqrt(2/pi) (x + 0.044715 x^3)
constexpr double kSqrt2OverPi = 0.7978845608028654;

void gelu_forward(double* y, const double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double u = kSqrt2OverPi * (x[i] + 0.044715 * x[i] * x[i] * x[i]);
    y[i] = 0.5 * x[i] * (1 + std::tanh(u));
  }
}

// The derivation (the framework's GELU, autograd/nn_ops.cpp and tensor/gelu.cpp, points here):
// the product rule on 0.5 x (1 + tanh u), and the chain rule through u, with
// d tanh(u)/du = 1 - tanh^2 u:
//   dx += dy [0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx]    <- y = 0.5 x (1 + tanh u)
//   du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2)                   <- u = sqrt(2/pi) (x + ...)
// Tests: as LayerNorm's ("ops: gelu", tests/autograd/test_gradcheck.cpp).
void gelu_backward(double* dx, const double* dy, const double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double u = kSqrt2OverPi * (x[i] + 0.044715 * x[i] * x[i] * x[i]);
    const double du = kSqrt2OverPi * (1 + 3 * 0.044715 * x[i] * x[i]), th = std::tanh(u);
    dx[i] += dy[i] * (0.5 * (1 + th) + 0.5 * x[i] * (1 - th * th) * du);
  }
}

// ---- Positions ----
// Token t of row b sits at position P = t, or at the batch's drawn position (random positions,
// Ruoss et al. 2023: sorted, distinct, from [0, Lmax)). Every scheme reads P, never t.
int64_t position(const Batch& batch, int64_t b, int64_t t) {
  return batch.pos.empty() ? t : batch.pos[b * batch.T + t];
}

// The distance n of key P_j from query P_i: causal max(P_i - P_j, 0) (the masked pairs j > i
// take 0: no log of a negative number), causal = false |P_i - P_j|.
double distance(const Config& c, int64_t Pi, int64_t Pj) {
  const int64_t n = Pi - Pj;
  return static_cast<double>(c.causal ? std::max<int64_t>(n, 0) : std::abs(n));
}

// Whether query i sees key j: the causal mask.
bool sees(const Config& c, int64_t i, int64_t j) {
  return !c.causal || j <= i;
}

// Whether layer l carries position (--nope-every k: not when (l + 1) mod k = 0).
bool positional_layer(const Config& c, int64_t l) {
  return c.nope_every <= 0 || (l + 1) % c.nope_every != 0;
}

int64_t wpe_rows(const Config& c) {  // learned: GPT's default, rows for every drawn position
  return c.max_len > 0 ? c.max_len : std::max(c.block_size, c.random_positions);
}

// ---- The input: token rows, scaled, plus the absolute position rows ----
// The sinusoidal table's entry (P, c), a constant (no gradient):
//   PE[P, 2i] = sin(P / 10000^(2i/C)),  PE[P, 2i+1] = cos(P / 10000^(2i/C))
double sinusoidal(int64_t P, int64_t c, int64_t C) {
  const double a = static_cast<double>(P) / std::pow(10000.0, static_cast<double>(c - c % 2) / C);
  return c % 2 == 0 ? std::sin(a) : std::cos(a);
}

// x (B,T,C), ids (B,T), wte (V,C), wpe (max_len,C):
//   x[b,t,:] = e wte[ids[b,t], :] + PE[P, :]       e = 1 (gpt2) or sqrt(C) (scaled);
//                                                  PE: learned's wpe, the sinusoidal table, or 0
void embedding_forward(double* x, const Config& c, const Params& p, const Batch& batch, double e) {
  const int64_t C = c.n_embd;
  for (int64_t b = 0; b < batch.B; ++b)
    for (int64_t t = 0; t < batch.T; ++t) {
      const int64_t n = b * batch.T + t, P = position(batch, b, t);
      for (int64_t k = 0; k < C; ++k) {
        double pe = 0;
        if (c.pe == Pe::learned) pe = p.wpe[P * C + k];
        if (c.pe == Pe::sinusoidal) pe = sinusoidal(P, k, C);
        x[n * C + k] = e * p.wte[batch.x[n] * C + k] + pe;
      }
    }
}

//   dwte[ids[b,t], :] += e dx[b,t,:]     <- x = e wte[ids] ...  (a repeated token sums its rows)
//   dwpe[P, :] += dx[b,t,:]              <- x = ... + wpe[P]    (learned only)
void embedding_backward(Params& g, const double* dx, const Config& c, const Batch& batch,
                        double e) {
  const int64_t C = c.n_embd;
  for (int64_t b = 0; b < batch.B; ++b)
    for (int64_t t = 0; t < batch.T; ++t) {
      const int64_t n = b * batch.T + t, P = position(batch, b, t);
      for (int64_t k = 0; k < C; ++k) {
        g.wte[batch.x[n] * C + k] += e * dx[n * C + k];
        if (c.pe == Pe::learned) g.wpe[P * C + k] += dx[n * C + k];
      }
    }
}

// ---- RoPE and xPos: q and k turned pair by pair by angles of their positions ----
// Of a head's D dims the first r are cut into r/2 pairs (lo, hi) = (2i, 2i+1) (interleaved) or
// (i, i + r/2) (half); r = 2 floor(f D / 2) (rope_fraction f), D for xpos; dims r..D-1 pass
// unchanged. At position P pair i turns by a = (P / s) w_i, s linear scaling's factor (1 unless
// fine-tuned under it), and
//   w_i = theta^(-2i/r)                    rope
//   w_i = 0 for i >= floor(p D / 2)        p-RoPE (rope_proportion p < 1): never turned
//   w_i = theta^(-2i/D)                    xpos, then pair i times A = zeta_i^(+P/B) for queries,
//                                          zeta_i^(-P/B) for keys, zeta_i = (2i/D + 0.4) / 1.4
//   x'_lo = A (x_lo cos a - x_hi sin a)
//   x'_hi = A (x_lo sin a + x_hi cos a)
// q'.k' then depends on P_q - P_k only (times xPos's decay zeta_i^((P_q - P_k)/B)).
struct Rotation {
  Vec cos, sin;  // (B, T, r/2): A cos a and A sin a of each token's pairs
  int64_t r = 0;
  bool half = false;
};

// amp_sign: +1 for the queries' table, -1 for the keys' (xPos's amplitude; 1 for rope).
Rotation rotation_tables(const Config& c, const Batch& batch, double amp_sign) {
  const int64_t D = c.n_embd / c.n_head;
  Rotation rot;
  rot.r = c.pe == Pe::xpos ? D : 2 * static_cast<int64_t>(std::floor(c.rope_fraction * D / 2));
  rot.half = c.rope_half;
  const int64_t pairs = rot.r / 2;
  const int64_t kept = c.pe == Pe::rope && c.rope_proportion < 1
                           ? static_cast<int64_t>(std::floor(c.rope_proportion * D / 2))
                           : pairs;
  const double s = c.pe == Pe::rope ? c.rope_linear_factor : 1;
  rot.cos.resize(batch.B * batch.T * pairs), rot.sin.resize(batch.B * batch.T * pairs);
  for (int64_t b = 0; b < batch.B; ++b)
    for (int64_t t = 0; t < batch.T; ++t)
      for (int64_t i = 0; i < pairs; ++i) {
        const double P = static_cast<double>(position(batch, b, t));
        const double w = i < kept ? std::pow(c.theta, -2.0 * i / rot.r) : 0;
        const double zeta = (2.0 * i / D + 0.4) / 1.4;
        const double A = c.pe == Pe::xpos ? std::pow(zeta, amp_sign * P / c.xpos_scale_base) : 1;
        rot.cos[(b * batch.T + t) * pairs + i] = A * std::cos(P / s * w);
        rot.sin[(b * batch.T + t) * pairs + i] = A * std::sin(P / s * w);
      }
  return rot;
}

// x (B,T,H,D) turned in place by the tables; sign = -1 turns by -a, which is the backward:
//   dx = A R(-a) dx'                          <- x' = A R(a) x     (R(a)^T = R(-a))
void rotate(double* x, const Rotation& rot, double sign, int64_t B, int64_t T, int64_t H,
            int64_t D) {
  const int64_t pairs = rot.r / 2;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h) {
        double* xh = x + ((b * T + t) * H + h) * D;
        for (int64_t i = 0; i < pairs; ++i) {
          const int64_t lo = rot.half ? i : 2 * i, hi = rot.half ? i + pairs : 2 * i + 1;
          const double co = rot.cos[(b * T + t) * pairs + i];
          const double si = sign * rot.sin[(b * T + t) * pairs + i];
          const double x0 = xh[lo], x1 = xh[hi];
          xh[lo] = x0 * co - x1 * si;
          xh[hi] = x0 * si + x1 * co;
        }
      }
}

// ---- The biases added to the scores: bias[b,h,i,j], (B,H,T,T), after the 1/sqrt(D) scaling ----
// With n = distance(P_i, P_j):
//   alibi   -m_h n                                      fixed slopes m_h
//   t5      rel_bias[bucket(P_i - P_j), h]              a learned table shared by every layer
//   kerple  -p_h ln(1 + a_h n)                          learned p, a >= 0.01, shared
//   fire    f(phi(n) / (phi(max(P_i, Lthr)) + 1e-6))_h  a small MLP of this layer
//
// ALiBi's slopes: for H a power of two m_h = 2^(-8(h+1)/H); otherwise those of the closest lower
// power of two n, then every other slope of 2n's, from its first (H = 6: 2^-2, 2^-4, 2^-6,
// 2^-8, 2^-1, 2^-3).
Vec alibi_slopes(int64_t H) {
  int64_t n = 1;
  while (n * 2 <= H) n *= 2;
  Vec m;
  for (int64_t h = 0; h < n; ++h) m.push_back(std::exp2(-8.0 * (h + 1) / n));
  for (int64_t h = 0; static_cast<int64_t>(m.size()) < H; h += 2)
    m.push_back(std::exp2(-8.0 * (h + 1) / (2 * n)));
  return m;
}

// T5's bucket of the offset d = P_i - P_j (mesh-tensorflow's _relative_position_bucket), nb
// buckets: causal n = max(d, 0); causal = false: nb / 2 buckets a side, the second half for
// j after i, n = |d|. Then the first max_exact = nb / 2 distances have a bucket each, and the
// rest share buckets on a log scale up to max_distance:
//   bucket = n                                                              n < max_exact
//          = min(nb - 1, max_exact + floor(ln(n / max_exact) / ln(max_distance / max_exact)
//                                          * (nb - max_exact)))            otherwise
// (The 1e-9 keeps ln's rounding from flooring a whole number to the one below.)
int64_t t5_bucket(int64_t d, const Config& c) {
  int64_t nb = c.t5_buckets, base = 0, n = d;
  if (c.causal) {
    n = std::max<int64_t>(n, 0);
  } else {
    nb /= 2;
    if (n < 0) base = nb;
    n = std::abs(n);
  }
  const int64_t max_exact = nb / 2;
  if (n < max_exact) return base + n;
  const double x = std::log(static_cast<double>(n) / max_exact) /
                   std::log(static_cast<double>(c.t5_max_distance) / max_exact) * (nb - max_exact);
  return base + std::min(nb - 1, max_exact + static_cast<int64_t>(std::floor(x + 1e-9)));
}

// FIRE's input u of one pair and its derivatives, with phi(x) = ln(|c| x + 1),
// Lthr = |m| T0, L = max(P_i, Lthr), Dn = phi(L) + 1e-6, A = phi(n):
//   u = A / Dn
//   du/d|c|  = (n / (|c| n + 1)) / Dn - A (L / (|c| L + 1)) / Dn^2     (d/dc ln(|c| x + 1))
//   du/dLthr = -A (|c| / (|c| Lthr + 1)) / Dn^2 where the max picks Lthr (Lthr > P_i), else 0
struct FireInput {
  double u, du_dc, du_dthr;
};
FireInput fire_input(const FireParams& f, double n, double Pi, int64_t T0) {
  const double c = std::abs(f.c[0]), thr = std::abs(f.m[0]) * static_cast<double>(T0);
  const bool at_thr = thr > Pi;
  const double L = at_thr ? thr : Pi, A = std::log1p(c * n), Dn = std::log1p(c * L) + 1e-6;
  return {A / Dn, n / (c * n + 1) / Dn - A * (L / (c * L + 1)) / (Dn * Dn),
          at_thr ? -A * (c / (c * thr + 1)) / (Dn * Dn) : 0.0};
}

// bias (B,H,T,T) of this layer's scheme; pairs the mask removes stay 0 (never read).
// FIRE's MLP: pre_w = w0_w u + b0_w,  r_w = max(pre_w, 0),  bias_h = b2_h + sum_w w2_hw r_w.
Vec bias_forward(const Config& c, const Params& p, const FireParams& fire, const Batch& batch) {
  const int64_t B = batch.B, T = batch.T, H = c.n_head, W = c.fire_width;
  const Vec slopes = alibi_slopes(H);
  Vec bias(B * H * T * T, 0.0), r(W);  // r: FIRE's hidden layer of one pair
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) {
        if (!sees(c, i, j)) continue;
        const int64_t Pi = position(batch, b, i), Pj = position(batch, b, j);
        const double n = distance(c, Pi, Pj);
        if (c.pe == Pe::fire) {
          const double u = fire_input(fire, n, static_cast<double>(Pi), c.block_size).u;
          for (int64_t w = 0; w < W; ++w) r[w] = std::max(fire.w0[w] * u + fire.b0[w], 0.0);
        }
        for (int64_t h = 0; h < H; ++h) {
          double& out = bias[((b * H + h) * T + i) * T + j];
          if (c.pe == Pe::alibi) out = -slopes[h] * n;
          if (c.pe == Pe::t5) out = p.rel_bias[t5_bucket(Pi - Pj, c) * H + h];
          if (c.pe == Pe::kerple) out = -p.kerple_p[h] * std::log1p(p.kerple_a[h] * n);
          if (c.pe == Pe::fire) {
            out = fire.b2[h];
            for (int64_t w = 0; w < W; ++w) out += fire.w2[h * W + w] * r[w];
          }
        }
      }
  return bias;
}

// From G = dbias (B,H,T,T) to the scheme's parameters (ALiBi has none):
//   t5:     drel_bias[bucket, h] += G                  <- bias = rel_bias[bucket(P_i - P_j), h]
//   kerple: dp_h -= G ln(1 + a_h n)                    <- bias = -p_h ln(1 + a_h n)
//           da_h -= G p_h n / (1 + a_h n)              (d/da ln(1 + a n) = n / (1 + a n))
//   fire, per pair, with G_h its H entries:
//           db2_h += G_h;  dw2_hw += G_h r_w           <- bias_h = b2_h + sum_w w2_hw r_w
//           g_w = [pre_w > 0] sum_h G_h w2_hw          <- r_w = max(pre_w, 0)
//           db0_w += g_w;  dw0_w += g_w u;  du = sum_w g_w w0_w   <- pre_w = w0_w u + b0_w
//           dc += du sign(c) du/d|c|;  dm += du sign(m) T0 du/dLthr   <- u (fire_input)
void bias_backward(Params& g, FireParams& gfire, const Vec& G, const Config& c, const Params& p,
                   const FireParams& fire, const Batch& batch) {
  const int64_t B = batch.B, T = batch.T, H = c.n_head, W = c.fire_width;
  auto sign = [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) {
        if (!sees(c, i, j)) continue;
        const int64_t Pi = position(batch, b, i), Pj = position(batch, b, j);
        const double n = distance(c, Pi, Pj);
        auto Gh = [&](int64_t h) { return G[((b * H + h) * T + i) * T + j]; };
        for (int64_t h = 0; h < H; ++h) {
          if (c.pe == Pe::t5) g.rel_bias[t5_bucket(Pi - Pj, c) * H + h] += Gh(h);
          if (c.pe == Pe::kerple) {
            g.kerple_p[h] -= Gh(h) * std::log1p(p.kerple_a[h] * n);
            g.kerple_a[h] -= Gh(h) * p.kerple_p[h] * n / (1 + p.kerple_a[h] * n);
          }
        }
        if (c.pe != Pe::fire) continue;
        const FireInput in = fire_input(fire, n, static_cast<double>(Pi), c.block_size);
        double du = 0;
        for (int64_t w = 0; w < W; ++w) {
          const double pre = fire.w0[w] * in.u + fire.b0[w];
          double gw = 0;
          for (int64_t h = 0; h < H; ++h) {
            gfire.w2[h * W + w] += Gh(h) * std::max(pre, 0.0);
            gw += pre > 0 ? Gh(h) * fire.w2[h * W + w] : 0;
          }
          gfire.b0[w] += gw, gfire.w0[w] += gw * in.u, du += gw * fire.w0[w];
        }
        for (int64_t h = 0; h < H; ++h) gfire.b2[h] += Gh(h);
        gfire.c[0] += du * sign(fire.c[0]) * in.du_dc;
        gfire.m[0] += du * sign(fire.m[0]) * static_cast<double>(c.block_size) * in.du_dthr;
      }
}

// ---- Self-attention of one layer on qkv (B,T,3C), the output of c_attn ----
//   q, k, v = columns [0,C), [C,2C), [2C,3C) of qkv, each viewed as (B,T,H,D)
//   q, k = rotated(q), rotated(k)                          rope, xpos
//   s_ij = q_i . k_j / sqrt(D) + bias[b,h,i,j]              alibi, t5, kerple, fire
//   p_ij = exp(s_ij) / sum_k exp(s_ik) over the keys row i sees (causal: k <= i); 0 for others
//   y_i  = sum_j p_ij v_j                                   (B,T,H,D) = (B,T,C), heads in order
struct AttentionActs {
  Vec q, k, v;  // (B,T,H,D): q and k as the scores saw them (rotated)
  Vec bias;     // (B,H,T,T), or empty
  Vec probs;    // (B,H,T,T): p_ij
};

// What one forward shares between its layers: the sizes and the rotation tables.
struct Forward {
  int64_t B, T, C, H, D, V;
  double e;               // the input scale: 1, or sqrt(C) (scaled embedding)
  bool rotates;           // rope, xpos
  Rotation rot_q, rot_k;  // the queries' and the keys' tables (they differ for xpos)
};

void attention_forward(double* y, AttentionActs& a, const double* qkv, const Forward& f,
                       const Config& c, const Params& p, const FireParams& fire, const Batch& batch,
                       bool positional) {
  const int64_t B = f.B, T = f.T, C = f.C, H = f.H, D = f.D;
  a.q.resize(B * T * C), a.k.resize(B * T * C), a.v.resize(B * T * C);
  for (int64_t n = 0; n < B * T; ++n)
    for (int64_t k = 0; k < C; ++k) {
      a.q[n * C + k] = qkv[n * 3 * C + k];
      a.k[n * C + k] = qkv[n * 3 * C + C + k];
      a.v[n * C + k] = qkv[n * 3 * C + 2 * C + k];
    }
  if (positional && f.rotates) rotate(a.q.data(), f.rot_q, +1, B, T, H, D);
  if (positional && f.rotates) rotate(a.k.data(), f.rot_k, +1, B, T, H, D);
  const bool biased = c.pe == Pe::alibi || c.pe == Pe::t5 || c.pe == Pe::kerple || c.pe == Pe::fire;
  a.bias = positional && biased ? bias_forward(c, p, fire, batch) : Vec();
  a.probs.assign(B * H * T * T, 0.0);
  const double scale = 1 / std::sqrt(static_cast<double>(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        double* prob = &a.probs[((b * H + h) * T + i) * T];
        const double* qi = &a.q[((b * T + i) * H + h) * D];
        double m = -INFINITY, z = 0;  // the row's largest score, for exp without overflow
        for (int64_t j = 0; j < T; ++j) {
          if (!sees(c, i, j)) continue;
          const double* kj = &a.k[((b * T + j) * H + h) * D];
          double s = 0;
          for (int64_t d = 0; d < D; ++d) s += qi[d] * kj[d];
          s = s * scale + (a.bias.empty() ? 0 : a.bias[((b * H + h) * T + i) * T + j]);
          prob[j] = s, m = std::max(m, s);
        }
        for (int64_t j = 0; j < T; ++j) z += prob[j] = sees(c, i, j) ? std::exp(prob[j] - m) : 0;
        for (int64_t j = 0; j < T; ++j) prob[j] /= z;
        double* yi = y + ((b * T + i) * H + h) * D;
        for (int64_t j = 0; j < T; ++j)
          for (int64_t d = 0; d < D; ++d) yi[d] += prob[j] * a.v[((b * T + j) * H + h) * D + d];
      }
}

//   dv_j  += p_ij dy_i;  dp_ij = dy_i . v_j                <- y_i = sum_j p_ij v_j
//   ds_ij  = p_ij (dp_ij - sum_k p_ik dp_ik)                <- p_i = softmax(s_i): dp/ds =
//                                                              p_ij ([j == k] - p_ik)
//   dq_i  += ds_ij k_j / sqrt(D);  dk_j += ds_ij q_i / sqrt(D);  dbias_ij = ds_ij   <- s_ij
//   dq, dk = rotated back (rotate, sign -1)                 <- q, k = rotated(q), rotated(k)
//   the scheme's parameters from dbias (bias_backward)      <- bias
//   dqkv[:, 0:C) += dq, [C,2C) += dk, [2C,3C) += dv         <- q, k, v = columns of qkv
// Masked keys have p = 0, hence no gradient.
void attention_backward(double* dqkv, Params& g, FireParams& gfire, const double* dy,
                        const AttentionActs& a, const Forward& f, const Config& c, const Params& p,
                        const FireParams& fire, const Batch& batch, bool positional) {
  const int64_t B = f.B, T = f.T, C = f.C, H = f.H, D = f.D;
  Vec dq(B * T * C), dk(B * T * C), dv(B * T * C), dbias(a.bias.size()), dp(T);
  const double scale = 1 / std::sqrt(static_cast<double>(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i) {
        const double* prob = &a.probs[((b * H + h) * T + i) * T];
        const int64_t qi = ((b * T + i) * H + h) * D;
        double dot = 0;  // sum_k p_ik dp_ik
        for (int64_t j = 0; j < T; ++j) {
          const int64_t kj = ((b * T + j) * H + h) * D;
          dp[j] = 0;
          for (int64_t d = 0; d < D; ++d) {
            dp[j] += dy[qi + d] * a.v[kj + d];
            dv[kj + d] += prob[j] * dy[qi + d];
          }
          dot += prob[j] * dp[j];
        }
        for (int64_t j = 0; j < T; ++j) {
          const int64_t kj = ((b * T + j) * H + h) * D;
          const double ds = prob[j] * (dp[j] - dot);
          for (int64_t d = 0; d < D; ++d) {
            dq[qi + d] += ds * a.k[kj + d] * scale;
            dk[kj + d] += ds * a.q[qi + d] * scale;
          }
          if (!dbias.empty()) dbias[((b * H + h) * T + i) * T + j] = ds;
        }
      }
  if (positional && f.rotates) rotate(dq.data(), f.rot_q, -1, B, T, H, D);
  if (positional && f.rotates) rotate(dk.data(), f.rot_k, -1, B, T, H, D);
  if (!dbias.empty()) bias_backward(g, gfire, dbias, c, p, fire, batch);
  for (int64_t n = 0; n < B * T; ++n)
    for (int64_t k = 0; k < C; ++k) {
      dqkv[n * 3 * C + k] += dq[n * C + k];
      dqkv[n * 3 * C + C + k] += dk[n * C + k];
      dqkv[n * 3 * C + 2 * C + k] += dv[n * C + k];
    }
}

// ---- Cross-entropy of logits z (N,V) against targets t (N); t_n = -1 ignores row n ----
//   loss = (1/N') sum over the N' rows with t_n >= 0 of (log sum_v exp z_nv) - z_n,t_n
// probs (N,V) = softmax of each row, kept for the backward.
double crossentropy_forward(double* probs, const double* z, const int32_t* t, int64_t N,
                            int64_t V) {
  double loss = 0;
  int64_t counted = 0;
  for (int64_t n = 0; n < N; ++n) {
    const double* zn = z + n * V;
    double m = zn[0], sum = 0;  // the row's maximum, for exp without overflow
    for (int64_t v = 1; v < V; ++v) m = std::max(m, zn[v]);
    for (int64_t v = 0; v < V; ++v) sum += std::exp(zn[v] - m);
    for (int64_t v = 0; v < V; ++v) probs[n * V + v] = std::exp(zn[v] - m) / sum;
    if (t[n] < 0) continue;
    loss += m + std::log(sum) - zn[t[n]];
    ++counted;
  }
  return loss / counted;
}

//   dz_nv += (p_nv - [v == t_n]) / N'      <- loss = (1/N') sum_n log sum_v exp z_nv - z_n,t_n
// (d/dz_nv of log sum exp is softmax's p_nv; the ignored rows get nothing.)
void crossentropy_backward(double* dz, const double* probs, const int32_t* t, int64_t N,
                           int64_t V) {
  int64_t counted = 0;
  for (int64_t n = 0; n < N; ++n) counted += t[n] >= 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t v = 0; v < V && t[n] >= 0; ++v)
      dz[n * V + v] += (probs[n * V + v] - (v == t[n] ? 1 : 0)) / counted;
}

// ---- The model ----

// What a block's forward keeps for its backward. (B,T,C) unless said otherwise.
struct BlockActs {
  Vec x;                           // the block's input, the residual stream
  Vec ln_1, ln_1_mean, ln_1_rstd;  // mean, rstd (B,T)
  Vec qkv;                         // (B,T,3C)
  AttentionActs att;               // q, k (rotated), v, bias, p as attention saw them
  Vec att_y;                       // attention's output, heads side by side
  Vec h;                           // x + attn.c_proj(att_y)
  Vec ln_2, ln_2_mean, ln_2_rstd;
  Vec fc, fc_gelu;  // (B,T,4C)
};

// x_out = h + mlp(ln_2(h)),  h = x + attn(ln_1(x))       (pre-LN, docs/model.md)
// `positional`: whether this layer carries position (nope_every).
Vec block_forward(BlockActs& a, const BlockParams& w, const Vec& x, const Forward& f,
                  const Config& c, const Params& p, const Batch& batch, bool positional) {
  const int64_t N = f.B * f.T, C = f.C;
  a.x = x;
  a.ln_1.resize(N * C), a.ln_1_mean.resize(N), a.ln_1_rstd.resize(N), a.qkv.resize(N * 3 * C);
  a.att_y.assign(N * C, 0.0), a.h.resize(N * C), a.ln_2.resize(N * C), a.ln_2_mean.resize(N);
  a.ln_2_rstd.resize(N), a.fc.resize(N * 4 * C), a.fc_gelu.resize(N * 4 * C);
  Vec proj(N * C);
  // ln_1 = LN(x)
  layernorm_forward(a.ln_1.data(), a.ln_1_mean.data(), a.ln_1_rstd.data(), x.data(),
                    w.ln_1_w.data(), w.ln_1_b.data(), N, C);
  // qkv = c_attn(ln_1)
  linear_forward(a.qkv.data(), a.ln_1.data(), w.attn_w.data(), w.attn_b.data(), N, C, 3 * C);
  // att_y = attention(q, k, v) of qkv's columns
  attention_forward(a.att_y.data(), a.att, a.qkv.data(), f, c, p, w.fire, batch, positional);
  // h = x + attn.c_proj(att_y)
  linear_forward(proj.data(), a.att_y.data(), w.attn_proj_w.data(), w.attn_proj_b.data(), N, C, C);
  for (int64_t i = 0; i < N * C; ++i) a.h[i] = x[i] + proj[i];
  // ln_2 = LN(h)
  layernorm_forward(a.ln_2.data(), a.ln_2_mean.data(), a.ln_2_rstd.data(), a.h.data(),
                    w.ln_2_w.data(), w.ln_2_b.data(), N, C);
  // fc = c_fc(ln_2);  fc_gelu = gelu(fc)
  linear_forward(a.fc.data(), a.ln_2.data(), w.fc_w.data(), w.fc_b.data(), N, C, 4 * C);
  gelu_forward(a.fc_gelu.data(), a.fc.data(), N * 4 * C);
  // x_out = h + mlp.c_proj(fc_gelu)
  linear_forward(proj.data(), a.fc_gelu.data(), w.mlp_proj_w.data(), w.mlp_proj_b.data(), N, 4 * C,
                 C);
  Vec x_out(N * C);
  for (int64_t i = 0; i < N * C; ++i) x_out[i] = a.h[i] + proj[i];
  return x_out;
}

// From dx_out (B,T,C) to the gradient of the block's input, returned, and of the weights (+= in
// g: the block's own in gb, the shared ones of T5 and KERPLE in g). The forward's lines in
// reverse.
Vec block_backward(const Vec& dx_out, const BlockActs& a, const BlockParams& w, BlockParams& gb,
                   Params& g, const Forward& f, const Config& c, const Params& p,
                   const Batch& batch, bool positional) {
  const int64_t N = f.B * f.T, C = f.C;
  Vec dh = dx_out;  // <- x_out = h + ...
  Vec dfc_gelu(N * 4 * C), dfc(N * 4 * C), dln_2(N * C);
  // <- x_out = h + mlp.c_proj(fc_gelu)
  linear_backward(dfc_gelu.data(), gb.mlp_proj_w.data(), gb.mlp_proj_b.data(), dx_out.data(),
                  a.fc_gelu.data(), w.mlp_proj_w.data(), N, 4 * C, C);
  gelu_backward(dfc.data(), dfc_gelu.data(), a.fc.data(), N * 4 * C);  // <- fc_gelu = gelu(fc)
  linear_backward(dln_2.data(), gb.fc_w.data(), gb.fc_b.data(), dfc.data(), a.ln_2.data(),
                  w.fc_w.data(), N, C, 4 * C);  // <- fc = c_fc(ln_2)
  layernorm_backward(dh.data(), gb.ln_2_w.data(), gb.ln_2_b.data(), dln_2.data(), a.h.data(),
                     w.ln_2_w.data(), a.ln_2_mean.data(), a.ln_2_rstd.data(), N, C);  // <- LN(h)
  Vec dx = dh;  // <- h = x + ...
  Vec datt_y(N * C), dqkv(N * 3 * C), dln_1(N * C);
  linear_backward(datt_y.data(), gb.attn_proj_w.data(), gb.attn_proj_b.data(), dh.data(),
                  a.att_y.data(), w.attn_proj_w.data(), N, C, C);  // <- ... attn.c_proj(att_y)
  attention_backward(dqkv.data(), g, gb.fire, datt_y.data(), a.att, f, c, p, w.fire, batch,
                     positional);  // <- att_y = attention(q, k, v)
  linear_backward(dln_1.data(), gb.attn_w.data(), gb.attn_b.data(), dqkv.data(), a.ln_1.data(),
                  w.attn_w.data(), N, C, 3 * C);  // <- qkv = c_attn(ln_1)
  layernorm_backward(dx.data(), gb.ln_1_w.data(), gb.ln_1_b.data(), dln_1.data(), a.x.data(),
                     w.ln_1_w.data(), a.ln_1_mean.data(), a.ln_1_rstd.data(), N, C);  // <- LN(x)
  return dx;
}

// What the model's forward keeps for its backward.
struct Acts {
  std::vector<BlockActs> blocks;
  Vec x;                           // (B,T,C) the last block's output
  Vec ln_f, ln_f_mean, ln_f_rstd;  // (B,T,C), (B,T), (B,T)
  Vec logits, probs;               // (B,T,V)
};

void check_batch(const Config& c, const Params& p, const Batch& batch) {
  const int64_t N = batch.B * batch.T;
  check(batch.B > 0 && batch.T > 0 && static_cast<int64_t>(batch.x.size()) == N &&
            static_cast<int64_t>(batch.y.size()) == N,
        "expected x and y of B*T tokens");
  check(batch.pos.empty() || static_cast<int64_t>(batch.pos.size()) == N,
        "expected one position per token, or none");
  for (int64_t n = 0; n < N; ++n) {
    check(batch.x[n] >= 0 && batch.x[n] < c.vocab_size, "a token id past the vocabulary");
    check(batch.y[n] >= -1 && batch.y[n] < c.vocab_size, "a target past the vocabulary");
  }
  if (c.pe == Pe::learned)
    for (int64_t b = 0; b < batch.B; ++b)
      check(position(batch, b, batch.T - 1) * c.n_embd < static_cast<int64_t>(p.wpe.size()),
            "a window of " + std::to_string(batch.T) + " positions, but wpe holds " +
                std::to_string(p.wpe.size() / c.n_embd));
}

Forward forward_of(const Config& c, const Batch& batch) {
  Forward f{batch.B,
            batch.T,
            c.n_embd,
            c.n_head,
            c.n_embd / c.n_head,
            c.vocab_size,
            c.scaled_embedding ? std::sqrt(static_cast<double>(c.n_embd)) : 1.0,
            c.pe == Pe::rope || c.pe == Pe::xpos,
            {},
            {}};
  if (f.rotates) f.rot_q = rotation_tables(c, batch, +1), f.rot_k = rotation_tables(c, batch, -1);
  return f;
}

//   x      = e wte[ids] + PE[P]                the input (PE: learned, sinusoidal)
//   x      = block_l(x), l = 0 .. n_layer-1
//   logits = ln_f(x) wte^T                     the tied head: a linear with W = wte, no bias
//   loss   = crossentropy(logits, targets)
double model_forward(Acts& a, const Forward& f, const Config& c, const Params& p,
                     const Batch& batch) {
  const int64_t N = f.B * f.T, C = f.C, V = f.V;
  Vec x(N * C);
  embedding_forward(x.data(), c, p, batch, f.e);
  a.blocks.resize(p.h.size());
  for (size_t l = 0; l < p.h.size(); ++l)
    x = block_forward(a.blocks[l], p.h[l], x, f, c, p, batch, positional_layer(c, l));
  a.x = x;
  a.ln_f.resize(N * C), a.ln_f_mean.resize(N), a.ln_f_rstd.resize(N);
  a.logits.resize(N * V), a.probs.resize(N * V);
  layernorm_forward(a.ln_f.data(), a.ln_f_mean.data(), a.ln_f_rstd.data(), x.data(),
                    p.ln_f_w.data(), p.ln_f_b.data(), N, C);
  linear_forward(a.logits.data(), a.ln_f.data(), p.wte.data(), nullptr, N, C, V);
  return crossentropy_forward(a.probs.data(), a.logits.data(), batch.y.data(), N, V);
}

// The forward's lines in reverse, into g (zeros on entry).
void model_backward(Params& g, const Acts& a, const Forward& f, const Config& c, const Params& p,
                    const Batch& batch) {
  const int64_t N = f.B * f.T, C = f.C, V = f.V;
  Vec dlogits(N * V), dln_f(N * C), dx(N * C);
  crossentropy_backward(dlogits.data(), a.probs.data(), batch.y.data(), N, V);  // <- loss
  linear_backward(dln_f.data(), g.wte.data(), nullptr, dlogits.data(), a.ln_f.data(), p.wte.data(),
                  N, C, V);  // <- logits = ln_f wte^T: wte's first use
  layernorm_backward(dx.data(), g.ln_f_w.data(), g.ln_f_b.data(), dln_f.data(), a.x.data(),
                     p.ln_f_w.data(), a.ln_f_mean.data(), a.ln_f_rstd.data(), N, C);  // <- ln_f(x)
  for (size_t l = p.h.size(); l-- > 0;)  // <- x = block_l(x)
    dx = block_backward(dx, a.blocks[l], p.h[l], g.h[l], g, f, c, p, batch, positional_layer(c, l));
  embedding_backward(g, dx.data(), c, batch, f.e);  // <- x = e wte[ids] + PE[P]
}

}  // namespace

StepResult forward_backward(const Config& c, const Params& p, const Batch& batch) {
  check_batch(c, p, batch);
  const Forward f = forward_of(c, batch);
  Acts a;
  StepResult out;
  out.loss = model_forward(a, f, c, p, batch);
  out.grad = zeros_like(c, p);
  model_backward(out.grad, a, f, c, p, batch);
  for (const BlockActs& b : a.blocks) out.attention.push_back(b.att.probs);
  return out;
}

double model_loss(const Config& c, const Params& p, const Batch& batch) {
  check_batch(c, p, batch);
  Acts a;
  return model_forward(a, forward_of(c, batch), c, p, batch);
}

// ---- Names ----

const std::vector<std::string>& pe_names() {
  static const std::vector<std::string> names{"none", "learned", "sinusoidal", "rope", "alibi",
                                              "t5",   "kerple",  "fire",       "xpos"};
  return names;
}

Pe parse_pe(const std::string& name) {
  const std::vector<std::string>& n = pe_names();
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i] == name) return static_cast<Pe>(i);
  std::string all;
  for (const std::string& s : n) all += (all.empty() ? "" : "|") + s;
  throw std::invalid_argument("--pe: expected " + all + ", but got '" + name + "'");
}

const char* pe_name(Pe pe) {
  return pe_names()[static_cast<size_t>(pe)].c_str();
}

std::vector<NamedArray> named_arrays(const Config& c, Params& p) {
  std::vector<NamedArray> out{{"transformer.wte.weight", &p.wte, false}};
  if (c.pe == Pe::learned) out.push_back({"transformer.wpe.weight", &p.wpe, false});
  if (c.pe == Pe::t5) out.push_back({"transformer.rel_bias.weight", &p.rel_bias, false});
  if (c.pe == Pe::kerple) {
    out.push_back({"transformer.kerple.bias_p", &p.kerple_p, false});
    out.push_back({"transformer.kerple.bias_a", &p.kerple_a, false});
  }
  for (size_t l = 0; c.pe == Pe::fire && l < p.h.size(); ++l) {
    if (!positional_layer(c, l)) continue;
    const std::string f = "transformer.h." + std::to_string(l) + ".attn.fire.";
    FireParams& w = p.h[l].fire;
    for (auto [name, v] : {std::pair{"mlp.0.weight", &w.w0},
                           {"mlp.0.bias", &w.b0},
                           {"mlp.2.weight", &w.w2},
                           {"mlp.2.bias", &w.b2},
                           {"c", &w.c},
                           {"L_multiplier", &w.m}})
      out.push_back({f + name, v, false});  // no positional parameter decays
  }
  for (size_t l = 0; l < p.h.size(); ++l) {
    const std::string b = "transformer.h." + std::to_string(l);
    BlockParams& w = p.h[l];
    auto linear = [&](const std::string& name, Vec* weight, Vec* bias) {
      out.push_back({b + name + ".weight", weight, true});  // decays
      out.push_back({b + name + ".bias", bias, false});
    };
    out.push_back({b + ".ln_1.weight", &w.ln_1_w, false});
    out.push_back({b + ".ln_1.bias", &w.ln_1_b, false});
    linear(".attn.c_attn", &w.attn_w, &w.attn_b);
    linear(".attn.c_proj", &w.attn_proj_w, &w.attn_proj_b);
    out.push_back({b + ".ln_2.weight", &w.ln_2_w, false});
    out.push_back({b + ".ln_2.bias", &w.ln_2_b, false});
    linear(".mlp.c_fc", &w.fc_w, &w.fc_b);
    linear(".mlp.c_proj", &w.mlp_proj_w, &w.mlp_proj_b);
  }
  out.push_back({"transformer.ln_f.weight", &p.ln_f_w, false});
  out.push_back({"transformer.ln_f.bias", &p.ln_f_b, false});
  return out;
}

Params zeros_like(const Config& c, const Params& p) {
  Params z = p;
  for (NamedArray& a : named_arrays(c, z)) std::fill(a.value->begin(), a.value->end(), 0.0);
  return z;
}

// ---- Training ----

static uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Generator::Generator(uint64_t seed) {
  for (uint64_t& s : s_) s = splitmix64(seed);
}

uint64_t Generator::next_u64() {  // xoshiro256** (Blackman & Vigna, 2018)
  auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  const uint64_t result = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
  s_[2] ^= s_[0], s_[3] ^= s_[1], s_[1] ^= s_[2], s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Generator::uniform() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double Generator::normal() {  // Marsaglia's polar method: two normals per accepted (u, v)
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u, v, s;
  do {
    u = 2 * uniform() - 1, v = 2 * uniform() - 1, s = u * u + v * v;
  } while (s >= 1 || s == 0);
  const double f = std::sqrt(-2 * std::log(s) / s);
  spare_ = v * f, has_spare_ = true;
  return u * f;
}

// After every optimizer step (and after initialisation): KERPLE's p, a >= 0.01, the projection
// of the authors' code (no gradient flows through it).
static void kerple_clamp(Params& p) {
  for (Vec* v : {&p.kerple_p, &p.kerple_a})
    for (double& x : *v) x = std::max(x, 0.01);
}

// GPT(c, seed)'s draws in its order (nn/gpt.h): wte, the scheme's tables, then per block
// c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj weights. Linear weights N(0, 0.02^2), the two
// c_proj N(0, (0.02/sqrt(2L))^2), biases 0, LayerNorm 1 and 0; wte and wpe N(0, 0.02^2), or
// N(0, 1/C) with the scaled embedding; T5's table N(0, 0.02^2); KERPLE p ~ U(0,2), a ~ U(0,1);
// FIRE per layer mlp.0 ~ U(-1,1), mlp.2 ~ U(-1/sqrt(W), 1/sqrt(W)), c = 0.1, m = 1.
Params init_params(const Config& c, uint64_t seed) {
  check(c.vocab_size > 0 && c.n_layer > 0 && c.n_head > 0 && c.n_embd % c.n_head == 0,
        "expected V, L, H > 0 and H dividing C");
  check((c.pe != Pe::rope && c.pe != Pe::xpos) || (c.n_embd / c.n_head) % 2 == 0,
        "rope and xpos need an even head dim D");
  Generator gen(seed);
  auto normal = [&](int64_t n, double std) {
    Vec v(n);
    for (double& x : v) x = gen.normal() * std;
    return v;
  };
  auto uniform = [&](int64_t n, double lo, double hi) {
    Vec v(n);
    for (double& x : v) x = lo + (hi - lo) * gen.uniform();
    return v;
  };
  const int64_t V = c.vocab_size, C = c.n_embd, H = c.n_head, W = c.fire_width;
  const double emb_std = c.scaled_embedding ? 1 / std::sqrt(static_cast<double>(C)) : 0.02;
  const double proj_std = 0.02 / std::sqrt(2.0 * c.n_layer);
  Params p;
  p.wte = normal(V * C, emb_std);
  if (c.pe == Pe::learned) p.wpe = normal(wpe_rows(c) * C, emb_std);
  if (c.pe == Pe::t5) p.rel_bias = normal(c.t5_buckets * H, 0.02);
  if (c.pe == Pe::kerple) p.kerple_p = uniform(H, 0, 2), p.kerple_a = uniform(H, 0, 1);
  kerple_clamp(p);
  p.h.resize(c.n_layer);
  for (int64_t l = 0; c.pe == Pe::fire && l < c.n_layer; ++l) {
    if (!positional_layer(c, l)) continue;
    const double k2 = 1 / std::sqrt(static_cast<double>(W));
    FireParams& f = p.h[l].fire;
    f.w0 = uniform(W, -1, 1), f.b0 = uniform(W, -1, 1);
    f.w2 = uniform(H * W, -k2, k2), f.b2 = uniform(H, -k2, k2);
    f.c = {0.1}, f.m = {1.0};
  }
  for (BlockParams& b : p.h) {
    b.ln_1_w.assign(C, 1.0), b.ln_1_b.assign(C, 0.0), b.ln_2_w.assign(C, 1.0);
    b.ln_2_b.assign(C, 0.0);
    b.attn_w = normal(3 * C * C, 0.02), b.attn_b.assign(3 * C, 0.0);
    b.attn_proj_w = normal(C * C, proj_std), b.attn_proj_b.assign(C, 0.0);
    b.fc_w = normal(4 * C * C, 0.02), b.fc_b.assign(4 * C, 0.0);
    b.mlp_proj_w = normal(C * 4 * C, proj_std), b.mlp_proj_b.assign(C, 0.0);
  }
  p.ln_f_w.assign(C, 1.0), p.ln_f_b.assign(C, 0.0);
  return p;
}

// Row b: tokens [o, o + T) and their next tokens, o = next_u64 mod (n - T).
Batch sample_batch(const std::vector<uint16_t>& tokens, int64_t B, int64_t T, Generator& gen) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  check(n >= T + 1, "the split holds " + std::to_string(n) + " tokens, fewer than T + 1");
  Batch batch{B, T, std::vector<int32_t>(B * T), std::vector<int32_t>(B * T), {}};
  for (int64_t b = 0; b < B; ++b) {
    const int64_t o = static_cast<int64_t>(gen.next_u64() % static_cast<uint64_t>(n - T));
    for (int64_t t = 0; t < T; ++t)
      batch.x[b * T + t] = tokens[o + t], batch.y[b * T + t] = tokens[o + t + 1];
  }
  return batch;
}

static uint64_t mix(uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Row b draws from its own generator, seeded by the step's seed and b: T distinct values of
// [0, Lmax) by a partial Fisher-Yates shuffle, then sorted.
std::vector<int32_t> draw_positions(int64_t B, int64_t T, int64_t Lmax, uint64_t run_seed,
                                    int64_t step) {
  check(T >= 1 && T <= Lmax, "random positions need 1 <= T <= Lmax");
  const uint64_t seed = mix(mix(run_seed ^ 0x52414e44504f53ULL) + static_cast<uint64_t>(step));
  std::vector<int32_t> pos;
  for (int64_t b = 0; b < B; ++b) {
    Generator gen(mix(seed + static_cast<uint64_t>(b)));
    std::vector<int32_t> all(Lmax);
    std::iota(all.begin(), all.end(), 0);
    for (int64_t t = 0; t < T; ++t) {  // all[t] <- a uniform pick among all[t..Lmax)
      const int64_t j = t + static_cast<int64_t>(gen.uniform() * static_cast<double>(Lmax - t));
      std::swap(all[t], all[std::min(j, Lmax - 1)]);
    }
    std::sort(all.begin(), all.begin() + T);
    pos.insert(pos.end(), all.begin(), all.begin() + T);
  }
  return pos;
}

// If the global norm of every gradient is above max_norm, scale them all by max_norm / norm.
// Returns the norm before clipping.
static double clip_grad_norm(const Config& c, Params& g, double max_norm) {
  double sq = 0;
  for (const NamedArray& a : named_arrays(c, g))
    for (double x : *a.value) sq += x * x;
  const double norm = std::sqrt(sq);
  if (std::isfinite(norm) && norm > max_norm)
    for (const NamedArray& a : named_arrays(c, g))
      for (double& x : *a.value) x *= max_norm / norm;
  return norm;
}

// AdamW (Loshchilov & Hutter 2019), for each parameter p with gradient g, at step t = 1, 2, ...:
//   m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2
//   p -= lr ((m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) + wd p)
// with wd the weight decay for the weight matrices of Linear layers and 0 for every other
// parameter: biases, LayerNorm, the embeddings and every positional parameter.
static void adamw_step(const Config& c, Params& p, Params& g, AdamW& opt, double lr) {
  ++opt.t;
  const double bc1 = 1 - std::pow(opt.beta1, static_cast<double>(opt.t));
  const double bc2 = 1 - std::pow(opt.beta2, static_cast<double>(opt.t));
  std::vector<NamedArray> ps = named_arrays(c, p), gs = named_arrays(c, g),
                          ms = named_arrays(c, opt.m), vs = named_arrays(c, opt.v);
  for (size_t k = 0; k < ps.size(); ++k) {
    const double wd = ps[k].decay ? opt.weight_decay : 0;
    Vec &w = *ps[k].value, &dw = *gs[k].value, &m = *ms[k].value, &v = *vs[k].value;
    for (size_t i = 0; i < w.size(); ++i) {
      m[i] = opt.beta1 * m[i] + (1 - opt.beta1) * dw[i];
      v[i] = opt.beta2 * v[i] + (1 - opt.beta2) * dw[i] * dw[i];
      w[i] -= lr * ((m[i] / bc1) / (std::sqrt(v[i] / bc2) + opt.eps) + wd * w[i]);
    }
  }
}

double lr_at(int64_t s, int64_t warmup, int64_t total, double max_lr, double min_lr) {
  if (s < warmup) return max_lr * static_cast<double>(s + 1) / warmup;
  if (total <= warmup) return max_lr;
  const double q = std::min(1.0, static_cast<double>(s - warmup) / (total - warmup));
  return min_lr + (max_lr - min_lr) * 0.5 * (1 + std::cos(3.14159265358979323846 * q));
}

Run start_run(const Config& c, const TrainSettings& s) {
  Run run{c, s, init_params(c, s.seed), {}, Generator(s.seed ^ 0x9e3779b97f4a7c15ULL)};
  if (run.settings.warmup < 0) run.settings.warmup = std::min<int64_t>(100, s.steps / 10);
  run.opt.m = zeros_like(c, run.params), run.opt.v = zeros_like(c, run.params);
  return run;
}

double train_step(Run& run, const std::vector<uint16_t>& train, int64_t step, double* grad_norm) {
  const Config& c = run.config;
  const TrainSettings& s = run.settings;
  Batch batch = sample_batch(train, s.batch, c.block_size, run.batches);
  if (c.random_positions > 0)
    batch.pos = draw_positions(s.batch, c.block_size, c.random_positions, s.seed, step);
  StepResult r = forward_backward(c, run.params, batch);
  const double norm = clip_grad_norm(c, r.grad, 1.0);
  if (grad_norm) *grad_norm = norm;
  adamw_step(c, run.params, r.grad, run.opt,
             lr_at(step, s.warmup, s.steps, s.lr, s.lr * s.min_lr_ratio));
  kerple_clamp(run.params);
  return r.loss;
}

double val_loss(const Run& run, const std::vector<uint16_t>& val, int64_t n) {
  const Config& c = run.config;
  Generator gen(run.settings.seed + 7);  // the same val batches every time
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    Batch batch = sample_batch(val, run.settings.batch, c.block_size, gen);
    if (c.random_positions > 0)
      batch.pos = draw_positions(batch.B, batch.T, c.random_positions, run.settings.seed, -1 - i);
    sum += model_loss(c, run.params, batch);
  }
  return sum / static_cast<double>(n);
}

}  // namespace poslab::reference
