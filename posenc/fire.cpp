#include "posenc/fire.h"

#include <algorithm>
#include <cmath>

namespace poslab {
namespace {

// The parameters as doubles, read once per call (the MLP is small: 2W + HW + H + 2 numbers).
struct FireValues {
  int64_t W, H;
  std::vector<double> w0, b0, w2, b2;
  double c, m;
  explicit FireValues(const FireParams& f)
      : W(f.w0.size(0)),
        H(f.w2.size(0)),
        w0(f.w0.to_vector()),
        b0(f.b0.to_vector()),
        w2(f.w2.to_vector()),
        b2(f.b2.to_vector()),
        c(f.c.item()),
        m(f.m.item()) {}
};

// Row i of sequence b, for the backward (in double): the inputs u_j of its keys and what the
// backward needs of them: du/d|c| and du/dLthr per key.
// Only the keys j < e the row can see are computed (causal: e = q_pos0 + i + 1).
struct FireRow {
  std::vector<double> u, du_dc, du_dl;
  int64_t e = 0;
};

void fire_row(const FireValues& v, const PositionContext& ctx, int64_t b, int64_t i, int64_t T0,
              bool causal, bool grads, FireRow& r) {
  const int64_t Tk = ctx.Tk, Pi = ctx.position(b, ctx.q_pos0 + i);
  const double c = std::abs(v.c), Lthr = std::abs(v.m) * static_cast<double>(T0);
  const bool at_thr = Lthr > static_cast<double>(Pi);  // the max picks Lthr
  const double L = at_thr ? Lthr : static_cast<double>(Pi);
  const double Dn = std::log1p(c * L) + 1e-6;  // phi(L_i) + 1e-6
  r.e = causal ? std::min(Tk, ctx.q_pos0 + i + 1) : Tk;
  r.u.assign(r.e, 0.0);
  if (grads) r.du_dc.assign(r.e, 0.0), r.du_dl.assign(r.e, 0.0);
  for (int64_t j = 0; j < r.e; ++j) {
    const int64_t d = Pi - ctx.position(b, j);
    const double n = static_cast<double>(std::abs(d)), A = std::log1p(c * n);
    r.u[j] = A / Dn;
    if (!grads) continue;
    r.du_dc[j] = n / (c * n + 1) / Dn - A * (L / (c * L + 1)) / (Dn * Dn);
    r.du_dl[j] = at_thr ? -A * (c / (c * Lthr + 1)) / (Dn * Dn) : 0.0;
  }
}

// phi(n) = ln(|c| n + 1) for every distance n = 0 .. max the call meets: one log per distance,
// not one per pair (at L = 4096 a layer has 8.4 M pairs and 4,096 distances).
std::vector<double> phi_table(const FireValues& v, const PositionContext& ctx) {
  int64_t most = 0;
  for (int64_t b = 0; b < ctx.rows(); ++b)
    most = std::max(most, ctx.position(b, ctx.Tk - 1) - ctx.position(b, 0));
  std::vector<double> phi(most + 1);
  const double c = std::abs(v.c);
  for (int64_t n = 0; n <= most; ++n) phi[n] = std::log1p(c * static_cast<double>(n));
  return phi;
}

// f(u) = b2 + sum_w w2_w relu(w0_w u + b0_w) is piecewise linear in u: unit w switches at
// u = -b0_w / w0_w. Between consecutive switch points the active units are fixed, so
// f_h(u) = A_kh u + C_kh on segment k. The forward evaluates each pair with its segment's
// line (H multiply-adds) instead of the whole MLP (W (H + 1)); the backward, which needs each
// unit's mask anyway, runs the MLP as written.
struct FirePieces {
  std::vector<double> bp;    // the K switch points, ascending
  std::vector<double> A, C;  // (K + 1) x H: segment k covers [bp[k-1], bp[k])
  int64_t H = 0;
  int64_t segment(double u) const {  // the number of switch points <= u
    return std::upper_bound(bp.begin(), bp.end(), u) - bp.begin();
  }
};

FirePieces pieces_of(const FireValues& v) {
  FirePieces p;
  p.H = v.H;
  for (int64_t w = 0; w < v.W; ++w)
    if (v.w0[w] != 0) p.bp.push_back(-v.b0[w] / v.w0[w]);
  std::sort(p.bp.begin(), p.bp.end());
  const int64_t K = static_cast<int64_t>(p.bp.size());
  p.A.assign((K + 1) * v.H, 0.0), p.C.assign((K + 1) * v.H, 0.0);
  for (int64_t k = 0; k <= K; ++k) {
    // a point inside segment k decides which units are on there
    const double u = K == 0   ? 0
                     : k == 0 ? p.bp[0] - 1
                     : k == K ? p.bp[K - 1] + 1
                              : (p.bp[k - 1] + p.bp[k]) / 2;
    for (int64_t h = 0; h < v.H; ++h) {
      double A = 0, C = v.b2[h];
      for (int64_t w = 0; w < v.W; ++w)
        if (v.w0[w] * u + v.b0[w] > 0)
          A += v.w2[h * v.W + w] * v.w0[w], C += v.w2[h * v.W + w] * v.b0[w];
      p.A[k * v.H + h] = A, p.C[k * v.H + h] = C;
    }
  }
  return p;
}

// One row's share of every gradient (fire.h), from G (H rows of Tk, stride ld) into g:
// [dw0 (W) | db0 (W) | dw2 (H W) | db2 (H) | dc | dm].
void backward_row(const FireValues& v, const FireRow& r, const double* G, int64_t ld, int64_t T0,
                  double* g) {
  const int64_t Tk = static_cast<int64_t>(r.u.size()), W = v.W, H = v.H;
  double *dw0 = g, *db0 = g + W, *dw2 = g + 2 * W, *db2 = dw2 + H * W;
  std::vector<double> du(Tk, 0.0), gw(Tk);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t j = 0; j < Tk; ++j) db2[h] += G[h * ld + j];
  for (int64_t w = 0; w < W; ++w) {
    const double a = v.w0[w], bw = v.b0[w];
    double s0 = 0, s1 = 0;
    for (int64_t j = 0; j < Tk; ++j) {
      const double pre = a * r.u[j] + bw;
      if (pre <= 0) {
        gw[j] = 0;
        continue;
      }
      double gsum = 0;
      for (int64_t h = 0; h < H; ++h) {
        dw2[h * W + w] += G[h * ld + j] * pre;
        gsum += G[h * ld + j] * v.w2[h * W + w];
      }
      gw[j] = gsum;
      s0 += gsum, s1 += gsum * r.u[j];
      du[j] += gsum * a;
    }
    db0[w] += s0, dw0[w] += s1;
  }
  const double sc = v.c > 0 ? 1.0 : v.c < 0 ? -1.0 : 0.0, sm = v.m > 0 ? 1.0 : v.m < 0 ? -1.0 : 0.0;
  double dc = 0, dm = 0;
  for (int64_t j = 0; j < Tk; ++j) dc += du[j] * r.du_dc[j], dm += du[j] * r.du_dl[j];
  g[2 * W + H * W + H] += sc * dc;
  g[2 * W + H * W + H + 1] += sm * static_cast<double>(T0) * dm;
}

// FIRE's bias one score row at a time: what fire_bias writes (into zeros) and what attention
// asks for inside its row blocks when no gradient is needed (pair_bias_rows.h): one code, so
// the tensor's entries and the rows have the same bits. It holds the positions only (the
// context's tables stay with the forward).
class FireRows final : public PairBiasRows {
 public:
  FireRows(const FireParams& f, const PositionContext& ctx, int64_t T0, bool causal)
      : v_(f), pieces_(pieces_of(v_)), phi_(phi_table(v_, ctx)), T0_(T0), causal_(causal) {
    at_.q_pos0 = ctx.q_pos0, at_.Tq = ctx.Tq, at_.Tk = ctx.Tk, at_.offset = ctx.offset;
    at_.positions = ctx.positions;
  }
  void add_row(int64_t b, int64_t h, int64_t i, int64_t lo, int64_t hi, float* s) const override {
    add<float>(b, h, i, lo, hi, s);
  }
  void add_row(int64_t b, int64_t h, int64_t i, int64_t lo, int64_t hi, double* s) const override {
    add<double>(b, h, i, lo, hi, s);
  }

