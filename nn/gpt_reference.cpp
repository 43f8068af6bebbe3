// gpt_reference.cpp — one training step of the whole model (docs/model.md) as plain loops in
// double: the loss, then the gradient of every parameter. Each layer's forward is followed by
// its backward; the model's forward and backward at the bottom call them in order. No
// tensors, threads, packing or autograd: this file is what GPT::loss and backward() compute,
// written out so that it can be read from top to bottom. tests/nn/test_gpt_reference.cpp
// checks that the two agree (loss and every gradient, each scheme, both embeddings);
// `make reference PE=rope` runs one step through both and prints them side by side.
//
// Shapes: B batch, T time, C width, H heads, D = C/H head dim, V vocabulary. Every array is
// row-major: x (B,T,C) holds x[b,t,c] at (b*T + t)*C + c, and N = B*T counts its rows.
// Backward rules, stated once:
//   - gradients are accumulated (+=) into arrays that start at zero: a value used twice (the
//     residual stream, wte in the embedding and the tied head) gets the sum of both uses;
//   - each backward line names, after "<-", the forward line it inverts.
#include "nn/gpt_reference.h"

#include <cmath>
#include <map>

#include "nn/attention_reference.h"
#include "posenc/alibi.h"
#include "posenc/t5.h"

namespace poslab {
namespace {

using Vec = std::vector<double>;

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

// With g_c = dy_c w_c, the gradient that reaches xhat_c:
//   db_c += dy_c                                      <- y_c = ... + b_c
//   dw_c += dy_c xhat_c                               <- y_c = xhat_c w_c ...
//   dx_c += rstd (g_c - mean_k g_k - xhat_c mean_k(g_k xhat_k))   <- xhat_c = (x_c - mean) rstd,
//           where mean and rstd depend on every x_k of the row:
//           dxhat_c/dx_k = rstd ([c == k] - 1/C - xhat_c xhat_k / C)
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

//   dx += dy [0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx]    <- y = 0.5 x (1 + tanh u)
//   du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2)                   <- u = sqrt(2/pi) (x + ...)
void gelu_backward(double* dx, const double* dy, const double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double u = kSqrt2OverPi * (x[i] + 0.044715 * x[i] * x[i] * x[i]);
    const double du = kSqrt2OverPi * (1 + 3 * 0.044715 * x[i] * x[i]), th = std::tanh(u);
    dx[i] += dy[i] * (0.5 * (1 + th) + 0.5 * x[i] * (1 - th * th) * du);
  }
}

// ---- The input: token rows, scaled, plus the absolute position rows ----
// ids (B,T); wte (V,C); pos (T,C) or null: learned's wpe rows 0..T-1, or the sinusoidal table
//   x[b,t,:] = e wte[ids[b,t], :] + pos[t, :]        e = 1 (gpt2) or sqrt(C) (scaled)
void embedding_forward(double* x, const int32_t* ids, const double* wte, double e,
                       const double* pos, int64_t B, int64_t T, int64_t C) {
  for (int64_t n = 0; n < B * T; ++n)
    for (int64_t c = 0; c < C; ++c)
      x[n * C + c] = e * wte[ids[n] * C + c] + (pos ? pos[(n % T) * C + c] : 0);
}

//   dwte[ids[b,t], :] += e dx[b,t,:]     <- x = e wte[ids] ...  (a repeated token sums its rows)
//   dpos[t, :] += dx[b,t,:]              <- x = ... + pos[t]    (learned only: dpos non-null)
void embedding_backward(double* dwte, double* dpos, const double* dx, const int32_t* ids, double e,
                        int64_t B, int64_t T, int64_t C) {
  for (int64_t n = 0; n < B * T; ++n)
    for (int64_t c = 0; c < C; ++c) {
      dwte[ids[n] * C + c] += e * dx[n * C + c];
      if (dpos) dpos[(n % T) * C + c] += dx[n * C + c];
    }
}

// The sinusoidal table's rows 0..T-1, (T,C), a constant (no gradient):
//   PE[t, 2i] = sin(t / 10000^(2i/C)),  PE[t, 2i+1] = cos(t / 10000^(2i/C))
Vec sinusoidal_rows(int64_t T, int64_t C) {
  Vec pe(T * C);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < C; ++c) {
      const double a =
          static_cast<double>(t) / std::pow(10000.0, static_cast<double>(c - c % 2) / C);
      pe[t * C + c] = c % 2 == 0 ? std::sin(a) : std::cos(a);
    }
  return pe;
}

