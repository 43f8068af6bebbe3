// eval.h — the evaluation protocol of docs/evaluation.md.
//
// At length L on a split: windows of L+1 tokens starting at 0, L, 2L, ... (as many as fit,
// or the first `windows`); input = tokens[o, o+L), target = tokens[o+1, o+L+1); each window
// from position 0. Reported: the mean cross-entropy over all predicted tokens (nats), its
// perplexity, tokens = L x windows, and the loss in `buckets` equal ranges of positions
// (bucket b covers [floor(bL/N), floor((b+1)L/N))). With causal = false this is computed the
// same way but is not a perplexity (each position sees its own target).
#pragma once
#include <string>
#include <vector>

#include "nn/gpt.h"

namespace poslab {

struct EvalBucket {
  int64_t start, end;
  double loss;
};

struct EvalResult {
  double loss = 0, ppl = 0;
  int64_t tokens = 0, len = 0, windows = 0;
  std::vector<EvalBucket> buckets;
  std::vector<double> position_loss;  // mean loss at each position 0..L-1
  // One line: {"loss":..,"ppl":..,"tokens":..,"len":..,...}; numbers with 17 significant
  // digits, so that a reader gets the same doubles back (the study caches evaluations so).
  std::string json() const;
};

// windows <= 0: all that fit. Runs under NoGrad.
EvalResult evaluate(const GPT& model, const std::vector<uint16_t>& tokens, int64_t L,
                    int64_t windows, int64_t buckets, const std::string& split_name);

}  // namespace poslab
