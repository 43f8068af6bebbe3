// guide_figures_v5.h — `poslab figure NAME` for the v5 schemes and scalings (cli/guide_figures.h
// has the others), each computed from the formulas of posenc/ and drawn with plot/plot.h:
//   kerple-kernel   KERPLE's bias -κ ln(1 + η Δ) against the distance Δ (posenc/kerple.h's p and
//                   a are κ and η) for three heads, each beside ALiBi's line -κ η Δ, the tangent
//                   it starts on: the log bends away from the line once η Δ passes about 1.
//   prope-pairs     the wavelength 2π/θ_i of each pair i of a head (D = --head-dim, theta):
//                   plain RoPE, p-RoPE at 7/16 (pairs from K = floor(7/16 D/2) on never turn:
//                   drawn as a gap), and --rope-fraction 7/16 (2 floor(7/16 D/2) dims with the
//                   frequencies spread over them): p-RoPE keeps the fast pairs as they were, the
//                   fraction keeps a slow pair; T0 marked.
//   xpos-decay      xPos's factor ζ_i^(Δ/512) on pair i's share of q.k against the distance Δ
//                   (posenc/xpos.h), for the fastest, a middle and the slowest pair.
//   rope-ramps      each pair's share of its original frequency kept under YaRN (the deployed
//                   ramp, truncated and not, and the paper's) and Llama 3 (lff 1, hff 4), at
//                   T0 = --train-len, theta, D = --head-dim: 1 = unchanged, 0 = divided by s.
// The guide draws them at the study's sizes (--head-dim 32 --train-len 256); the command prints
// the numbers drawn as a table (a row a pair, or a distance) before "wrote FILE".
#pragma once
#include <optional>

#include "cli/guide_figures.h"

namespace poslab {

// The figure `name` if it is one of the four above, else nullopt.
std::optional<GuideFigure> make_v5_figure(const std::string& name, const FigureOptions& o);

LinePlot kerple_kernel_figure(Lang lang = Lang::en);
LinePlot prope_pairs_figure(const FigureOptions& o);
LinePlot xpos_decay_figure(const FigureOptions& o);
LinePlot rope_ramps_figure(const FigureOptions& o);

}  // namespace poslab