// ---- RoPE on x (B,T,H,D) at positions t = 0..T-1, in place ----
// The first r dims of each head form r/2 pairs (lo, hi): (2i, 2i+1) interleaved, (i, i + r/2)
// half. Pair i turns by a = t theta^(-2i/r); dims r..D-1 stay:
//   x'_lo = x_lo cos a - x_hi sin a
//   x'_hi = x_lo sin a + x_hi cos a
// sign = -1 turns by -a, which is the backward: R(a)^T = R(-a), so
//   dx = R(-a) dx'                        <- x' = R(a) x
struct RopeShape {
  int64_t r;  // rotated dims of a head
  double theta;
  bool half;  // the half layout
};

void rope_rotate(double* x, const RopeShape& rs, double sign, int64_t B, int64_t T, int64_t H,
                 int64_t D) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h) {
        double* xh = x + ((b * T + t) * H + h) * D;
        for (int64_t i = 0; i < rs.r / 2; ++i) {
          const double a = static_cast<double>(t) * std::pow(rs.theta, -2.0 * i / rs.r);
          const int64_t lo = rs.half ? i : 2 * i, hi = rs.half ? i + rs.r / 2 : 2 * i + 1;
          const double x0 = xh[lo], x1 = xh[hi], c = std::cos(a), s = sign * std::sin(a);
          xh[lo] = x0 * c - x1 * s;
          xh[hi] = x0 * s + x1 * c;
        }
      }
}

// ---- The attention bias of ALiBi and T5: (H, 2T-1), column c for r = j - i = c - (T-1) ----
//   alibi:  bias[h, c] = -m_h |r|                   fixed slopes m_h (posenc/alibi.h)
//   t5:     bias[h, c] = rel_bias[bucket(-r), h]    rel_bias (buckets, H), learned; the bucket
//                                                   of the offset i - j (posenc/t5.h)
Vec bias_table(const GPTConfig& cfg, const Vec& rel_bias, int64_t T) {
  const int64_t H = cfg.n_head, W = 2 * T - 1;
  Vec bias(H * W);
  const std::vector<double> slopes = alibi_slopes(H);
  const T5Options t5{cfg.pe.t5_buckets, cfg.pe.t5_max_distance, cfg.causal};
  for (int64_t h = 0; h < H; ++h)
    for (int64_t c = 0; c < W; ++c) {
      const int64_t r = c - (T - 1);
      bias[h * W + c] = cfg.pe.kind == PeKind::alibi ? -slopes[h] * std::abs(static_cast<double>(r))
                                                     : rel_bias[t5_bucket(-r, t5) * H + h];
    }
  return bias;
}

//   drel_bias[bucket(-r), h] += dbias[h, c]    <- bias[h, c] = rel_bias[bucket(-r), h]   (t5)
void t5_bias_backward(double* drel_bias, const Vec& dbias, const GPTConfig& cfg, int64_t T) {
  const int64_t H = cfg.n_head, W = 2 * T - 1;
  const T5Options t5{cfg.pe.t5_buckets, cfg.pe.t5_max_distance, cfg.causal};
  for (int64_t h = 0; h < H; ++h)
    for (int64_t c = 0; c < W; ++c) drel_bias[t5_bucket(T - 1 - c, t5) * H + h] += dbias[h * W + c];
}

