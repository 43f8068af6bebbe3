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

// Distances 0 .. 512 in steps of 4.
static std::vector<double> distances() {
  std::vector<double> d;
  for (double n = 0; n <= 512; n += 4) d.push_back(n);
  return d;
}

LinePlot kerple_kernel_figure() {
  LinePlot p;
  p.title = "KERPLE's log kernel and ALiBi's line";
  p.xlabel = "distance n = i - j";
  p.ylabel = "bias added to the score";
  const char* colors[] = {"#0072B2", "#D55E00", "#009E73"};
  const double settings[][2] = {{1.0, 0.5}, {2.0, 0.05}, {0.5, 0.01}};  // (p, a)
  for (int k = 0; k < 3; ++k) {
    const double pk = settings[k][0], ak = settings[k][1];
    Series log_s, line;
    log_s.label = fmt("KERPLE p = %g, a = %g", pk, ak);
    line.label = fmt("ALiBi slope p a = %g", pk * ak);
    log_s.color = line.color = colors[k];
    line.dashed = true;
    log_s.markers = line.markers = false;
    for (double n : distances()) {
      log_s.x.push_back(n), log_s.y.push_back(-pk * std::log1p(ak * n));
      line.x.push_back(n), line.y.push_back(-pk * ak * n);
    }
    p.series.push_back(log_s), p.series.push_back(line);
  }
  p.y_max = 0.5;
  p.notes = {"-p ln(1 + a n) starts on the line -p a n", "and bends away once a n > 1"};
  return p;
}

// The wavelength of each pair under plain RoPE (frequencies w), or NaN where it never turns.
static std::vector<double> wavelengths(const std::vector<double>& w) {
  std::vector<double> out;
  for (double f : w) out.push_back(f > 0 ? 2 * M_PI / f : std::nan(""));
  return out;
}

LinePlot prope_pairs_figure(const FigureOptions& o) {
  const int64_t D = o.head_dim, half = D / 2;
  LinePlot p;
  p.title = fmt("Which pairs turn: p-RoPE and --rope-fraction at 7/16, D = %g", double(D));
  p.xlabel = "pair i (0 = fastest)";
  p.ylabel = "wavelength 2 pi / w_i (positions)";
  p.log_y = true;
  std::vector<double> idx;
  for (int64_t i = 0; i < half; ++i) idx.push_back(double(i));
  std::vector<double> plain = rope_base_frequencies(D, o.theta), kept = plain;
  for (int64_t i = rope_kept_pairs(D, 7.0 / 16); i < half; ++i) kept[i] = 0;
  const int64_t r = rope_rotated_dims(D, 7.0 / 16);
  std::vector<double> frac = rope_base_frequencies(r, o.theta);
  Series a{"RoPE: every pair", idx, wavelengths(plain), "#999999"};
  Series b{"p-RoPE p = 7/16: pairs past K never turn", idx, wavelengths(kept), "#0072B2"};
  std::vector<double> fidx(idx.begin(), idx.begin() + r / 2);
  Series c{"--rope-fraction 7/16: r/2 pairs, frequencies spread", fidx, wavelengths(frac),
           "#D55E00"};
  Series t0{"T0", {0, double(half - 1)}, {double(o.train_len), double(o.train_len)}, "#000000"};
  t0.dashed = true, t0.markers = false;
  p.series = {a, b, c, t0};
  p.notes = {
      fmt("p-RoPE: K = floor(p D/2) = %g pairs kept", double(rope_kept_pairs(D, 7.0 / 16))),
      fmt("fraction: r = %g dims, slowest wavelength %.0f", double(r), 2 * M_PI / frac.back())};
  return p;
}

LinePlot xpos_decay_figure(const FigureOptions& o) {
  const int64_t D = o.head_dim;
  const double B = 512;
  const std::vector<double> zeta = xpos_zeta(D);
  LinePlot p;
  p.title = fmt("xPos: the decay of pair i's share of q.k, D = %g, B = %g", double(D), B);
  p.xlabel = "distance n = i - j";
  p.ylabel = "zeta_i^(n/B)";
  for (int64_t i : {int64_t(0), D / 4, D / 2 - 1}) {
    Series s;
    s.label = fmt("pair %g: zeta = %.3f", double(i), zeta[i]);
    s.markers = false;
    for (double n : distances()) s.x.push_back(n), s.y.push_back(std::pow(zeta[i], n / B));
    p.series.push_back(s);
  }
  Series t0{"T0", {double(o.train_len), double(o.train_len)}, {0, 1}, "#000000"};
  t0.dashed = true, t0.markers = false;
  p.series.push_back(t0);
  p.notes = {"zeta_i = (2i/D + 0.4) / 1.4", "fast pairs are damped most"};
  return p;
}

// Each pair's share of its original frequency kept by frequencies w' at factor s:
// (w' - w/s) / (w - w/s): 1 unchanged, 0 divided by s.
static std::vector<double> kept_share(const std::vector<double>& w, const std::vector<double>& ws,
                                      double s) {
  std::vector<double> k;
  for (size_t i = 0; i < w.size(); ++i) k.push_back((ws[i] - w[i] / s) / (w[i] - w[i] / s));
  return k;
}

LinePlot rope_ramps_figure(const FigureOptions& o) {
  const int64_t D = o.head_dim, T0 = o.train_len;
  const double s = o.factor;
  LinePlot p;
  p.title =
      fmt("Which pairs a scaling stretches: D = %g, T0 = %g, s = %g", double(D), double(T0), s);
  p.xlabel = "pair i (0 = fastest)";
  p.ylabel = "share of the original frequency kept";
  std::vector<double> idx;
  for (int64_t i = 0; i < D / 2; ++i) idx.push_back(double(i));
  const std::vector<double> w = rope_base_frequencies(D, o.theta);
  YarnRamp loose;
  loose.truncate = false;
  p.series = {{"YaRN as deployed (truncate)", idx, yarn_keep(D, o.theta, T0), "#0072B2"},
              {"YaRN truncate = false (gpt-oss)", idx, yarn_keep(D, o.theta, T0, loose), "#56B4E9"},
              {"YaRN paper (linear in turns)", idx, yarn_keep_paper(D, o.theta, T0), "#009E73"},
              {"Llama 3 (lff 1, hff 4)", idx,
               kept_share(w, llama3_frequencies(D, o.theta, s, T0, 1, 4), s), "#D55E00"}};
  p.series[1].dashed = true;
  p.notes = {"1: the pair keeps its frequency", "0: its frequency is divided by s"};
  return p;
}

static std::string pair_table(const LinePlot& p) {
  std::string t;
  for (const Series& s : p.series) {
    t += s.label + ":";
    for (size_t i = 0; i < s.y.size(); ++i) t += fmt(" %.4g", s.y[i]);
    t += "\n";
  }
  return t;
}

std::optional<GuideFigure> make_v5_figure(const std::string& name, const FigureOptions& o) {
  LinePlot p;
  if (name == "kerple-kernel")
    p = kerple_kernel_figure();
  else if (name == "prope-pairs")
    p = prope_pairs_figure(o);
  else if (name == "xpos-decay")
    p = xpos_decay_figure(o);
  else if (name == "rope-ramps")
    p = rope_ramps_figure(o);
  else
    return std::nullopt;
  return GuideFigure{render_line_plot(p),
                     name == "kerple-kernel" || name == "xpos-decay" ? "" : pair_table(p)};
}

}  // namespace poslab