 private:
  // s[j - lo] += f_h(u_ij) for j in [lo, hi). Causal rows: u_j falls as j rises (the distance
  // n = P_i - P_j falls, and phi rises with n), so the segment is found once and then only
  // stepped down.
  template <class T>
  void add(int64_t b, int64_t h, int64_t i, int64_t lo, int64_t hi, T* s) const {
    if (lo >= hi) return;
    const int64_t Pi = at_.position(b, at_.q_pos0 + i), H = v_.H;
    const double Lthr = std::abs(v_.m) * static_cast<double>(T0_);
    const double L = std::max(Lthr, static_cast<double>(Pi));
    const double inv = 1 / (std::log1p(std::abs(v_.c) * L) + 1e-6);
    const double *A = pieces_.A.data() + h, *C = pieces_.C.data() + h;
    if (causal_ && !at_.random()) return add_runs(at_.q_pos0 + i, inv, A, C, lo, hi, s);
    int64_t k = -1;
    for (int64_t j = lo; j < hi; ++j) {
      const double u = phi_[std::abs(Pi - at_.position(b, j))] * inv;
      if (!causal_ || k < 0) k = pieces_.segment(u);
      while (k > 0 && u < pieces_.bp[k - 1]) --k;
      s[j - lo] += static_cast<T>(A[k * H] * u + C[k * H]);
    }
  }

