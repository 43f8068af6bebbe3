// guide_figures.cpp — `poslab figure` (guide_figures.h): the guide's figures from the formulas.
#include "train/study/guide_figures.h"

#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>

#include "data/atomic_file.h"
#include "posenc/alibi.h"
#include "posenc/rope_scaling.h"
#include "tensor/check.h"
#include "train/args.h"

namespace poslab {

std::string alibi_slope_text(double m) {
  const double k = -std::log2(m);
  char buf[32];
  if (k >= 0 && k < 31 && k == std::round(k))
    std::snprintf(buf, sizeof buf, "1/%lld", 1LL << static_cast<int>(k));
  else
    std::snprintf(buf, sizeof buf, "%.3g", m);
  return buf;
}

// ---------------------------------------------------------------- RoPE's long-range decay

double rope_decay_bound(int64_t D, double theta, double r) {
  const std::vector<double> w = rope_base_frequencies(D, theta);
  std::complex<double> S = 0;  // S_j = sum_{k<j} e^{i r w_k}, built up one pair at a time
  double sum = 0;
  for (double wk : w) {
    S += std::polar(1.0, r * wk);
    sum += std::abs(S);
  }
  return sum / (D / 2);
}

// Every distance up to about 100, then steps of 1% (rounded) up to 4096: on a log x axis the
// points lie about evenly.
static std::vector<double> decay_distances() {
  std::vector<double> d;
  for (double r = 1; r <= 4096; r = std::max(r + 1, std::round(r * 1.01))) d.push_back(r);
  return d;
}

LinePlot rope_decay_figure(const FigureOptions& o) {
  LinePlot p;
  p.title = "RoPE's long-range decay, D = " + std::to_string(o.head_dim);
  p.xlabel = "relative distance m - n";
  p.ylabel = "relative upper bound (1/(D/2)) sum_j |S_j|";
  p.log_x = true;
  for (const double theta : {10000.0, 10.0}) {
    Series s;
    s.label = theta == 10000 ? "theta = 10000" : "theta = 10";
    s.markers = false;
    s.x = decay_distances();
    for (double r : s.x) s.y.push_back(rope_decay_bound(o.head_dim, theta, r));
    p.series.push_back(s);
  }
  // Far away the phases r w_k look random: S_j is a walk of j unit steps, E|S_j| ~ sqrt(pi j)/2
  // (Rayleigh). With a few dozen pairs or less, the bound levels off there instead of falling to 0.
  double random_level = 0;
  for (int64_t j = 1; j <= o.head_dim / 2; ++j)
    random_level += std::sqrt(M_PI * j) / 2 / (o.head_dim / 2);
  char at0[96], noise[96];
  std::snprintf(at0, sizeof at0, "at distance 0: (D/2 + 1)/2 = %g", (o.head_dim / 2 + 1) / 2.0);
  std::snprintf(noise, sizeof noise, "random phases: about %.2f", random_level);
  Series level;
  level.label = noise, level.color = "#999999", level.dashed = true, level.markers = false;
  level.x = {1, 4096}, level.y = {random_level, random_level};
  p.series.push_back(level);
  p.notes = {at0, "S_j = sum over k < j of e^(i(m-n) theta_k)", "(RoFormer, section 3.4.3)"};
  return p;
}

// ---------------------------------------------------------------- RoPE scaling: wavelengths

std::vector<double> rope_wavelengths(int64_t D, double theta, ScalingKind kind, double s,
                                     int64_t T0) {
  if (kind == ScalingKind::dynamic)
    fail("rope_wavelengths: dynamic scaling changes s with each row; draw ntk at one s instead");
  RopeScaling sc;
  sc.kind = kind, sc.factor = s, sc.train_len = T0;
  const RopeFrequencies f = rope_frequencies(D, theta, sc, T0);
  std::vector<double> lambda;
  for (double w : f.freq) lambda.push_back(2 * M_PI / (w * f.pos_scale));
  return lambda;
}

// A horizontal grey line at y across pairs 0..n-1.
static Series level(const std::string& label, double y, int64_t n, bool dashed) {
  Series s;
  s.label = label, s.color = "#999999", s.dashed = dashed, s.markers = false;
  s.x = {0, static_cast<double>(n - 1)}, s.y = {y, y};
  return s;
}

LinePlot rope_scaling_figure(const FigureOptions& o) {
  const int64_t D = o.head_dim, T0 = o.train_len;
  char sub[96];
  std::snprintf(sub, sizeof sub, "D = %lld, T0 = %lld, s = %g", (long long)D, (long long)T0,
                o.factor);
  LinePlot p;
  p.title = std::string("wavelength per rotation pair, ") + sub;
  p.xlabel = "pair i (frequency theta^(-2i/D))", p.ylabel = "wavelength 2 pi / frequency";
  p.log_y = true;
  const std::pair<ScalingKind, const char*> kinds[] = {{ScalingKind::none, "plain RoPE"},
                                                       {ScalingKind::linear, "linear (p / s)"},
                                                       {ScalingKind::ntk, "ntk (theta')"},
                                                       {ScalingKind::yarn, "yarn (ramp)"}};
  for (const auto& [kind, label] : kinds) {
    Series s;
    s.label = label, s.dashed = kind == ScalingKind::linear;
    s.y = rope_wavelengths(D, o.theta, kind, o.factor, T0);
    for (size_t i = 0; i < s.y.size(); ++i) s.x.push_back(static_cast<double>(i));
    p.series.push_back(s);
  }
  p.series.push_back(level("T0 = " + std::to_string(T0), T0, D / 2, false));
  char stretched[64];
  std::snprintf(stretched, sizeof stretched, "s T0 = %g", o.factor * T0);
  p.series.push_back(level(stretched, o.factor * T0, D / 2, true));
  char base[96];
  std::snprintf(base, sizeof base, "ntk: theta' = %.0f = theta s^(D/(D-2))",
                ntk_theta(o.theta, D, o.factor));
  p.notes = {base, "yarn: pairs with fewer than 32 turns", "in T0 are (partly) interpolated"};
  return p;
}

// ---------------------------------------------------------------- ALiBi's recency prior

LinePlot alibi_bias_figure(const FigureOptions& o) {
  LinePlot p;
  p.title = "ALiBi: a fixed recency prior per head, H = " + std::to_string(o.heads);
  p.xlabel = "distance i - j", p.ylabel = "bias -m_h (i - j) added to the score";
  const std::vector<double> slopes = alibi_slopes(o.heads);
  for (size_t h = 0; h < slopes.size(); ++h) {
    Series s;
    char label[96];
    std::snprintf(label, sizeof label, "head %zu, m = %s: weight halves every %.3g", h,
                  alibi_slope_text(slopes[h]).c_str(), std::log(2.0) / slopes[h]);
    s.label = label, s.markers = false;
    for (int64_t d = 0; d <= 2 * o.train_len; ++d) {
      s.x.push_back(static_cast<double>(d));
      s.y.push_back(-slopes[h] * d);
    }
    p.series.push_back(s);
  }
  p.notes = {"softmax turns the bias into a factor e^(-m d)",
             "on the key's weight; m_h = 2^(-8(h+1)/H)"};
  return p;
}

// ---------------------------------------------------------------- the command

std::string render_guide_figure(const std::string& name, const FigureOptions& o) {
  if (name == "rope-decay") return render_line_plot(rope_decay_figure(o));
  if (name == "rope-scaling") return render_line_plot(rope_scaling_figure(o));
  if (name == "alibi-bias") return render_line_plot(alibi_bias_figure(o));
  fail("figure: unknown figure '", name, "'; valid: rope-decay, rope-scaling, alibi-bias");
}

int cmd_figure(int argc, char** argv) {
  std::string name;
  if (argc > 0 && argv[0][0] != '-') name = argv[0], --argc, ++argv;
  Args a("figure NAME",
         {{"out", "FILE  the SVG to write (default NAME.svg)"},
          {"head-dim", "D  rotated dims of a head: rope-decay, rope-scaling (default 16)"},
          {"train-len", "T0  training length: rope-scaling, alibi-bias (default 64)"},
          {"factor", "S  scaling factor s: rope-scaling (default 4)"},
          {"theta", "X  RoPE base: rope-scaling (default 10000)"},
          {"heads", "H  heads: alibi-bias (default 4)"}},
         argc, argv);
  if (a.help()) {
    std::printf("%sNAME: rope-decay, rope-scaling, alibi-bias (docs/cli.md)\n", a.usage().c_str());
    return 0;
  }
  if (name.empty()) fail("figure: expected a NAME: rope-decay, rope-scaling or alibi-bias");
  FigureOptions o;
  o.head_dim = a.integer("head-dim", o.head_dim, 4, 4096);
  if (o.head_dim % 2) fail("--head-dim: expected an even D, but got ", o.head_dim);
  o.train_len = a.integer("train-len", o.train_len, 1, 1 << 20);
  o.factor = a.number("factor", o.factor, 1, 1e6);
  o.theta = a.number("theta", o.theta, 1.0001, 1e12);
  o.heads = a.integer("heads", o.heads, 1, 64);
  const std::string svg = render_guide_figure(name, o);  // checks the name before writing
  const std::string out = a.str("out", name + ".svg");
  const std::filesystem::path dir = std::filesystem::path(out).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  write_file_atomic(out, svg);
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

}  // namespace poslab
