// guide_figures_v5.cpp — `poslab figure` for the v5 schemes and scalings (guide_figures_v5.h).
// The symbols are the guide's: Δ = m - n the distance, θ_i pair i's frequency, κ and η KERPLE's
// strength and bend (posenc/kerple.h's p and a), ζ_i xPos's per-pair base.
#include "cli/guide_figures_v5.h"

#include <cmath>
#include <cstdio>

#include "plot/plot_svg.h"
#include "posenc/rope.h"
#include "posenc/rope_scaling.h"
#include "posenc/xpos.h"

namespace poslab {

static std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

// Distances 0 .. max in steps of `step`.
static std::vector<double> distances(double max, double step) {
  std::vector<double> d;
  for (double n = 0; n <= max; n += step) d.push_back(n);
  return d;
}

// ---------------------------------------------------------------- KERPLE against ALiBi

// Three heads' (κ, η), whose ALiBi slopes κ η are three of ALiBi's four at H = 4: 1/4, 1/16, 1/256.
struct KerpleSetting {
  double kappa, eta;
  const char *label, *label_zh;  // "κ = 2, η = 1/8"
  const char* slope;             // κ η: "1/4"
};
static const KerpleSetting kKerple[] = {
    {2.0, 1.0 / 8, "κ = 2, η = 1/8", "κ = 2，η = 1/8", "1/4"},
    {1.0, 1.0 / 16, "κ = 1, η = 1/16", "κ = 1，η = 1/16", "1/16"},
    {0.5, 1.0 / 128, "κ = 1/2, η = 1/128", "κ = 1/2，η = 1/128", "1/256"}};
// ALiBi's lines fall without end; below this they leave the plot, so that the curves stay
// readable (at Δ = 512 the steepest line is at -128, the log at -8.3).
constexpr double kKerpleFloor = -10;

LinePlot kerple_kernel_figure(Lang l) {
  LinePlot p;
  p.title = in_lang(l, "KERPLE's log kernel and ALiBi's line", "KERPLE 的对数核和 ALiBi 的直线");
  p.xlabel = in_lang(l, "distance Δ = m - n", "距离 Δ = m − n");
  p.ylabel = in_lang(l, "bias added to the score", "加到分数上的偏置");
  const char* colors[] = {"#0072B2", "#D55E00", "#009E73"};
  for (int k = 0; k < 3; ++k) {
    const KerpleSetting& s = kKerple[k];
    Series log_s, line;
    log_s.label = std::string("KERPLE ") + in_lang(l, s.label, s.label_zh);
    line.label = in_lang(l, "ALiBi, slope κ η = ", "ALiBi，斜率 κ·η = ") + std::string(s.slope);
    log_s.color = line.color = colors[k];
    line.dashed = true;
    log_s.markers = line.markers = false;
    for (double n : distances(512, 2)) {
      log_s.x.push_back(n), log_s.y.push_back(-s.kappa * std::log1p(s.eta * n));
      if (-s.kappa * s.eta * n >= kKerpleFloor)
        line.x.push_back(n), line.y.push_back(-s.kappa * s.eta * n);
    }
    p.series.push_back(log_s), p.series.push_back(line);
  }
  p.notes = {
      in_lang(l, "-κ ln(1 + η Δ) starts on the line -κ η Δ", "−κ·ln(1 + η·Δ) 从直线 −κ·η·Δ 出发，"),
      in_lang(l, "and bends away once η Δ > 1", "η·Δ 过了 1 就弯开"),
      in_lang(l, "the lines go on below -10", "直线在 −10 以下不再画出")};
  return p;
}

static std::string kerple_table() {
  std::string t = "bias at distance Δ: KERPLE -κ ln(1 + η Δ) beside ALiBi's line -κ η Δ\n";
  const char* names[] = {"A", "B", "C"};
  for (int k = 0; k < 3; ++k) t += std::string(k ? "; " : "") + names[k] + ": " + kKerple[k].label;
  t += "\n     Δ";
  for (const char* n : names) t += std::string("  KERPLE ") + n + "   ALiBi " + n;
  t += "\n";
  for (double n : {1.0, 8.0, 64.0, 256.0, 1024.0, 4096.0}) {
    t += fmt("%6g", n);
    for (const KerpleSetting& s : kKerple)
      t += fmt(" %9.3f %9.3f", -s.kappa * std::log1p(s.eta * n), -s.kappa * s.eta * n);
    t += "\n";
  }
  return t;
}

// ---------------------------------------------------------------- p-RoPE and --rope-fraction

// The wavelength 2π/θ_i of each pair, or NaN where it never turns.
static std::vector<double> wavelengths(const std::vector<double>& w) {
  std::vector<double> out;
  for (double f : w) out.push_back(f > 0 ? 2 * M_PI / f : std::nan(""));
  return out;
}

struct PropePairs {
  std::vector<double> plain, kept, fraction;  // wavelengths; kept, fraction: NaN = never turns
  int64_t K, r;                               // pairs p-RoPE keeps; dims the fraction rotates
};

static PropePairs prope_pairs(const FigureOptions& o) {
  const int64_t D = o.head_dim;
  PropePairs pp;
  pp.K = rope_kept_pairs(D, 7.0 / 16);
  pp.r = rope_rotated_dims(D, 7.0 / 16);
  std::vector<double> w = rope_base_frequencies(D, o.theta), kept = w;
  for (int64_t i = pp.K; i < D / 2; ++i) kept[i] = 0;
  std::vector<double> frac = rope_base_frequencies(pp.r, o.theta);
  frac.resize(D / 2, 0);  // the dims past r are never rotated
  pp.plain = wavelengths(w), pp.kept = wavelengths(kept), pp.fraction = wavelengths(frac);
  return pp;
}

LinePlot prope_pairs_figure(const FigureOptions& o) {
  const int64_t D = o.head_dim, half = D / 2;
  const PropePairs pp = prope_pairs(o);
  const Lang l = o.lang;
  LinePlot p;
  p.title = fmt(in_lang(l, "Which pairs turn at 7/16, D = %g: p-RoPE and --rope-fraction",
                        "比例 7/16 时哪些对在转，D = %g：p-RoPE 和 --rope-fraction"),
                double(D));
  p.xlabel = in_lang(l, "pair i (0 = fastest)", "第 i 对（0 最快）");
  p.ylabel = in_lang(l, "wavelength 2 pi / theta_i (positions)", "波长 2π/θ_i（位置数）");
  p.log_y = true;
  std::vector<double> idx;
  for (int64_t i = 0; i < half; ++i) idx.push_back(double(i));
  std::vector<double> fidx(idx.begin(), idx.begin() + pp.r / 2);
  std::vector<double> fwl(pp.fraction.begin(), pp.fraction.begin() + pp.r / 2);
  Series a{in_lang(l, "RoPE: every pair", "RoPE：每一对都转"), idx, pp.plain, "#999999"};
  Series b{in_lang(l, "--rope-proportion 7/16: pairs from K on never turn",
                   "--rope-proportion 7/16：从第 K 对起不转"),
           idx, pp.kept, "#0072B2"};
  Series c{in_lang(l, "--rope-fraction 7/16: fewer dims, frequencies spread",
                   "--rope-fraction 7/16：转的维度少，频率重新铺开"),
           fidx, fwl, "#D55E00"};
  Series t0{fmt("T0 = %g", double(o.train_len)),
            {0, double(half - 1)},
            {double(o.train_len), double(o.train_len)},
            "#000000"};
  t0.dashed = true, t0.markers = false;
  p.series = {a, b, c, t0};
  p.notes = {fmt(in_lang(l, "proportion: K = %g pairs keep their frequency,",
                         "p-RoPE：K = %g 对保留原频率，"),
                 double(pp.K)),
             fmt(in_lang(l, "the other %g never turn", "其余 %g 对不转"), double(half - pp.K)),
             fmt(in_lang(l, "fraction: %g dims turn, the slowest pair",
                         "--rope-fraction：转 %g 维，最慢的一对"),
                 double(pp.r)),
             fmt(in_lang(l, "has a wavelength of %.0f", "波长是 %.0f"), pp.fraction[pp.r / 2 - 1])};
  return p;
}

static std::string prope_table(const FigureOptions& o) {
  const PropePairs pp = prope_pairs(o);
  std::string t = fmt("D = %g, theta %g, T0 = %g: the wavelength 2 pi / theta_i of each pair, ",
                      double(o.head_dim), o.theta, double(o.train_len)) +
                  "at 7/16\n pair       RoPE  proportion   fraction\n";
  for (size_t i = 0; i < pp.plain.size(); ++i) {
    std::string kept = std::isnan(pp.kept[i]) ? "      never" : fmt("%11.1f", pp.kept[i]);
    std::string frac = std::isnan(pp.fraction[i]) ? "      never" : fmt("%11.1f", pp.fraction[i]);
    t += fmt("%5g %10.1f ", double(i), pp.plain[i]) + kept + frac + "\n";
  }
  return t;
}

// ---------------------------------------------------------------- xPos's decay

LinePlot xpos_decay_figure(const FigureOptions& o) {
  const int64_t D = o.head_dim;
  const std::vector<double> zeta = xpos_zeta(D);
  const Lang l = o.lang;
  LinePlot p;
  p.title = fmt(in_lang(l, "xPos: the factor on pair i's share of q.k, D = %g, scale base 512",
                        "xPos：q·k 里第 i 对那一项乘的因子，D = %g，--xpos-scale-base 512"),
                double(D));
  p.xlabel = in_lang(l, "distance Δ = m - n", "距离 Δ = m − n");
  p.ylabel = in_lang(l, "zeta_i^(Δ/512)", "ζ_i^(Δ/512)");
  for (int64_t i : {int64_t(0), D / 4, D / 2 - 1}) {
    Series s;
    s.label = fmt(in_lang(l, "pair %g: zeta = %.3f", "第 %g 对：ζ_i = %.3f"), double(i), zeta[i]);
    s.markers = false;
    for (double n : distances(1024, 4)) s.x.push_back(n), s.y.push_back(std::pow(zeta[i], n / 512));
    p.series.push_back(s);
  }
  Series t0{fmt("T0 = %g", double(o.train_len)),
            {double(o.train_len), double(o.train_len)},
            {0, 1},
            "#000000"};
  t0.dashed = true, t0.markers = false;
  p.series.push_back(t0);
  p.notes = {in_lang(l, "zeta_i = (2i/D + 0.4) / 1.4", "ζ_i = (2i/D + 0.4) / 1.4"),
             in_lang(l, "the fast pairs are damped most", "快的对衰减得最多")};
  return p;
}

static std::string xpos_table(const FigureOptions& o) {
  const int64_t D = o.head_dim;
  const std::vector<double> zeta = xpos_zeta(D);
  std::string t =
      fmt("D = %g, scale base 512: zeta_i^(Δ/512), the factor on pair i's share of "
          "q.k\n",
          double(D));
  t += " pair   zeta_i   Δ = 64   Δ = 256  Δ = 1024  Δ = 4096\n";
  for (int64_t i : {int64_t(0), D / 4, D / 2 - 1}) {
    t += fmt("%5g %8.3f", double(i), zeta[i]);
    for (double n : {64.0, 256.0, 1024.0, 4096.0}) t += fmt(" %9.3g", std::pow(zeta[i], n / 512));
    t += "\n";
  }
  return t;
}

// ---------------------------------------------------------------- YaRN's and Llama 3's ramps

// Each pair's share of its original frequency kept by frequencies w' at factor s:
// (w' - w/s) / (w - w/s): 1 unchanged, 0 divided by s.
static std::vector<double> kept_share(const std::vector<double>& w, const std::vector<double>& ws,
                                      double s) {
  std::vector<double> k;
  for (size_t i = 0; i < w.size(); ++i) k.push_back((ws[i] - w[i] / s) / (w[i] - w[i] / s));
  return k;
}

struct Ramps {
  std::vector<double> turns, deployed, untruncated, paper, llama3;
};

static Ramps ramps(const FigureOptions& o) {
  const int64_t D = o.head_dim, T0 = o.train_len;
  const std::vector<double> w = rope_base_frequencies(D, o.theta);
  YarnRamp loose;
  loose.truncate = false;
  Ramps r;
  for (double f : w) r.turns.push_back(T0 * f / (2 * M_PI));
  r.deployed = yarn_keep(D, o.theta, T0);
  r.untruncated = yarn_keep(D, o.theta, T0, loose);
  r.paper = yarn_keep_paper(D, o.theta, T0);
  r.llama3 = kept_share(w, llama3_frequencies(D, o.theta, o.factor, T0, 1, 4), o.factor);
  return r;
}

LinePlot rope_ramps_figure(const FigureOptions& o) {
  const int64_t D = o.head_dim, T0 = o.train_len;
  const Ramps r = ramps(o);
  const Lang l = o.lang;
  LinePlot p;
  p.title = fmt(in_lang(l, "Which pairs a scaling stretches: D = %g, T0 = %g, s = %g",
                        "缩放拉长了哪些对：D = %g，T0 = %g，s = %g"),
                double(D), double(T0), o.factor);
  p.xlabel = in_lang(l, "pair i (0 = fastest)", "第 i 对（0 最快）");
  p.ylabel = in_lang(l, "share of the original frequency kept", "保留原频率的份额 γ_i");
  std::vector<double> idx;
  for (int64_t i = 0; i < D / 2; ++i) idx.push_back(double(i));
  p.series = {
      {in_lang(l, "YaRN as deployed (truncate)", "YaRN 部署版（两端取整）"), idx, r.deployed,
       "#0072B2"},
      {in_lang(l, "YaRN truncate = false (gpt-oss)", "YaRN truncate = false（gpt-oss）"), idx,
       r.untruncated, "#56B4E9"},
      {in_lang(l, "YaRN paper (linear in turns)", "YaRN 论文版（随圈数线性变化）"), idx, r.paper,
       "#009E73"},
      {in_lang(l, "Llama 3 (lff 1, hff 4)", "Llama 3（lff 1，hff 4）"), idx, r.llama3, "#D55E00"}};
  p.series[1].dashed = true;
  p.notes = {in_lang(l, "1: the pair keeps its frequency", "1：这一对保持原频率"),
             in_lang(l, "0: its frequency is divided by s", "0：频率除以 s"),
             in_lang(l, "Llama 3: linear in turns, from 1 to 4",
                     "Llama 3：在 1 到 4 圈之间随圈数线性变化")};
  return p;
}

static std::string ramps_table(const FigureOptions& o) {
  const Ramps r = ramps(o);
  std::string t = fmt("D = %g, T0 = %g, s = %g: the share of pair i's frequency kept\n",
                      double(o.head_dim), double(o.train_len), o.factor);
  t += " pair       r_i  deployed  untruncated    paper   llama3\n";
  for (size_t i = 0; i < r.turns.size(); ++i)
    t += fmt("%5g %9.3f %9.3f", double(i), r.turns[i], r.deployed[i]) +
         fmt(" %12.3f %8.3f %8.3f\n", r.untruncated[i], r.paper[i], r.llama3[i]);
  return t;
}

std::optional<GuideFigure> make_v5_figure(const std::string& name, const FigureOptions& o) {
  if (name == "kerple-kernel")
    return GuideFigure{render_readable(kerple_kernel_figure(o.lang)), kerple_table()};
  if (name == "prope-pairs")
    return GuideFigure{render_readable(prope_pairs_figure(o)), prope_table(o)};
  if (name == "xpos-decay")
    return GuideFigure{render_readable(xpos_decay_figure(o)), xpos_table(o)};
  if (name == "rope-ramps")
    return GuideFigure{render_readable(rope_ramps_figure(o)), ramps_table(o)};
  return std::nullopt;
}

}  // namespace poslab
