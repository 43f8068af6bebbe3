// guide_figures.h — `poslab figure NAME`: the figures of the guide's "why" sections, computed
// from the formulas (no model, no training) and drawn with the study's SVG writer (plot.h).
//
//   rope-decay     RoPE's long-range decay (Su et al., "RoFormer", 2021, section 3.4.3). With
//                  the pairs of q and k as complex numbers, q_m . k_n = Re sum_i h_i e^{i(m-n)
//                  w_i}, h_i = q_[2i:2i+2] conj(k_[2i:2i+2]), w_i = theta^(-2i/D). Abel summation
//                  (S_0 = 0, S_j = sum_{k<j} e^{i(m-n) w_k}, h_{D/2} = 0) gives
//                    |sum_i h_i e^{i r w_i}| <= (max_i |h_{i+1} - h_i|) sum_{j=1}^{D/2} |S_j|
//                  and the figure draws the relative upper bound (1/(D/2)) sum_j |S_j| against
//                  the distance r = m - n, for theta = 10000 and theta = 10.
//   rope-scaling   the wavelength 2 pi / w_i of each pair i under plain RoPE and the zero-shot
//                  scalings of posenc/rope_scaling.h (linear, ntk, yarn) at factor s, with the
//                  training length T0 and the stretched length s T0 marked. NTK changes the base:
//                  theta' = theta s^(D/(D-2)) leaves pair 0 alone and stretches the last pair
//                  by exactly s, as writing numbers in a larger base keeps the lowest digit and
//                  stretches the highest.
//   alibi-bias     ALiBi's bias -m_h d against the distance d = i - j for each of H heads
//                  (posenc/alibi.h): a fixed recency prior, multiplying a key's weight by
//                  e^{-m_h d}, i.e. halving it every ln 2 / m_h tokens.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "posenc/posenc.h"
#include "train/study/plot.h"

namespace poslab {

// What the figures are drawn for; the defaults are the guide's demo model (d = 64, 4 heads:
// D = 16; T0 = 64) and the factor s = 4 of its `eval --len 256` commands.
struct FigureOptions {
  int64_t head_dim = 16;   // D
  int64_t train_len = 64;  // T0
  double factor = 4;       // s
  double theta = 10000;    // rope-scaling's base
  int64_t heads = 4;       // H, alibi-bias
};

// An ALiBi slope as text: a power of two 2^-k as "1/2^k" ("1/4", "1/256"), others as "%.3g".
std::string alibi_slope_text(double m);

// (1/(D/2)) sum_{j=1}^{D/2} |S_j|, S_j = sum_{k<j} e^{i r w_k}, w_k = theta^(-2k/D). At r = 0
// every S_j = j, so the bound is (D/2 + 1) / 2, its largest value.
double rope_decay_bound(int64_t D, double theta, double r);
// The wavelength 2 pi / (w_i p_s) of each pair i = 0..D/2-1 under `kind` at factor s (p_s: the
// position scale, 1/s for linear). ScalingKind::dynamic is refused: its s changes per row.
std::vector<double> rope_wavelengths(int64_t D, double theta, ScalingKind kind, double s,
                                     int64_t T0);

LinePlot rope_decay_figure(const FigureOptions& o);
LinePlot rope_scaling_figure(const FigureOptions& o);
LinePlot alibi_bias_figure(const FigureOptions& o);
// The SVG of figure `name` (rope-decay, rope-scaling, alibi-bias); throws naming the valid ones.
std::string render_guide_figure(const std::string& name, const FigureOptions& o);

// `poslab figure NAME [--out FILE.svg] [flags]` (docs/cli.md); returns the exit code.
int cmd_figure(int argc, char** argv);

}  // namespace poslab
