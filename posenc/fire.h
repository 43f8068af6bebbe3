// fire.h — FIRE, Functional Interpolation for Relative positions (Li, Zhang, Chen, Wang, ...
// & Bhojanapalli, "Functional Interpolation for Relative Positions Improves Long Context
// Transformers", ICLR 2024; the paper's code).
//
// A learned function of the distance, read through a normalisation that interpolates long
// windows into the range seen in training. In each layer, for query i (at position P_i) and
// key j, n = P_i - P_j:
//
//   phi(x)  = ln(|c| x + 1)                         a log that spreads the short distances
//   L_i     = max(P_i, Lthr),  Lthr = |m| T0        T0 the training length
//   u_ij    = phi(n) / (phi(L_i) + 1e-6)            in [0, 1] for every key i can see
//   bias_h  = f(u_ij)[h],  f = Linear(1 -> W), ReLU, Linear(W -> H)       W = 32 (--fire-width)
//   scores[h, i, j] = q_i . k_j / sqrt(D)  +  bias_h
//
// Inside training every query sits below Lthr (m starts at 1: Lthr = T0), so the normaliser is
// the constant phi(Lthr) and the bias a learned function of distance alone, as T5's table but
// smooth. Past Lthr the normaliser grows with the query's position: u = phi(n)/phi(P_i), so the
// farthest key of every row sits at u ~ 1, where training put the keys T0 back. Distances are
// squeezed into the trained range ("progressive interpolation"): the model never meets an
// input u it was not trained on, but it meets new distances at a given u. Unlike the other
// biases it reads the query's absolute position, so --position-offset moves it.
//
// Parameters per layer (the paper's code: one module per attention layer), names under
// transformer.h.{l}.attn.fire.: mlp.0.weight [W, 1], mlp.0.bias [W], mlp.2.weight [H, W],
// mlp.2.bias [H], c [1] (init 0.1), L_multiplier [1] (m, init 1). The MLP starts as PyTorch's
// default Linear init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), so mlp.0 ~ U(-1, 1), mlp.2 ~
// U(-1/sqrt(W), 1/sqrt(W)). No weight decay (no positional parameter gets any).
//
// The bias depends on (i, j), not on i - j alone, so attention gets a per-pair bias. In
// training it is a tensor (Bp, H, Tq, Tk) (nn/attention_options.h), whose gradient attention hands
// back; at T0 = 256 that is 1 MB. Where nothing needs a gradient (eval, generate) the bias is
// made row by row inside attention (posenc/pair_bias_rows.h): a (1, H, 4096, 4096) tensor would
// be 268 MB per layer, written once and read once. No (T, T, W) tensor is ever kept: f is
// evaluated as its piecewise-linear form (fire.cpp), and the backward recomputes the hidden
// layer one row of pairs at a time.
//
// Backward (hand-derived), per pair, with G_h = dL/dbias_h (attention's per-pair gradient):
//   pre_w = w0_w u + b0_w,  r_w = max(pre_w, 0),  bias_h = b2_h + sum_w w2_hw r_w
//   db2_h += G_h;  dw2_hw += G_h r_w
//   g_w   = [pre_w > 0] sum_h G_h w2_hw                        (through the ReLU)
//   db0_w += g_w;  dw0_w += g_w u;  du = sum_w g_w w0_w
// then u = A / Dn with A = phi(n), Dn = phi(L_i) + 1e-6:
//   du/d|c| = (n / (|c| n + 1)) / Dn  -  A (L_i / (|c| L_i + 1)) / Dn^2     (d/dc ln(|c| x + 1))
//   du/dLthr = -A (|c| / (|c| Lthr + 1)) / Dn^2  only where Lthr > P_i (the max picks Lthr;
//              where P_i >= Lthr the max does not depend on m: gradient 0, the subgradient
//              taken at a tie)
//   dc += du sign(c) du/d|c|;  dm += du sign(m) T0 du/dLthr                 (d|x|/dx = sign x)
// Masked pairs get G = 0 and add nothing. Test: "gradcheck: fire: ..."
// (tests/nn/test_new_schemes.cpp).
#pragma once
#include "posenc/posenc.h"

namespace poslab {

// One layer's FIRE parameters (the names above).
struct FireParams {
  Tensor w0, b0, w2, b2, c, m;  // [W,1], [W], [H,W], [H], [1], [1]
};

// The per-pair bias (Bp, H, Tq, Tk) of the context's positions: query row i at
// ctx.position(b, q_pos0 + i), key j at ctx.position(b, j); T0 the training length.
// Differentiable in every parameter (the backward above).
Tensor fire_bias(const FireParams& f, const PositionContext& ctx, int64_t T0, bool causal);

class Fire final : public PositionalEncoding {
 public:
  // One parameter set per layer that carries position (dims.positional_layer), drawn from gen
  // layer by layer in the order w0, b0, w2, b2 (c and m are constants).
  Fire(const PosencDims& dims, int64_t width, Generator& gen);
  PeKind kind() const override { return PeKind::fire; }
  // q and k as given, and the per-pair bias of layer ctx.layer.
  AttentionTerms attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                 const PositionContext& ctx) const override;
  std::vector<std::pair<std::string, Tensor>> parameters() const override;
  void to(Device device) override;
  const FireParams& layer(int64_t l) const;

 private:
  int64_t T0_;
  std::vector<int64_t> layers_;  // the layers that carry position, in order
  std::vector<FireParams> params_;
};

}  // namespace poslab
