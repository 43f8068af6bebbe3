// probes.cpp — attribution, RoPE frequency surgery and copy at a distance. See probes.h.
#include "study/probes.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "posenc/rope.h"
#include "posenc/rope_scaling.h"
#include "study/copy_probe.h"
#include "train/eval.h"

namespace poslab {
namespace {

// The windows of L that fit in val (eval.h), at most `windows`.
int64_t fitting_windows(const std::vector<uint16_t>& val, int64_t L, int64_t windows) {
  const int64_t fit = (static_cast<int64_t>(val.size()) - 1) / L;
  return windows > 0 ? std::min(windows, fit) : fit;
}

// One evaluation of W windows of L with the interventions iv: (loss over every target, loss
// over the positions unseen_from.. of each window).
std::pair<double, double> evaluated(const GPT& model, const std::vector<uint16_t>& val, int64_t L,
                                    int64_t W, const Interventions& iv, int64_t unseen_from) {
  std::vector<double> per_target;
  EvalResult r = evaluate(model, val, L, W, 1, "val", &per_target, 0, iv);
  return {r.loss, unseen_from < L ? positions_mean(per_target, L, unseen_from) : NAN};
}

}  // namespace

double positions_mean(const std::vector<double>& v, int64_t L, int64_t start) {
  const int64_t W = static_cast<int64_t>(v.size()) / L;
  double sum = 0;
  for (int64_t w = 0; w < W; ++w)
    for (int64_t t = start; t < L; ++t) sum += v[w * L + t];
  return sum / static_cast<double>(W * (L - start));
}

std::vector<AttributionRow> attribution_rows(const RunSpec& r, const GPT& model,
                                             const std::vector<uint16_t>& val, int64_t L,
                                             int64_t windows) {
  const GPTConfig& cfg = model.config();
  const int64_t T0 = cfg.block_size, W = fitting_windows(val, L, windows);
  const AttributionRow base{r.name, r.scheme, static_cast<long>(r.train.seed), L, 0, 0, "none"};
  std::vector<AttributionRow> rows;
  // At L: plain, window T0, log scale; unseen = positions T0..L-1 of every window.
  for (int k = 0; k < 3; ++k) {
    Interventions iv = study_positions(cfg);
    iv.attention_window = k == 1 ? T0 : 0;
    iv.log_scale = k == 2;
    auto [loss, unseen] = evaluated(model, val, L, W, iv, T0);
    AttributionRow row = base;
    row.attention_window = iv.attention_window;
    row.logit_scale = iv.log_scale ? "log" : "none";
    row.loss = loss, row.loss_unseen = unseen;
    rows.push_back(row);
  }
  // At T0, the same targets (W L / T0 windows), placed at P: every position unseen for P >= T0.
  for (int64_t P : {int64_t{0}, T0, 4 * T0, 15 * T0}) {
    if (cfg.pe.kind == PeKind::learned && P + T0 > cfg.pe.max_len) continue;
    if (cfg.pe.random_positions > 0) break;  // an offset needs contiguous positions
    Interventions iv;
    iv.position_offset = P;
    auto [loss, all] = evaluated(model, val, T0, W * L / T0, iv, 0);
    AttributionRow row = base;
    row.len = T0, row.position_offset = P;
    row.loss = loss, row.loss_unseen = P >= T0 ? all : NAN;
    rows.push_back(row);
  }
  return rows;
}

std::vector<RopePairRow> rope_pair_rows(const RunSpec& r, GPT& model,
                                        const std::vector<uint16_t>& val, int64_t L,
                                        int64_t windows) {
  const GPTConfig& cfg = model.config();
  const int64_t T0 = cfg.block_size, W = fitting_windows(val, L, windows);
  const int64_t rotated = rope_rotated_dims(cfg.n_embd / cfg.n_head, cfg.pe.rope_fraction);
  const std::vector<double> freq = rope_base_frequencies(rotated, cfg.pe.theta);
  std::vector<RopePairRow> rows;
  const long seed = static_cast<long>(r.train.seed);
  rows.push_back({r.name, seed, -1, NAN, evaluated(model, val, L, W, {}, T0).second});
  for (int64_t p = 0; p < static_cast<int64_t>(freq.size()); ++p) {
    Interventions one;
    one.rope_scaling = {ScalingKind::linear, 0, T0};
    one.rope_scaling.pair = p;  // s = L / T0 for this pair alone
    const double unseen = evaluated(model, val, L, W, one, T0).second;
    rows.push_back({r.name, seed, static_cast<long>(p), 2 * std::numbers::pi / freq[p], unseen});
  }
  return rows;
}

std::vector<CopyCsvRow> copy_rows(const RunSpec& r, const GPT& model,
                                  const std::vector<uint16_t>& train,
                                  const std::vector<uint16_t>& val, int64_t L, int64_t n) {
  std::vector<CopyCsvRow> rows;
  for (const CopyRow& c : copy_probe(model, train, val, study_copy_options(L, n)))
    rows.push_back({r.name, r.scheme, static_cast<long>(r.train.seed), c.distance, c.n,
                    c.loss_planted, c.loss_control, c.gain, c.share});
  return rows;
}

}  // namespace poslab
