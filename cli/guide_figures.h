// guide_figures.h — `poslab figure NAME`: the figures of the guide's "why" sections, computed
// from the formulas (no model, no training) and drawn with our SVG writer (plot/plot.h).
//
//   rope-decay     RoPE's long-range decay (Su et al., "RoFormer", 2021, section 3.4.3). With
//                  the pairs of q and k as complex numbers, q_m . k_n = Re sum_i h_i e^{i(m-n)
//                  w_i}, h_i = q_[2i:2i+2] conj(k_[2i:2i+2]), w_i = theta^(-2i/D). Abel summation
//                  (S_0 = 0, S_j = sum_{k<j} e^{i(m-n) w_k}, h_{D/2} = 0) gives
//                    |sum_i h_i e^{i r w_i}| <= (max_i |h_{i+1} - h_i|) sum_{j=1}^{D/2} |S_j|
//                  and the figure draws the relative upper bound (1/(D/2)) sum_j |S_j| against
//                  the distance r = m - n, for theta = 10000 and theta = 10.
//   rope-scaling   two panels. Above: the wavelength 2 pi / w_i of each pair i under plain RoPE
//                  and the zero-shot scalings of posenc/rope_scaling.h (linear, ntk, yarn) at
//                  factor s, with the training length T0 and the stretched length s T0 marked.
//                  NTK changes the base: theta' = theta s^(D/(D-2)) leaves pair 0 alone and
//                  stretches the last pair by exactly s, as writing numbers in a larger base
//                  keeps the lowest digit and stretches the highest. Below: the angle overshoot,
//                  the largest angle a pair reaches over s T0 against the largest it reached in
//                  training (over T0): s w_i' p_s / w_i. Linear gives 1 for every pair; NTK
//                  gives s^(1 - 2i/(D-2)): above 1 for every pair but the last, so the pairs
//                  that turned less than once in T0 (r_i < 1, right of the grey line) meet
//                  angles training never produced; YaRN gives 1 for its slow pairs. The
//                  command also prints both panels' numbers per pair.
//   yarn-ramp      YaRN's share keep_i of pair i's original frequency (posenc/rope_scaling.h):
//                  the deployed ramp (yarn_keep: linear in i between floor(d(32)) and
//                  ceil(d(1)), the code's) beside the paper's (yarn_keep_paper: linear in the
//                  turns r_i between 1 and 32); the command prints both per pair.
//   ngram          the val loss of the add-k n-gram references (study/ngram.h), n = 1..5,
//                  of a prepared corpus (--data): what counting alone reaches; printed too.
//   alibi-bias     ALiBi's bias -m_h d against the distance d = i - j for each of H heads
//                  (posenc/alibi.h): a fixed recency prior, multiplying a key's weight by
//                  e^{-m_h d}, i.e. halving it every ln 2 / m_h tokens.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "plot/plot.h"
#include "posenc/posenc.h"
#include "study/tables.h"

namespace poslab {

// What the figures are drawn for; the defaults are the guide's demo model (d = 64, 4 heads:
// D = 16; T0 = 64) and the factor s = 4 of its `eval --len 256` commands.
struct FigureOptions {
  int64_t head_dim = 16;   // D
  int64_t train_len = 64;  // T0
  double factor = 4;       // s
  double theta = 10000;    // rope-scaling's base
  int64_t heads = 4;       // H, alibi-bias
  std::string data_dir;    // ngram: a prepared corpus (train.bin, val.bin, vocab.json)
  Lang lang = Lang::en;    // the language of the figure's words (the printed table stays English)
};

// (1/(D/2)) sum_{j=1}^{D/2} |S_j|, S_j = sum_{k<j} e^{i r w_k}, w_k = theta^(-2k/D). At r = 0
// every S_j = j, so the bound is (D/2 + 1) / 2, its largest value.
double rope_decay_bound(int64_t D, double theta, double r);
// The wavelength 2 pi / (w_i p_s) of each pair i = 0..D/2-1 under `kind` at factor s (p_s: the
// position scale, 1/s for linear). ScalingKind::dynamic is refused: its s changes per row.
std::vector<double> rope_wavelengths(int64_t D, double theta, ScalingKind kind, double s,
                                     int64_t T0);

// The largest angle pair i reaches over a window of s T0 under `kind`, divided by the largest
// it reached in training (plain RoPE over T0): s p_s w_i' / w_i. linear: 1; ntk:
// s^(1 - 2i/(D-2)); yarn: s keep_i + 1 - keep_i. dynamic is refused, as above.
std::vector<double> rope_angle_overshoot(int64_t D, double theta, ScalingKind kind, double s,
                                         int64_t T0);

LinePlot rope_decay_figure(const FigureOptions& o);
LinePlot rope_scaling_figure(const FigureOptions& o);    // the wavelengths
LinePlot rope_overshoot_figure(const FigureOptions& o);  // the angle overshoot
LinePlot yarn_ramp_figure(const FigureOptions& o);
LinePlot alibi_bias_figure(const FigureOptions& o);
// render_line_plot with the plot area narrowed until the figure, legend and notes beside it,
// is at most kReadableWidth (plot.h) wide: GitHub shows it unscaled, its 11 px text at 11 px.
std::string render_readable(LinePlot p);
LinePlot ngram_figure(const std::vector<NgramRow>& rows, const std::string& data_dir,
                      Lang lang = Lang::en);
// Figure `name` (rope-decay, rope-scaling, yarn-ramp, alibi-bias, ngram): its SVG, and the
// numbers drawn as the command prints them before "wrote FILE", one line a pair (rope-scaling,
// yarn-ramp) or an n (ngram); "" for the others. Throws naming the valid ones.
struct GuideFigure {
  std::string svg, table;
};
GuideFigure make_guide_figure(const std::string& name, const FigureOptions& o);
std::string render_guide_figure(const std::string& name, const FigureOptions& o);  // its svg

// `poslab figure NAME [--out FILE.svg] [--lang en|zh] [flags]` (docs/cli.md); returns the exit
// code. --lang zh draws the same figure with Chinese words, by default into NAME.zh.svg.
int cmd_figure(int argc, char** argv);

}  // namespace poslab