  // The causal row of contiguous positions (evaluation's windows): key j sits at distance
  // n = P - j, so u falls as j rises, and the keys of one segment of f form a run of j. Each
  // run's end is found by bisection on the same expression u = phi[n] inv, and inside it f is
  // one line a u + c: a loop of multiply-adds the compiler vectorises, where the per-key
  // segment test of the general loop ran one key at a time (bench/v5_schemes.sh, eval).
  template <class T>
  void add_runs(int64_t P, double inv, const double* A, const double* C, int64_t lo, int64_t hi,
                T* s) const {
    const int64_t H = v_.H;
    const double* phi = phi_.data() + P;  // phi[-j]: the distance of key j
    for (int64_t j = lo; j < hi;) {
      const int64_t k = pieces_.segment(phi[-j] * inv);
      int64_t end = hi;  // the first key past the run: u < bp[k - 1] there
      if (k > 0) {
        const double edge = pieces_.bp[k - 1];
        int64_t a = j + 1;
        while (a < end) {
          const int64_t mid = a + (end - a) / 2;
          if (phi[-mid] * inv < edge)
            end = mid;
          else
            a = mid + 1;
        }
      }
      const double ak = A[k * H], ck = C[k * H];
      T* out = s - lo;
#pragma omp simd
      for (int64_t m = j; m < end; ++m) out[m] += static_cast<T>(ak * (phi[-m] * inv) + ck);
      j = end;
    }
  }

  FireValues v_;
  FirePieces pieces_;
  std::vector<double> phi_;
  PositionContext at_;
  int64_t T0_;
  bool causal_;
};

}  // namespace

Tensor fire_bias(const FireParams& f, const PositionContext& ctx, int64_t T0, bool causal) {
  const FireValues v(f);
  const int64_t R = ctx.rows(), Tq = ctx.Tq, Tk = ctx.Tk, H = v.H, W = v.W;
  Tensor y = Tensor::empty({R, H, Tq, Tk}, f.w0.dtype());
  const FireRows rows(f, ctx, T0, causal);
  dispatch(y.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* out = y.data<T>();
    std::fill(out, out + y.numel(), T(0));  // masked pairs stay 0
#pragma omp parallel for schedule(dynamic, 8) collapse(2)
    for (int64_t b = 0; b < R; ++b)
      for (int64_t i = 0; i < Tq; ++i) {
        const int64_t e = causal ? std::min(Tk, ctx.q_pos0 + i + 1) : Tk;  // visible keys
        for (int64_t h = 0; h < H; ++h)
          rows.add_row(b, h, i, 0, e, out + ((b * H + h) * Tq + i) * Tk);
      }
  });
  const PositionContext at = [&] {  // the positions only: the backward keeps no tables
    PositionContext p;
    p.q_pos0 = ctx.q_pos0, p.Tq = Tq, p.Tk = Tk, p.offset = ctx.offset, p.positions = ctx.positions;
    return p;
  }();
  return record("fire_bias", y, {&f.w0, &f.b0, &f.w2, &f.b2, &f.c, &f.m},
                [v, at, T0, causal, R, H, W, f](const Tensor& dy) {
                  const int64_t Tq = at.Tq, Tk = at.Tk, NG = 2 * W + H * W + H + 2;
                  const std::vector<double> G = dy.contiguous().to_vector();
                  // each row its own partial sums, added in one order after (the same bits every
                  // run)
                  std::vector<double> part(R * Tq * NG, 0.0);
#pragma omp parallel for schedule(dynamic, 8) collapse(2)
                  for (int64_t b = 0; b < R; ++b)
                    for (int64_t i = 0; i < Tq; ++i) {
                      FireRow r;
                      fire_row(v, at, b, i, T0, causal, true, r);
                      backward_row(v, r, G.data() + (b * H * Tq + i) * Tk, Tq * Tk, T0,
                                   part.data() + (b * Tq + i) * NG);
                    }
                  std::vector<double> g(NG, 0.0);
                  for (int64_t row = 0; row < R * Tq; ++row)
                    for (int64_t e = 0; e < NG; ++e) g[e] += part[row * NG + e];
                  auto slice_of = [&](int64_t from, const Tensor& like) {
                    std::vector<double> s(g.begin() + from, g.begin() + from + like.numel());
                    return Tensor::from_vector(s, like.shape(), like.dtype()).to(like.device());
                  };
                  return std::vector<Tensor>{slice_of(0, f.w0),     slice_of(W, f.b0),
                                             slice_of(2 * W, f.w2), slice_of(2 * W + H * W, f.b2),
                                             slice_of(NG - 2, f.c), slice_of(NG - 1, f.m)};
                });
}

