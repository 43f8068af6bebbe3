// eval.h — the evaluation protocol of docs/evaluation.md, and the sliding-window comparison.
//
// At length L on a split: windows of L+1 tokens starting at 0, L, 2L, ... (as many as fit,
// or the first `windows`); input = tokens[o, o+L), target = tokens[o+1, o+L+1); each window
// from position 0. Reported: the mean cross-entropy over all predicted tokens (nats), its
// perplexity, tokens = L x windows, and the loss in `buckets` equal ranges of positions
// (bucket b covers [floor(bL/N), floor((b+1)L/N))). With causal = false this is computed the
// same way but is not a perplexity (each position sees its own target).
//
// Target index t means "predict tokens[t] from the tokens before it"; the windows above score
// the targets 1 .. W L, each once.
//
// The sliding window (sliding_losses) scores every target of the split with a context of the
// training length T0 at most, at trained positions only: windows of T0 tokens at offsets
// 0, s, 2s, ... with stride s = T0/4. The first window scores all of its targets 1 .. T0;
// the window at offset o = k s (k >= 1) scores only its last s targets, o+T0-s+1 .. o+T0,
// which sit at positions T0-s .. T0-1 and so see between T0-s+1 and T0 tokens (3T0/4+1 .. T0).
// When the split's last targets are not reached by a whole stride, one more window, ending at
// the split's last token (offset n-1-T0), scores the targets left: its last (< s) ones, with
// even more context. Every target 1 .. n-1 is scored exactly once. add_sliding_loss then
// averages these losses over exactly the targets of an L-window evaluation, so that
//   loss(L-window) - sliding_loss
// compares the same targets: negative when the long window's extra context helps, positive
// when its unseen positions hurt (the sliding evaluation of Press et al. 2022, ALiBi).
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "nn/gpt.h"

namespace poslab {

constexpr double kNotComputed = std::numeric_limits<double>::quiet_NaN();

struct EvalBucket {
  int64_t start, end;
  double loss;
  double sliding_loss = kNotComputed;  // the sliding window's loss on the same targets
};

struct EvalResult {
  double loss = 0, ppl = 0;
  double sliding_loss = kNotComputed;  // add_sliding_loss: the same targets, sliding window
  // The standard error of `loss` as the mean of the windows' mean losses (2+ windows).
  double loss_se = kNotComputed;
  int64_t tokens = 0, len = 0, windows = 0;
  std::vector<EvalBucket> buckets;
  std::vector<double> position_loss;  // mean loss at each position 0..L-1
  // One line: {"loss":..,"ppl":..,"tokens":..,"len":..,...}; numbers with 17 significant
  // digits, so that a reader gets the same doubles back (the study caches evaluations so).
  // "sliding_loss" (top level and per bucket) and "loss_se" only when computed: JSON has no NaN.
  std::string json() const;
};

// windows <= 0: all that fit. Runs under NoGrad.
// target_loss (optional) receives the loss of every target, W x L values in token order:
// (*target_loss)[w L + t] is the loss of target w L + t + 1 (window w, position t).
// batch: windows per forward pass (0: enough to hold about kEvalBatchTokens tokens). Each
// window is still computed on its own; a batch only shares the matrix products, so the
// losses equal those of batch = 1 up to float rounding of the products.
// iv: the interventions of docs/evaluation.md (position offset, attention window, log scale),
// applied to every window. iv.draw_max > 0 (a random-position model, posenc/random_positions.h):
// window w (0-based, in order) reads positions drawn from [0, draw_max), seeded by
// iv.draw_seed and w, the same for every call; buckets and windows still count token indices.
EvalResult evaluate(const GPT& model, const std::vector<uint16_t>& tokens, int64_t L,
                    int64_t windows, int64_t buckets, const std::string& split_name,
                    std::vector<double>* target_loss = nullptr, int64_t batch = 0,
                    const Interventions& iv = {});

// Tokens per forward pass when evaluate and sliding_losses pick the batch themselves.
constexpr int64_t kEvalBatchTokens = 2048;

// The sliding-window loss of every target of the split (header comment): result[t - 1] is
// the loss of target t, t = 1 .. n-1, for windows of `window` tokens (the model's T0) moved
// by max(1, window / 4). The model's positional scheme is used as set (the study leaves
// RoPE scaling off: a window of T0 needs none). Runs under NoGrad. A split of fewer than
// window + 1 tokens is an error naming both.
// targets > 0: only targets 1 .. targets (at most n-1), each from the window the whole pass
// gives it, so only the windows up to the first that reaches `targets` are computed (an
// evaluation of W windows of L needs targets 1 .. W L: add_sliding_loss).
std::vector<double> sliding_losses(const GPT& model, const std::vector<uint16_t>& tokens,
                                   int64_t window, int64_t batch = 0, int64_t targets = 0,
                                   const Interventions& iv = {});

// How many targets sliding_losses scores on a split of n tokens: the first `targets`, at most
// n-1 (all of them when targets <= 0).
int64_t sliding_target_count(int64_t n, int64_t targets = 0);

// The number of windows (each a forward pass of `window` tokens) sliding_losses computes for
// a split of n tokens (n > window) and `targets` as there: what the pass costs.
int64_t sliding_window_count(int64_t n, int64_t window, int64_t targets = 0);

// Sets r.sliding_loss and each bucket's sliding_loss: the mean of `sliding` (sliding_losses
// of the same split) over the targets of r (1 .. r.windows x r.len), and over those of each
// bucket's positions in every window. An error when sliding covers fewer targets.
void add_sliding_loss(EvalResult& r, const std::vector<double>& sliding);

}  // namespace poslab
