// probes.h — why a scheme fails past its training length T0: the measurements the study makes
// on each finished main run besides its evaluations (SPEC 7.4-7.6). Each is a few evaluations
// of the same val text with one thing changed, so that the differences between them explain.
//
//   attribution  at L = 16 T0 (the study's longest length): plain; with an attention window of
//                T0 (no distance the model was not trained on); with log-n logit scaling
//                (attention no more diluted than in training). And windows of T0 placed at
//                positions 0, T0, 4T0, 15T0 (position offset: unseen absolute positions
//                alone, every distance seen). Each on the same targets: the first
//                probe_windows windows of L, i.e. probe_windows * 16 windows of T0.
//   rope pairs   RoPE only: at L, one rotation pair at a time interpolated (its angle divided
//                by s = L / T0, the others as trained), the loss on the unseen positions
//                [T0, L). Which pairs break past T0 is why NTK and YaRN treat them differently.
//   copy         copy_probe.h: is a context longer than T0 used at all?
#pragma once
#include <vector>

#include "nn/gpt.h"
#include "study/study.h"
#include "study/tables.h"

namespace poslab {

// The attribution rows of a main run: plain, window T0, log scale at L; offsets 0, T0, 4T0,
// 15T0 at T0 (offsets whose window does not fit a learned table are left out, and every offset
// of a model on random positions: an offset needs contiguous ones). `windows` windows of L (all
// that fit when fewer do).
std::vector<AttributionRow> attribution_rows(const RunSpec& r, const GPT& model,
                                             const std::vector<uint16_t>& val, int64_t L,
                                             int64_t windows);

// The frequency surgery of a RoPE main run at L: the plain model (pair -1), then each rotated
// pair interpolated alone. The model's scaling is left as none.
std::vector<RopePairRow> rope_pair_rows(const RunSpec& r, GPT& model,
                                        const std::vector<uint16_t>& val, int64_t L,
                                        int64_t windows);

// Copy at a distance (v2) for a main run: the study's options for windows up to L
// (study_copy_options), n examples per gap, strings from `train` planted in `val`.
std::vector<CopyCsvRow> copy_rows(const RunSpec& r, const GPT& model,
                                  const std::vector<uint16_t>& train,
                                  const std::vector<uint16_t>& val, int64_t L, int64_t n);

// The mean of v[w L + t] over every window w and the positions t in [start, L): the loss on
// positions start.. of windows of L, from evaluate's per-target losses.
double positions_mean(const std::vector<double>& v, int64_t L, int64_t start);

}  // namespace poslab