// ---- Causal self-attention on qkv (B,T,3C), the output of c_attn ----
//   q, k, v = columns [0,C), [C,2C), [2C,3C) of qkv, each viewed as (B,T,H,D)
//   q, k = RoPE(q), RoPE(k)                                   rope only
//   y = attention(q, k, v, bias)                              (B,T,H,D) = (B,T,C), the
//     scores q.k / sqrt(D) + bias, the mask, softmax, P v: attention_reference.cpp
// `att` keeps what the backward needs: q and k as rotated, v, the bias.
void attention_forward(double* y, AttentionProblem& att, const double* qkv, const Vec& bias,
                       const GPTConfig& cfg, const RopeShape* rope, int64_t B, int64_t T) {
  const int64_t C = cfg.n_embd, H = cfg.n_head, D = C / H;
  att.B = B, att.Tq = att.Tk = T, att.H = H, att.D = D;
  att.q.resize(B * T * C), att.k.resize(B * T * C), att.v.resize(B * T * C);
  for (int64_t n = 0; n < B * T; ++n)
    for (int64_t c = 0; c < C; ++c) {
      att.q[n * C + c] = qkv[n * 3 * C + c];
      att.k[n * C + c] = qkv[n * 3 * C + C + c];
      att.v[n * C + c] = qkv[n * 3 * C + 2 * C + c];
    }
  if (rope) rope_rotate(att.q.data(), *rope, +1, B, T, H, D);
  if (rope) rope_rotate(att.k.data(), *rope, +1, B, T, H, D);
  att.bias = bias;
  att.o.causal = cfg.causal;
  att.o.scale = 1 / std::sqrt(static_cast<double>(D));
  const Vec out = attention_reference_forward(att);
  std::copy(out.begin(), out.end(), y);
}