Fire::Fire(const PosencDims& dims, int64_t width, Generator& gen) : T0_(dims.block_size) {
  if (width < 1) fail("--fire-width: expected W >= 1, but got ", width);
  if (dims.block_size < 1) fail("fire: expected the training length T0 >= 1");
  const int64_t H = dims.n_head, W = width;
  const double k2 = 1 / std::sqrt(static_cast<double>(W));
  for (int64_t l = 0; l < dims.n_layer; ++l) {
    if (!dims.positional_layer(l)) continue;
    FireParams p;
    p.w0 = Tensor::uniform({W, 1}, gen, -1, 1, dims.dtype);  // fan_in 1
    p.b0 = Tensor::uniform({W}, gen, -1, 1, dims.dtype);
    p.w2 = Tensor::uniform({H, W}, gen, -k2, k2, dims.dtype);  // fan_in W
    p.b2 = Tensor::uniform({H}, gen, -k2, k2, dims.dtype);
    p.c = Tensor::full({1}, 0.1, dims.dtype);
    p.m = Tensor::full({1}, 1.0, dims.dtype);
    for (Tensor* t : {&p.w0, &p.b0, &p.w2, &p.b2, &p.c, &p.m}) t->set_requires_grad(true);
    layers_.push_back(l), params_.push_back(p);
  }
}

const FireParams& Fire::layer(int64_t l) const {
  for (size_t k = 0; k < layers_.size(); ++k)
    if (layers_[k] == l) return params_[k];
  fail("fire: layer ", l, " has no FIRE parameters (--nope-every leaves it without position)");
}

AttentionTerms Fire::attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                     const PositionContext& ctx) const {
  if (q.size(1) != ctx.Tq || k.size(1) != ctx.Tk)
    fail("fire: expected q and k of the context's Tq = ", ctx.Tq, " and Tk = ", ctx.Tk,
         " positions, but got q ", shape_str(q.shape()), " and k ", shape_str(k.shape()));
  const FireParams& f = layer(ctx.layer);
  // Nothing to differentiate: the bias is made row by row inside attention, never stored.
  if (!grad_enabled() || !any_requires_grad({&f.w0, &f.b0, &f.w2, &f.b2, &f.c, &f.m}))
    return {.q = q, .k = k, .bias_rows = std::make_shared<FireRows>(f, ctx, T0_, causal)};
  return {.q = q, .k = k, .bias = fire_bias(f, ctx, T0_, causal)};
}

std::vector<std::pair<std::string, Tensor>> Fire::parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t k = 0; k < layers_.size(); ++k) {
    const std::string pre = "transformer.h." + std::to_string(layers_[k]) + ".attn.fire.";
    const FireParams& p = params_[k];
    out.push_back({pre + "mlp.0.weight", p.w0});
    out.push_back({pre + "mlp.0.bias", p.b0});
    out.push_back({pre + "mlp.2.weight", p.w2});
    out.push_back({pre + "mlp.2.bias", p.b2});
    out.push_back({pre + "c", p.c});
    out.push_back({pre + "L_multiplier", p.m});
  }
  return out;
}

void Fire::to(Device device) {
  for (FireParams& p : params_)
    for (Tensor* t : {&p.w0, &p.b0, &p.w2, &p.b2, &p.c, &p.m}) *t = parameter_to(*t, device);
}

}  // namespace poslab
