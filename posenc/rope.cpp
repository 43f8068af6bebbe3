#include "posenc/rope.h"

#include <cmath>

#include "posenc/rope_kernels.h"

namespace poslab {

static const std::vector<std::string>& rope_layout_names() {
  static const std::vector<std::string> names{"interleaved", "half"};
  return names;
}

RopeLayout parse_rope_layout(const std::string& name) {
  return static_cast<RopeLayout>(name_index(rope_layout_names(), name, "--rope-layout"));
}

const char* rope_layout_name(RopeLayout layout) {
  return rope_layout_names()[static_cast<int>(layout)].c_str();
}

int64_t rope_rotated_dims(int64_t D, double fraction) {
  return 2 * static_cast<int64_t>(std::floor(fraction * static_cast<double>(D) / 2));
}

void validate_rope(int64_t head_dim, double theta, double fraction) {
  if (head_dim % 2 != 0)
    fail("rope: expected an even head dim D = d/heads (--d, --heads; RoPE rotates pairs of dims), ",
         "but got D = ", head_dim);
  if (!(theta > 1)) fail("rope: expected --theta > 1, but got ", theta);
  if (!(fraction > 0 && fraction <= 1))
    fail("rope: expected a --rope-fraction f in (0, 1], but got ", fraction);
  int64_t r = rope_rotated_dims(head_dim, fraction);
  if (r < 2)
    fail("rope: --rope-fraction f = ", fraction, " rotates r = 2 floor(f D / 2) = ", r,
         " of D = ", head_dim, " dims of a head; expected at least one pair (r >= 2)");
}

int64_t rope_kept_pairs(int64_t D, double proportion) {
  return static_cast<int64_t>(std::floor(proportion * static_cast<double>(D) / 2));
}

void validate_rope_proportion(double proportion, double fraction) {
  if (!(proportion >= 0 && proportion <= 1))
    fail("--rope-proportion: expected p in [0, 1], but got ", proportion);
  if (proportion < 1 && fraction < 1)
    fail("--rope-proportion p < 1 with --rope-fraction f < 1: choose one (p keeps the fastest ",
         "pairs' frequencies, f spreads all of them over fewer dims), but got p = ", proportion,
         " and f = ", fraction);
}

RoPE::RoPE(int64_t head_dim, double theta, RopeLayout layout, double fraction, double proportion)
    : d_(head_dim),
      r_(rope_rotated_dims(head_dim, fraction)),
      kept_(proportion < 1 ? rope_kept_pairs(head_dim, proportion) : r_ / 2),
      theta_(theta),
      layout_(layout) {
  validate_rope(head_dim, theta, fraction);
  validate_rope_proportion(proportion, fraction);
}

// p-RoPE: pairs i >= kept turn at frequency 0 (rope.h).
static void drop_pairs(std::vector<double>& freq, int64_t kept) {
  for (size_t i = static_cast<size_t>(kept); i < freq.size(); ++i) freq[i] = 0;
}

void rope_tables(const RopeFrequencies& f, int64_t pos0, int64_t T, DType dtype, Tensor* cos,
                 Tensor* sin) {
  std::vector<int64_t> pos(T);
  for (int64_t t = 0; t < T; ++t) pos[t] = pos0 + t;
  rope_tables_at(f, pos, {T}, dtype, cos, sin);
}

void rope_tables_at(const RopeFrequencies& f, const std::vector<int64_t>& positions,
                    const Shape& shape, DType dtype, Tensor* cos, Tensor* sin) {
  const int64_t half = static_cast<int64_t>(f.freq.size()),
                N = static_cast<int64_t>(positions.size());
  std::vector<double> c(N * half), s(N * half);
  for (int64_t t = 0; t < N; ++t)
    for (int64_t i = 0; i < half; ++i) {
      double a = static_cast<double>(positions[t]) * f.pos_scale * f.freq[i];
      c[t * half + i] = f.mscale * std::cos(a);
      s[t * half + i] = f.mscale * std::sin(a);
    }
  Shape table = shape;
  table.push_back(half);
  *cos = Tensor::from_vector(c, table, dtype);
  *sin = Tensor::from_vector(s, table, dtype);
}

// One kernel for both directions: sign = +1 rotates by +a (forward), -1 by -a (backward).
// Pair i < r/2 of each head is (lo, hi) = (2i, 2i+1) interleaved, (i, i + r/2) half:
//   y[lo] = x[lo] c - sign x[hi] s
//   y[hi] = sign x[lo] s + x[hi] c
// and dims r..D-1 are copied (the identity, in both directions). Tables of (B, T, r/2) (random
// positions: each sequence its own) are read at b T r/2 + t r/2 (tb = T r/2), shared (T, r/2)
// ones at t r/2 (tb = 0). The layout is a template
// argument so that the pair offsets are constants: the loop over pairs then vectorises (the
// interleaved pairs by even/odd shuffles); with the layout a run-time value it stayed scalar.
template <class T, bool Half>
static void rope_kernel(const Tensor& x, const T* cos, const T* sin, int64_t tb, int64_t r, T* y,
                        T sign) {
  int64_t B = x.size(0), Tn = x.size(1), H = x.size(2), D = x.size(3), half = r / 2;
  const T* px = x.data<T>();
  int64_t sb = x.strides()[0], st = x.strides()[1], sh = x.strides()[2];
#pragma omp parallel for collapse(2) if (x.numel() > (1 << 14))
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < Tn; ++t)
      for (int64_t h = 0; h < H; ++h) {
        const T* xr = px + b * sb + t * st + h * sh;
        T* yr = y + ((b * Tn + t) * H + h) * D;
        const T *c = cos + b * tb + t * half, *s = sin + b * tb + t * half;
#pragma omp simd
        for (int64_t i = 0; i < half; ++i) {
          const int64_t lo = Half ? i : 2 * i, hi = Half ? i + half : 2 * i + 1;
          T x0 = xr[lo], x1 = xr[hi], ss = sign * s[i];
          yr[lo] = x0 * c[i] - x1 * ss;
          yr[hi] = x0 * ss + x1 * c[i];
        }
        for (int64_t d = r; d < D; ++d) yr[d] = xr[d];
      }
}