//   dq, dk, dv, dbias = attention_reference_backward(att, dy)    <- y = attention(q, k, v, bias)
//   dq, dk = R(-a) dq, R(-a) dk                                   <- q, k = RoPE(q), RoPE(k)
//   dqkv[:, 0:C) += dq, [C,2C) += dk, [2C,3C) += dv               <- q, k, v = columns of qkv
// Returns dbias, (H, 2T-1): T5's table takes it (t5_bias_backward); ALiBi's has no gradient.
Vec attention_backward(double* dqkv, const double* dy, const AttentionProblem& att,
                       const RopeShape* rope, int64_t C) {
  AttentionProblemGrads g = attention_reference_backward(att, Vec(dy, dy + att.B * att.Tq * C));
  if (rope) rope_rotate(g.dq.data(), *rope, -1, att.B, att.Tq, att.H, att.D);
  if (rope) rope_rotate(g.dk.data(), *rope, -1, att.B, att.Tq, att.H, att.D);
  for (int64_t n = 0; n < att.B * att.Tq; ++n)
    for (int64_t c = 0; c < C; ++c) {
      dqkv[n * 3 * C + c] += g.dq[n * C + c];
      dqkv[n * 3 * C + C + c] += g.dk[n * C + c];
      dqkv[n * 3 * C + 2 * C + c] += g.dv[n * C + c];
    }
  return g.dbias;
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

// The weights as arrays (their gradients use the same struct). nanoGPT's names.
struct BlockParams {
  Vec ln_1_w, ln_1_b;            // (C)
  Vec attn_w, attn_b;            // c_attn (3C,C), (3C)
  Vec attn_proj_w, attn_proj_b;  // attn.c_proj (C,C), (C)
  Vec ln_2_w, ln_2_b;            // (C)
  Vec fc_w, fc_b;                // mlp.c_fc (4C,C), (4C)
  Vec mlp_proj_w, mlp_proj_b;    // mlp.c_proj (C,4C), (C)
};
struct Params {
  Vec wte;       // (V,C)
  Vec wpe;       // learned: (max_len, C)
  Vec rel_bias;  // t5: (buckets, H), shared by every block
  std::vector<BlockParams> h;
  Vec ln_f_w, ln_f_b;  // (C)
};

// Every array of p under its checkpoint name (docs/formats.md).
std::map<std::string, Vec*> by_name(Params& p) {
  std::map<std::string, Vec*> m{{"transformer.wte.weight", &p.wte},
                                {"transformer.wpe.weight", &p.wpe},
                                {"transformer.rel_bias.weight", &p.rel_bias},
                                {"transformer.ln_f.weight", &p.ln_f_w},
                                {"transformer.ln_f.bias", &p.ln_f_b}};
  for (size_t i = 0; i < p.h.size(); ++i) {
    const std::string b = "transformer.h." + std::to_string(i);
    BlockParams& w = p.h[i];
    m[b + ".ln_1.weight"] = &w.ln_1_w, m[b + ".ln_1.bias"] = &w.ln_1_b;
    m[b + ".attn.c_attn.weight"] = &w.attn_w, m[b + ".attn.c_attn.bias"] = &w.attn_b;
    m[b + ".attn.c_proj.weight"] = &w.attn_proj_w, m[b + ".attn.c_proj.bias"] = &w.attn_proj_b;
    m[b + ".ln_2.weight"] = &w.ln_2_w, m[b + ".ln_2.bias"] = &w.ln_2_b;
    m[b + ".mlp.c_fc.weight"] = &w.fc_w, m[b + ".mlp.c_fc.bias"] = &w.fc_b;
    m[b + ".mlp.c_proj.weight"] = &w.mlp_proj_w, m[b + ".mlp.c_proj.bias"] = &w.mlp_proj_b;
  }
  return m;
}

// What a block's forward keeps for its backward. (B,T,C) unless said otherwise.
struct BlockActs {
  Vec x;                           // the block's input, the residual stream
  Vec ln_1, ln_1_mean, ln_1_rstd;  // mean, rstd (B,T)
  Vec qkv;                         // (B,T,3C)
  AttentionProblem att;            // q, k (rotated), v, bias as attention saw them
  Vec att_y;                       // attention's output, heads side by side
  Vec h;                           // x + attn.c_proj(att_y)
  Vec ln_2, ln_2_mean, ln_2_rstd;
  Vec fc, fc_gelu;  // (B,T,4C)
};

// The sizes of one step and the scheme's pieces.
struct Step {
  const GPTConfig& cfg;
  int64_t B, T, C, V;
  double e;               // the input scale (nn/embedding.h)
  const RopeShape* rope;  // rope only
  Vec bias;               // alibi, t5: (H, 2T-1); empty otherwise
};

// x_out = h + mlp(ln_2(h)),  h = x + attn(ln_1(x))       (pre-LN, docs/model.md)
Vec block_forward(BlockActs& a, const BlockParams& w, const Vec& x, const Step& s) {
  const int64_t N = s.B * s.T, C = s.C;
  a.x = x;
  a.ln_1.resize(N * C), a.ln_1_mean.resize(N), a.ln_1_rstd.resize(N), a.qkv.resize(N * 3 * C);
  a.att_y.resize(N * C), a.h.resize(N * C), a.ln_2.resize(N * C), a.ln_2_mean.resize(N);
  a.ln_2_rstd.resize(N), a.fc.resize(N * 4 * C), a.fc_gelu.resize(N * 4 * C);
  Vec proj(N * C);
  // ln_1 = LN(x)
  layernorm_forward(a.ln_1.data(), a.ln_1_mean.data(), a.ln_1_rstd.data(), x.data(),
                    w.ln_1_w.data(), w.ln_1_b.data(), N, C);
  // qkv = c_attn(ln_1)
  linear_forward(a.qkv.data(), a.ln_1.data(), w.attn_w.data(), w.attn_b.data(), N, C, 3 * C);
  // att_y = attention(q, k, v) of qkv's columns
  attention_forward(a.att_y.data(), a.att, a.qkv.data(), s.bias, s.cfg, s.rope, s.B, s.T);
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

// From dx_out (B,T,C) to the gradient of the block's input, returned, and of its weights (+= in
// g); dbias += the gradient of the bias table. The forward's lines in reverse.
Vec block_backward(const Vec& dx_out, const BlockActs& a, const BlockParams& w, BlockParams& g,
                   Vec& dbias, const Step& s) {
  const int64_t N = s.B * s.T, C = s.C;
  Vec dh = dx_out;  // <- x_out = h + ...
  Vec dfc_gelu(N * 4 * C), dfc(N * 4 * C), dln_2(N * C);
  // <- x_out = h + mlp.c_proj(fc_gelu)
  linear_backward(dfc_gelu.data(), g.mlp_proj_w.data(), g.mlp_proj_b.data(), dx_out.data(),
                  a.fc_gelu.data(), w.mlp_proj_w.data(), N, 4 * C, C);
  gelu_backward(dfc.data(), dfc_gelu.data(), a.fc.data(), N * 4 * C);  // <- fc_gelu = gelu(fc)
  linear_backward(dln_2.data(), g.fc_w.data(), g.fc_b.data(), dfc.data(), a.ln_2.data(),
                  w.fc_w.data(), N, C, 4 * C);  // <- fc = c_fc(ln_2)
  layernorm_backward(dh.data(), g.ln_2_w.data(), g.ln_2_b.data(), dln_2.data(), a.h.data(),
                     w.ln_2_w.data(), a.ln_2_mean.data(), a.ln_2_rstd.data(), N, C);  // <- LN(h)
  Vec dx = dh;  // <- h = x + ...
  Vec datt_y(N * C), dqkv(N * 3 * C), dln_1(N * C);
  linear_backward(datt_y.data(), g.attn_proj_w.data(), g.attn_proj_b.data(), dh.data(),
                  a.att_y.data(), w.attn_proj_w.data(), N, C, C);  // <- ... attn.c_proj(att_y)
  Vec db = attention_backward(dqkv.data(), datt_y.data(), a.att, s.rope, C);  // <- att_y = ...
  for (size_t i = 0; i < db.size(); ++i) dbias[i] += db[i];
  linear_backward(dln_1.data(), g.attn_w.data(), g.attn_b.data(), dqkv.data(), a.ln_1.data(),
                  w.attn_w.data(), N, C, 3 * C);  // <- qkv = c_attn(ln_1)
  layernorm_backward(dx.data(), g.ln_1_w.data(), g.ln_1_b.data(), dln_1.data(), a.x.data(),
                     w.ln_1_w.data(), a.ln_1_mean.data(), a.ln_1_rstd.data(), N, C);  // <- LN(x)
  return dx;
}

// What the model's forward keeps for its backward.
struct Acts {
  Vec pos;  // (T,C): learned's wpe rows 0..T-1 or the sinusoidal table; empty otherwise
  std::vector<BlockActs> blocks;
  Vec x;                           // (B,T,C) the last block's output
  Vec ln_f, ln_f_mean, ln_f_rstd;  // (B,T,C), (B,T), (B,T)
  Vec logits, probs;               // (B,T,V)
};

//   x      = e wte[ids] + pos[0:T]              the input (pos: learned, sinusoidal)
//   x      = block_l(x), l = 0 .. n_layer-1
//   logits = ln_f(x) wte^T                      the tied head: a linear with W = wte, no bias
//   loss   = crossentropy(logits, targets)
double model_forward(Acts& a, const Params& p, const Ids& ids, const Ids& targets, const Step& s) {
  const int64_t N = s.B * s.T, C = s.C, V = s.V;
  const PeKind pe = s.cfg.pe.kind;
  if (pe == PeKind::learned) a.pos.assign(p.wpe.begin(), p.wpe.begin() + s.T * C);
  if (pe == PeKind::sinusoidal) a.pos = sinusoidal_rows(s.T, C);
  Vec x(N * C);
  embedding_forward(x.data(), ids.data.data(), p.wte.data(), s.e,
                    a.pos.empty() ? nullptr : a.pos.data(), s.B, s.T, C);
  a.blocks.resize(p.h.size());
  for (size_t l = 0; l < p.h.size(); ++l) x = block_forward(a.blocks[l], p.h[l], x, s);
  a.x = x;
  a.ln_f.resize(N * C), a.ln_f_mean.resize(N), a.ln_f_rstd.resize(N);
  a.logits.resize(N * V), a.probs.resize(N * V);
  layernorm_forward(a.ln_f.data(), a.ln_f_mean.data(), a.ln_f_rstd.data(), x.data(),
                    p.ln_f_w.data(), p.ln_f_b.data(), N, C);
  linear_forward(a.logits.data(), a.ln_f.data(), p.wte.data(), nullptr, N, C, V);
  return crossentropy_forward(a.probs.data(), a.logits.data(), targets.data.data(), N, V);
}

// The forward's lines in reverse, into g (zeros on entry).
void model_backward(Params& g, const Acts& a, const Params& p, const Ids& ids, const Ids& targets,
                    const Step& s) {
  const int64_t N = s.B * s.T, C = s.C, V = s.V;
  Vec dlogits(N * V), dln_f(N * C), dx(N * C), dbias(s.bias.size());
  crossentropy_backward(dlogits.data(), a.probs.data(), targets.data.data(), N, V);  // <- loss
  linear_backward(dln_f.data(), g.wte.data(), nullptr, dlogits.data(), a.ln_f.data(), p.wte.data(),
                  N, C, V);  // <- logits = ln_f wte^T: wte's first use
  layernorm_backward(dx.data(), g.ln_f_w.data(), g.ln_f_b.data(), dln_f.data(), a.x.data(),
                     p.ln_f_w.data(), a.ln_f_mean.data(), a.ln_f_rstd.data(), N, C);  // <- ln_f(x)
  for (size_t l = p.h.size(); l-- > 0;)
    dx = block_backward(dx, a.blocks[l], p.h[l], g.h[l], dbias, s);  // <- x = block_l(x)
  if (s.cfg.pe.kind == PeKind::t5)
    t5_bias_backward(g.rel_bias.data(), dbias, s.cfg, s.T);  // <- every block's bias table
  embedding_backward(g.wte.data(), s.cfg.pe.kind == PeKind::learned ? g.wpe.data() : nullptr,
                     dx.data(), ids.data.data(), s.e, s.B, s.T, C);  // <- x = e wte[ids] + pos
}

}  // namespace

ReferenceStep gpt_reference_step(const GPT& model, const Ids& ids, const Ids& targets) {
  const GPTConfig& cfg = model.config();
  if (ids.shape.size() != 2 || targets.shape != ids.shape)
    fail("gpt_reference: expected ids and targets of one shape (B,T), but got ",
         shape_str(ids.shape), " and ", shape_str(targets.shape));
  const int64_t B = ids.shape[0], T = ids.shape[1], C = cfg.n_embd;
  if (cfg.pe.kind == PeKind::learned && T > cfg.pe.max_len)
    fail("gpt_reference: a window of ", T, " positions, but wpe holds ", cfg.pe.max_len);
  Params p, g;
  p.h.resize(cfg.n_layer), g.h.resize(cfg.n_layer);
  std::map<std::string, Vec*> weights = by_name(p), grads = by_name(g);
  for (const NamedParam& np : model.parameters()) {
    if (!weights.count(np.name)) fail("gpt_reference: unknown parameter ", np.name);
    *weights[np.name] = np.tensor.to_vector();
    grads[np.name]->assign(np.tensor.numel(), 0.0);
  }
  const RopeShape rope{rope_rotated_dims(C / cfg.n_head, cfg.pe.rope_fraction), cfg.pe.theta,
                       cfg.pe.rope_layout == RopeLayout::half};
  Step s{cfg,
         B,
         T,
         C,
         cfg.vocab_size,
         embedding_input_scale(cfg.embedding, C),
         cfg.pe.kind == PeKind::rope ? &rope : nullptr,
         {}};
  if (cfg.pe.kind == PeKind::alibi || cfg.pe.kind == PeKind::t5)
    s.bias = bias_table(cfg, p.rel_bias, T);
  Acts a;
  ReferenceStep out;
  out.loss = model_forward(a, p, ids, targets, s);
  model_backward(g, a, p, ids, targets, s);
  for (const NamedParam& np : model.parameters()) out.grads.push_back({np.name, *grads[np.name]});
  for (const BlockActs& b : a.blocks) out.attention.push_back(attention_reference_probs(b.att));
  return out;
}

}  // namespace poslab
