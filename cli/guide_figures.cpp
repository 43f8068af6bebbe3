// guide_figures.cpp — `poslab figure` (guide_figures.h): the guide's figures from the formulas.
#include "cli/guide_figures.h"

#include "cli/guide_figures_v5.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>

#include "data/atomic_file.h"
#include "plot/plot_svg.h"
#include "posenc/alibi.h"
#include "posenc/rope_scaling.h"
#include "study/ngram.h"
#include "tensor/check.h"
#include "train/args.h"

namespace poslab {

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

// The Chinese figures write the guide's symbols (b the base, U_i the partial sums, Δ = m - n);
// the English ones the names the code and the paper use (theta, S_j).
LinePlot rope_decay_figure(const FigureOptions& o) {
  const Lang l = o.lang;
  LinePlot p;
  p.title = in_lang(l, "RoPE's long-range decay, D = ", "RoPE 的远程衰减，D = ") +
            std::to_string(o.head_dim);
  p.xlabel = in_lang(l, "relative distance m - n", "相对距离 Δ = m − n");
  p.ylabel =
      in_lang(l, "relative upper bound (1/(D/2)) sum_j |S_j|", "相对上界 (1/(D/2)) Σ_i |U_i|");
  p.log_x = true;
  for (const double theta : {10000.0, 10.0}) {
    Series s;
    s.label = in_lang(l, "theta = ", "b = ") + std::string(theta == 10000 ? "10000" : "10");
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
  std::snprintf(at0, sizeof at0,
                in_lang(l, "at distance 0: (D/2 + 1)/2 = %g", "Δ = 0 处：(D/2 + 1)/2 = %g"),
                (o.head_dim / 2 + 1) / 2.0);
  std::snprintf(noise, sizeof noise, in_lang(l, "random phases: about %.2f", "相位随机时约为 %.2f"),
                random_level);
  Series level;
  level.label = noise, level.color = "#999999", level.dashed = true, level.markers = false;
  level.x = {1, 4096}, level.y = {random_level, random_level};
  p.series.push_back(level);
  p.notes = {at0,
             in_lang(l, "S_j = sum over k < j of e^(i(m-n) theta_k)", "U_i = Σ_{l<i} e^(jΔθ_l)"),
             in_lang(l, "(RoFormer, section 3.4.3)", "见 RoFormer 论文第 3.4.3 节")};
  return p;
}

// ---------------------------------------------------------------- RoPE scaling: wavelengths

// Each pair's frequency per position under `kind` at factor s: w_i' p_s (p_s: the position scale,
// 1/s for linear). `who` names the caller in the error for dynamic, whose s changes per row.
static std::vector<double> scaled_frequencies(int64_t D, double theta, ScalingKind kind, double s,
                                              int64_t T0, const char* who) {
  if (kind == ScalingKind::dynamic)
    fail(who, ": dynamic scaling changes s with each row; draw ntk at one s instead");
  RopeScaling sc;
  sc.kind = kind, sc.factor = s, sc.train_len = T0;
  const RopeFrequencies f = rope_frequencies(D, theta, sc, T0);
  std::vector<double> w;
  for (double fi : f.freq) w.push_back(fi * f.pos_scale);
  return w;
}

std::vector<double> rope_wavelengths(int64_t D, double theta, ScalingKind kind, double s,
                                     int64_t T0) {
  std::vector<double> lambda = scaled_frequencies(D, theta, kind, s, T0, "rope_wavelengths");
  for (double& w : lambda) w = 2 * M_PI / w;
  return lambda;
}

std::vector<double> rope_angle_overshoot(int64_t D, double theta, ScalingKind kind, double s,
                                         int64_t T0) {
  std::vector<double> ratio = scaled_frequencies(D, theta, kind, s, T0, "rope_angle_overshoot");
  const std::vector<double> w = rope_base_frequencies(D, theta);
  for (size_t i = 0; i < w.size(); ++i) ratio[i] *= s / w[i];
  return ratio;
}

// A horizontal grey line at y across pairs 0..n-1.
static Series level(const std::string& label, double y, int64_t n, bool dashed) {
  Series s;
  s.label = label, s.color = "#999999", s.dashed = dashed, s.markers = false;
  s.x = {0, static_cast<double>(n - 1)}, s.y = {y, y};
  return s;
}

static std::string dims_text(const FigureOptions& o) {
  char sub[96];
  std::snprintf(sub, sizeof sub,
                in_lang(o.lang, "D = %lld, T0 = %lld, s = %g", "D = %lld，T0 = %lld，s = %g"),
                (long long)o.head_dim, (long long)o.train_len, o.factor);
  return sub;
}

// The turns r_i = T0 w_i / (2 pi) of each pair over the training length.
static std::vector<double> turns_in_train_len(const FigureOptions& o) {
  std::vector<double> r = rope_base_frequencies(o.head_dim, o.theta);
  for (double& w : r) w *= o.train_len / (2 * M_PI);
  return r;
}

// The scalings drawn per pair (dynamic is ntk at one s: its rows differ), each in one colour in
// both panels (the palette's first four).
struct DrawnScaling {
  ScalingKind kind;
  const char *label, *label_zh, *color;
};
static const DrawnScaling kDrawnScalings[] = {
    {ScalingKind::none, "plain RoPE", "不缩放", "#0072B2"},
    {ScalingKind::linear, "linear (p / s)", "linear（p / s）", "#D55E00"},
    {ScalingKind::ntk, "ntk (theta')", "ntk（b′）", "#009E73"},
    {ScalingKind::yarn, "yarn (ramp)", "yarn（斜坡）", "#CC79A7"}};

static Series pair_series(const char* label, std::vector<double> y, bool dashed,
                          const char* color = "") {
  Series s;
  s.label = label, s.dashed = dashed, s.color = color, s.y = std::move(y);
  for (size_t i = 0; i < s.y.size(); ++i) s.x.push_back(static_cast<double>(i));
  return s;
}

// One series per drawn scaling (plain RoPE too if with_plain) of values(D, theta, kind, s, T0)
// against the pair index, on a log y axis.
using PerPairValues = std::vector<double> (*)(int64_t, double, ScalingKind, double, int64_t);
static LinePlot per_pair_plot(const std::string& title, const char* ylabel, const FigureOptions& o,
                              PerPairValues values, bool with_plain) {
  LinePlot p;
  p.title = title + in_lang(o.lang, ", ", "，") + dims_text(o);
  p.xlabel = in_lang(o.lang, "pair i (frequency theta^(-2i/D))", "第 i 对（频率 θ_i = b^(−2i/D)）");
  p.ylabel = ylabel;
  p.log_y = true;
  for (const DrawnScaling& k : kDrawnScalings)
    if (with_plain || k.kind != ScalingKind::none)
      p.series.push_back(pair_series(in_lang(o.lang, k.label, k.label_zh),
                                     values(o.head_dim, o.theta, k.kind, o.factor, o.train_len),
                                     k.kind == ScalingKind::linear, k.color));
  return p;
}

LinePlot rope_scaling_figure(const FigureOptions& o) {
  const int64_t D = o.head_dim, T0 = o.train_len;
  const Lang l = o.lang;
  LinePlot p = per_pair_plot(in_lang(l, "wavelength per rotation pair", "每一对的波长"),
                             in_lang(l, "wavelength 2 pi / frequency", "波长 2π / 频率"), o,
                             rope_wavelengths, true);
  p.series.push_back(level("T0 = " + std::to_string(T0), T0, D / 2, false));
  char stretched[64];
  std::snprintf(stretched, sizeof stretched, in_lang(l, "s T0 = %g", "s·T0 = %g"), o.factor * T0);
  p.series.push_back(level(stretched, o.factor * T0, D / 2, true));
  char base[96];
  std::snprintf(
      base, sizeof base,
      in_lang(l, "ntk: theta' = %.0f = theta s^(D/(D-2))", "ntk：b′ = %.0f = b·s^(D/(D−2))"),
      ntk_theta(o.theta, D, o.factor));
  p.notes = {base,
             in_lang(l, "yarn: pairs up to floor(d(32)) kept,",
                     "yarn：直到第 floor(d(32)) 对保持原频率，"),
             in_lang(l, "from ceil(d(1)) on divided by s", "从第 ceil(d(1)) 对起除以 s")};
  return p;
}

LinePlot rope_overshoot_figure(const FigureOptions& o) {
  const int64_t D = o.head_dim, T0 = o.train_len;
  const Lang l = o.lang;
  LinePlot p = per_pair_plot(in_lang(l, "angle overshoot per pair", "每一对的角度超出倍数"),
                             in_lang(l, "largest angle over s T0 / over T0 in training",
                                     "最大角度之比：s·T0 内 / 训练时 T0 内"),
                             o, rope_angle_overshoot, false);
  // The pair index where r_i = 1: to its left every angle was seen in training (a full turn).
  const double one_turn = D * std::log(T0 / (2 * M_PI)) / (2 * std::log(o.theta));
  if (one_turn > 0 && one_turn < D / 2 - 1) {
    Series turn;
    turn.label = in_lang(l, "r_i = 1: right of it, less than one turn in T0",
                         "r_i = 1：右边的对在 T0 内转不满一圈");
    turn.color = "#999999", turn.markers = false;
    turn.x = {one_turn, one_turn}, turn.y = {1, o.factor};
    p.series.push_back(turn);
  }
  p.notes = {in_lang(l, "ntk: s^(1 - 2i/(D-2))", "ntk：s^(1 − 2i/(D−2))"),
             in_lang(l, "linear: 1", "linear：1"),
             in_lang(l, "yarn: s keep_i + 1 - keep_i", "yarn：s·γ_i + 1 − γ_i")};
  return p;
}

// The number in attribute `name` of an SVG's root element (its width or height as rendered,
// which the legend may have made larger than the plot asked for).
static double svg_size(const std::string& svg, const std::string& name) {
  const size_t open = svg.find("<svg"), at = svg.find(" " + name + "=\"", open);
  if (open == std::string::npos || at == std::string::npos)
    fail("figure: no ", name, " on the SVG's root element");
  return std::stod(svg.substr(at + name.size() + 3));
}

// Two SVGs one above the other in one document, each at its own size.
static std::string stack_svgs(const std::string& top, const std::string& bottom) {
  auto body = [](const std::string& svg, double y) {
    const size_t open = svg.find("<svg");
    char at[48];
    std::snprintf(at, sizeof at, "<svg x=\"0\" y=\"%.2f\"", y);
    return at + svg.substr(open + 4);
  };
  const double width = std::max(svg_size(top, "width"), svg_size(bottom, "width"));
  const double top_height = svg_size(top, "height");
  return svg::svg_open(width, top_height + svg_size(bottom, "height")) + body(top, 0) +
         body(bottom, top_height) + "</svg>\n";
}

// How much wider than kReadableWidth the plot is drawn (<= 0: it fits).
static double width_over(const LinePlot& p) {
  return svg_size(render_line_plot(p), "width") - kReadableWidth;
}

// The legend and notes keep their width: the plot area gives up what is over.
std::string render_readable(LinePlot p) {
  p.width -= std::max(0.0, width_over(p));
  return render_line_plot(p);
}

// Two plots one above the other, both narrowed by as much as the wider needs, so that their
// plot areas (the same pairs on x) stay aligned.
static std::string stack_readable(LinePlot top, LinePlot bottom) {
  const double over = std::max({0.0, width_over(top), width_over(bottom)});
  top.width -= over, bottom.width -= over;
  return stack_svgs(render_line_plot(top), render_line_plot(bottom));
}

LinePlot yarn_ramp_figure(const FigureOptions& o) {
  const int64_t D = o.head_dim, T0 = o.train_len;
  const Lang l = o.lang;
  char sub[96];
  std::snprintf(sub, sizeof sub, in_lang(l, "D = %lld, T0 = %lld", "D = %lld，T0 = %lld"),
                (long long)D, (long long)T0);
  LinePlot p;
  p.title =
      in_lang(l, "YaRN: share of each pair's frequency kept, ", "YaRN：每一对保留原频率的份额，") +
      std::string(sub);
  p.xlabel = in_lang(l, "pair i", "第 i 对");
  p.ylabel =
      in_lang(l, "keep_i (1: as trained, 0: divided by s)", "γ_i（1：训练时的频率，0：除以 s）");
  p.series.push_back(pair_series(in_lang(l, "deployed (code, HF, vLLM): linear in i",
                                         "部署版（参考代码、HF、vLLM）：随 i 线性变化"),
                                 yarn_keep(D, o.theta, T0), false));
  p.series.push_back(pair_series(in_lang(l, "paper: linear in r_i", "论文版：随 r_i 线性变化"),
                                 yarn_keep_paper(D, o.theta, T0), true));
  p.notes = {in_lang(l, "r_i: the turns of pair i over T0", "r_i：第 i 对在 T0 内转的圈数"),
             in_lang(l, "deployed: from pair floor(d(32)) to ceil(d(1)),",
                     "部署版的斜坡从第 floor(d(32)) 对到第 ceil(d(1)) 对，"),
             in_lang(l, "d(n): the pair with r_i = n", "d(r)：在 T0 内恰好转 r 圈的那一对")};
  return p;
}

static std::string rope_scaling_table(const FigureOptions& o) {
  const int64_t D = o.head_dim, T0 = o.train_len;
  const std::vector<double> r = turns_in_train_len(o);
  const auto ntk = rope_wavelengths(D, o.theta, ScalingKind::ntk, o.factor, T0);
  const auto yarn = rope_wavelengths(D, o.theta, ScalingKind::yarn, o.factor, T0);
  std::vector<std::vector<double>> over;
  for (ScalingKind k : {ScalingKind::linear, ScalingKind::ntk, ScalingKind::yarn})
    over.push_back(rope_angle_overshoot(D, o.theta, k, o.factor, T0));
  std::string t = dims_text(o) + ": per pair, turns r_i over T0, wavelengths, angle overshoot\n";
  t += " pair       r_i   plain wl     ntk wl    yarn wl  over: linear     ntk    yarn\n";
  char line[160];
  for (size_t i = 0; i < r.size(); ++i) {
    std::snprintf(line, sizeof line, "%5zu %9.3f %10.1f %10.1f %10.1f %13.3f %7.3f %7.3f\n", i,
                  r[i], 2 * M_PI / rope_base_frequencies(D, o.theta)[i], ntk[i], yarn[i],
                  over[0][i], over[1][i], over[2][i]);
    t += line;
  }
  return t;
}

static std::string yarn_ramp_table(const FigureOptions& o) {
  const std::vector<double> r = turns_in_train_len(o);
  const auto deployed = yarn_keep(o.head_dim, o.theta, o.train_len);
  const auto paper = yarn_keep_paper(o.head_dim, o.theta, o.train_len);
  char line[128];
  std::snprintf(line, sizeof line, "D = %lld, T0 = %lld: the share of pair i's frequency kept\n",
                (long long)o.head_dim, (long long)o.train_len);
  std::string t = line;
  t += " pair       r_i  deployed    paper\n";
  for (size_t i = 0; i < r.size(); ++i) {
    std::snprintf(line, sizeof line, "%5zu %9.3f %9.3f %8.3f\n", i, r[i], deployed[i], paper[i]);
    t += line;
  }
  return t;
}

// ---------------------------------------------------------------- ALiBi's recency prior

LinePlot alibi_bias_figure(const FigureOptions& o) {
  const Lang l = o.lang;
  LinePlot p;
  p.title = in_lang(l, "ALiBi: a fixed recency prior per head, H = ",
                    "ALiBi：每个头一个固定的距离先验，H = ") +
            std::to_string(o.heads);
  p.xlabel = in_lang(l, "distance i - j", "距离 Δ = m − n");
  p.ylabel = in_lang(l, "bias -m_h (i - j) added to the score", "加到分数上的偏置 −m_h·Δ");
  const std::vector<double> slopes = alibi_slopes(o.heads);
  for (size_t h = 0; h < slopes.size(); ++h) {
    Series s;
    char label[128];
    std::snprintf(
        label, sizeof label,
        in_lang(l, "head %zu, m = %s: weight halves every %.3g", "头 %zu，m_h = %s：半衰距离 %.3g"),
        h, alibi_slope_text(slopes[h]).c_str(), std::log(2.0) / slopes[h]);
    s.label = label, s.markers = false;
    for (int64_t d = 0; d <= 2 * o.train_len; ++d) {
      s.x.push_back(static_cast<double>(d));
      s.y.push_back(-slopes[h] * d);
    }
    p.series.push_back(s);
  }
  p.notes = {in_lang(l, "softmax turns the bias into a factor e^(-m d)",
                     "softmax 把偏置变成 key 权重上的因子 e^(−m_h·Δ)"),
             in_lang(l, "on the key's weight; m_h = 2^(-8(h+1)/H)", "m_h = 2^(−8(h+1)/H)")};
  return p;
}

// ---------------------------------------------------------------- what counting reaches

LinePlot ngram_figure(const std::vector<NgramRow>& rows, const std::string& data_dir, Lang l) {
  LinePlot p;
  p.title =
      l == Lang::zh ? data_dir + " 上的 add-k n-gram 模型" : "add-k n-gram models of " + data_dir;
  p.xlabel = in_lang(l, "n (the next character from the n - 1 before it)",
                     "n（由前 n − 1 个字符预测下一个字符）");
  p.ylabel = in_lang(l, "val loss (nats)", "验证集损失（nats）");
  Series s;
  s.label = in_lang(l, "k chosen on the last 10% of train", "k 在训练集的最后 10% 上选定");
  for (const NgramRow& row : rows) {
    s.x.push_back(static_cast<double>(row.n));
    s.y.push_back(row.val_loss);
    char k[32];
    std::snprintf(k, sizeof k, "k = %g", row.k);
    s.point_labels.push_back(k);
  }
  p.series.push_back(s);
  p.notes = {"P(w | h) = (c(h w) + k) / (c(h) + k V)",
             in_lang(l, "(study/ngram.h)", "代码见 study/ngram.h")};
  return p;
}

static std::string ngram_table(const std::vector<NgramRow>& rows, const std::string& data_dir) {
  std::string t = "add-k n-gram models of " + data_dir +
                  " (counts of train, k chosen on its last 10%), scored on val:\n";
  char line[96];
  for (const NgramRow& row : rows) {
    std::snprintf(line, sizeof line, "  n = %ld  k = %-6g val loss %.4f nats\n", row.n, row.k,
                  row.val_loss);
    t += line;
  }
  return t;
}

// ---------------------------------------------------------------- the command

GuideFigure make_guide_figure(const std::string& name, const FigureOptions& o) {
  if (name == "rope-decay") return {render_readable(rope_decay_figure(o)), ""};
  if (name == "rope-scaling") {
    return {stack_readable(rope_scaling_figure(o), rope_overshoot_figure(o)),
            rope_scaling_table(o)};
  }
  if (name == "yarn-ramp") return {render_readable(yarn_ramp_figure(o)), yarn_ramp_table(o)};
  if (name == "alibi-bias") return {render_readable(alibi_bias_figure(o)), ""};
  if (name == "ngram") {
    if (o.data_dir.empty()) fail("figure ngram: expected --data DIR, a prepared corpus");
    const std::vector<NgramRow> rows = ngram_rows(o.data_dir, o.data_dir);
    return {render_readable(ngram_figure(rows, o.data_dir, o.lang)), ngram_table(rows, o.data_dir)};
  }
  if (std::optional<GuideFigure> v5 = make_v5_figure(name, o)) return *v5;
  fail("figure: unknown figure '", name,
       "'; valid: rope-decay, rope-scaling, yarn-ramp, alibi-bias, ngram, kerple-kernel, ",
       "prope-pairs, xpos-decay, rope-ramps");
}

std::string render_guide_figure(const std::string& name, const FigureOptions& o) {
  return make_guide_figure(name, o).svg;
}

int cmd_figure(int argc, char** argv) {
  std::string name;
  if (argc > 0 && argv[0][0] != '-') name = argv[0], --argc, ++argv;
  Args a(
      "figure NAME",
      {{"out", "FILE  the SVG to write (default NAME.svg, NAME.zh.svg with --lang zh)"},
       {"head-dim", "D  rotated dims of a head: rope-decay, rope-scaling, yarn-ramp (default 16)"},
       {"train-len", "T0  training length: rope-scaling, yarn-ramp, alibi-bias (default 64)"},
       {"factor", "S  scaling factor s: rope-scaling (default 4)"},
       {"theta", "X  RoPE base: rope-scaling, yarn-ramp (default 10000)"},
       {"heads", "H  heads: alibi-bias (default 4)"},
       {"data", "DIR  a prepared corpus: ngram"},
       {"lang", "en|zh  the language of the figure's words (default en)"}},
      argc, argv);
  if (a.help()) {
    std::printf(
        "%sNAME: rope-decay, rope-scaling, yarn-ramp, alibi-bias, ngram, kerple-kernel, "
        "prope-pairs, xpos-decay, rope-ramps (docs/cli.md)\n",
        a.usage().c_str());
    return 0;
  }
  if (name.empty())
    fail("figure: expected a NAME: rope-decay, rope-scaling, yarn-ramp, alibi-bias or ngram");
  FigureOptions o;
  o.head_dim = a.integer("head-dim", o.head_dim, 4, 4096);
  if (o.head_dim % 2) fail("--head-dim: expected an even D, but got ", o.head_dim);
  o.train_len = a.integer("train-len", o.train_len, 1, 1 << 20);
  o.factor = a.number("factor", o.factor, 1, 1e6);
  o.theta = a.number("theta", o.theta, 1.0001, 1e12);
  o.heads = a.integer("heads", o.heads, 1, 64);
  o.data_dir = a.str("data", "");
  o.lang = parse_lang(a.str("lang", "en"), "--lang");
  const GuideFigure fig = make_guide_figure(name, o);  // checks the name before writing
  const std::string out = a.str("out", name + (o.lang == Lang::zh ? ".zh.svg" : ".svg"));
  const std::filesystem::path dir = std::filesystem::path(out).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  write_file_atomic(out, fig.svg);
  std::printf("%swrote %s\n", fig.table.c_str(), out.c_str());
  return 0;
}

}  // namespace poslab