static Tensor rope_apply(const Tensor& x_in, const Tensor& cos, const Tensor& sin,
                         RopeLayout layout, double sign) {
  bool half_layout = layout == RopeLayout::half;
  if (x_in.device() == Device::cuda) {
    if (cos.dim() != 2) fail("rope: per-sequence tables (random positions) run on the CPU only");
    return kernel::cuda::rope_apply(x_in, cos, sin, half_layout, sign);
  }
  Tensor x = x_in.strides().back() == 1 ? x_in : x_in.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  const int64_t half = cos.size(cos.dim() - 1), tb = cos.dim() == 3 ? x.size(1) * half : 0;
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if (half_layout)
      rope_kernel<T, true>(x, cos.data<T>(), sin.data<T>(), tb, 2 * half, y.data<T>(),
                           static_cast<T>(sign));
    else
      rope_kernel<T, false>(x, cos.data<T>(), sin.data<T>(), tb, 2 * half, y.data<T>(),
                            static_cast<T>(sign));
  });
  return y;
}

Tensor rope_rotate(const Tensor& x, const Tensor& cos, const Tensor& sin, RopeLayout layout) {
  check_same("rope", x, cos);
  if (x.dim() != 4 || x.size(3) % 2 != 0)
    fail("rope: expected x (B,T,H,D) with an even head dim D, but got x of shape ",
         shape_str(x.shape()));
  const bool batched = cos.dim() == 3;
  const int64_t half = cos.dim() >= 2 ? cos.size(cos.dim() - 1) : 0;
  bool tables_ok = (cos.dim() == 2 || (batched && cos.size(0) == x.size(0))) &&
                   cos.size(cos.dim() - 2) == x.size(1) && half >= 1 && 2 * half <= x.size(3) &&
                   sin.shape() == cos.shape() && cos.is_contiguous() && sin.is_contiguous();
  if (!tables_ok)
    fail("rope: expected contiguous cos/sin tables (T, r/2) or (B, T, r/2) with B = ", x.size(0),
         ", T = ", x.size(1), " and 2 <= r <= D = ", x.size(3), " for x ", shape_str(x.shape()),
         ", but got ", shape_str(cos.shape()), " and ", shape_str(sin.shape()));
  // backward: dx = R^T dy, the same kernel with the sine negated (derivation in rope.h)
  return record("rope", rope_apply(x, cos, sin, layout, +1), {&x},
                [cos, sin, layout](const Tensor& dy) {
                  return std::vector<Tensor>{rope_apply(dy, cos, sin, layout, -1)};
                });
}

// x: (B,T,H,D) of a half-layout head -> the same values in the interleaved order (rope.h):
// dim i goes to 2i and dim i + r/2 to 2i + 1 for i < r/2; dims r..D-1 stay. A copy, without
// gradient (dynamic scaling is evaluation only): q . k is unchanged, the pairs become (2i, 2i+1).
static Tensor interleaved_order(const Tensor& x, int64_t r) {
  int64_t B = x.size(0), T = x.size(1), H = x.size(2), D = x.size(3);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  Tensor halves = x.slice(3, 0, r).contiguous().reshape({B, T, H, 2, r / 2});         // [a | b]
  Tensor pairs = halves.permute({0, 1, 2, 4, 3}).contiguous().reshape({B, T, H, r});  // a0 b0 a1..
  y.slice(3, 0, r).copy_(pairs);
  if (r < D) y.slice(3, r, D).copy_(x.slice(3, r, D));
  return y;
}

std::shared_ptr<const SchemeTables> RoPE::build(const PositionContext& ctx, DType dtype,
                                                Device device) const {
  const RopeScaling& sc = ctx.scaling;
  if (ctx.offset > 0 && sc.kind != ScalingKind::none)
    fail("--position-offset: only defined with --rope-scaling none (a scaling picks its factor ",
         "from the window's length, not its positions), but got --rope-scaling ",
         scaling_name(sc.kind));
  auto t = std::make_shared<RopeTables>();
  if (sc.kind == ScalingKind::dynamic) {
    Tensor w = dynamic_row_frequencies(d_, r_, theta_, sc.train_len, ctx.q_pos0, ctx.Tq, sc.factor);
    if (kept_ < r_ / 2) {  // p-RoPE: the removed pairs' columns turn at 0
      std::vector<double> v = w.to_vector();
      for (int64_t i = 0; i < ctx.Tq; ++i)
        for (int64_t p = kept_; p < d_ / 2; ++p) v[i * (d_ / 2) + p] = 0;
      w = Tensor::from_vector(v, w.shape(), DType::f64);
    }
    t->row_freqs = w.to(device);
    return t;
  }
  // the scaling picks s from the context's length L = Tk (rope_scaling.h)
  RopeFrequencies f = rope_frequencies(r_, theta_, sc, ctx.Tk);
  drop_pairs(f.freq, kept_);
  if (ctx.random()) {  // each sequence its own positions: (Bp, Tk, r/2)
    std::vector<int64_t> pos(ctx.positions.data.begin(), ctx.positions.data.end());
    rope_tables_at(f, pos, {ctx.rows(), ctx.Tk}, dtype, &t->cos, &t->sin);
  } else {
    rope_tables(f, ctx.offset, ctx.Tk, dtype, &t->cos, &t->sin);
  }
  t->cos = t->cos.to(device), t->sin = t->sin.to(device);
  return t;
}

AttentionTerms RoPE::attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                     const PositionContext& ctx) const {
  if (q.dim() != 4 || q.size(3) != d_ || q.size(1) != ctx.Tq || k.size(1) != ctx.Tk)
    fail("rope: expected q (B,Tq,H,D) and k (B,Tk,H,D) with D = ", d_, ", Tq = ", ctx.Tq,
         " and Tk = ", ctx.Tk, " (the context's), but got q ", shape_str(q.shape()), " and k ",
         shape_str(k.shape()));
  if (ctx.scaling.kind != ScalingKind::dynamic)
    return {.q = rotate(q, ctx, ctx.q_pos0), .k = rotate(k, ctx, 0)};
  if (!causal) fail("rope: dynamic scaling needs a causal model");
  const Tensor& w = tables_of<RopeTables>(ctx, "rope").row_freqs;
  if (layout_ == RopeLayout::interleaved) return {.q = q, .k = k, .row_freqs = w};
  return {.q = interleaved_order(q, r_), .k = interleaved_order(k, r_), .row_freqs = w};
}

// x: (B,T,H,D), its row t at the position of the tables' row row0 + t.
Tensor RoPE::rotate(const Tensor& x, const PositionContext& ctx, int64_t row0) const {
  if (x.dim() != 4 || x.size(3) != d_)
    fail("rope: expected x (B,T,H,D) with D = ", d_, ", but got ", shape_str(x.shape()));
  if (ctx.scaling.kind == ScalingKind::dynamic)
    fail(
        "rope: dynamic scaling rotates each query row with its own theta, inside attention "
        "(attention_terms), not as a separate rotation");
  const RopeTables& t = tables_of<RopeTables>(ctx, "rope");
  return rope_rotate_rows(x, t.cos, t.sin, row0, layout_);
}

Tensor rope_rotate_rows(const Tensor& x, const Tensor& cos, const Tensor& sin, int64_t row0,
                        RopeLayout layout) {
  if (cos.defined() && cos.dim() == 3) return rope_rotate(x, cos, sin, layout);  // whole window
  int64_t end = row0 + x.size(1);
  if (!cos.defined() || row0 < 0 || end > cos.size(0))
    fail("rope: expected a context built by RoPE with rows [", row0, ", ", end,
         ") of its tables, but they hold ", cos.defined() ? cos.size(0) : 0, " rows");
  return rope_rotate(x, cos.slice(0, row0, end), sin.slice(0, row0, end), layout);
}

Tensor rope_rotate_at(const RoPE& rope, const Tensor& x, int64_t pos0, int64_t L,
                      const RopeScaling& scaling) {
  PositionContext at;
  at.q_pos0 = pos0, at.Tq = x.size(1), at.Tk = L, at.scaling = scaling;
  return rope.rotate(x, rope.context(at, x.dtype(), x.device()), pos0);
}

}  // namespace poslab
