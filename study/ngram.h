// ngram.h — the study's reference lines: add-k smoothed character n-gram models, n = 1..5.
//
// How good is a transformer's val loss? A model that only counts can answer: an n-gram model
// predicts the next token w from the n-1 tokens before it, its history h, by how often that
// continuation followed h in the train split:
//
//   P(w | h) = (c(h w) + k) / (c(h) + k V)
//
//   c(h w)  occurrences of the n tokens h w in train
//   c(h)    occurrences of h followed by some token: sum over w of c(h w)
//   V       vocabulary size;  n = 1: h is empty and c(h) is the number of counted tokens
//
// Why add k: the plain relative frequency c(h w) / c(h) gives probability 0 — an infinite
// loss — to every continuation train never showed after h, and most long histories are rare
// (a 5-gram history of a character corpus is often seen a handful of times, or never). Adding
// the same k pseudo-counts to all V continuations keeps every probability positive and still
// sums to 1 over the vocabulary, since sum_w (c(h w) + k) = c(h) + k V. For an unseen
// history the model predicts uniformly, 1/V.
// What k does: it decides how far the counts are trusted. With c(h) much larger than k V the
// counts win; with c(h) small against k V the distribution is pulled toward uniform. k = 1 is
// Laplace's rule, far too strong for long histories over ~100 characters (it adds 100
// imaginary observations to each history); small k trusts rare histories more. The best k
// depends on n and on the corpus (fortunes picks 0.3, 0.1, 0.03, 0.03 for n = 2..5), so it
// is chosen per n: from ngram_k_grid(), by the loss on a held-out tail of train (the last 10%
// of the train tokens, scored with counts of the first 90%); the model is then refitted on
// all of train with that k and scored on val.
//
// Which targets are scored: target t means predicting tokens[t] from tokens[t-n+1 .. t-1].
// On val every target that has n-1 tokens of history inside val is scored: t = n-1 .. |val|-1
// (so n = 5 leaves out targets 1..3, n = 1 also scores target 0; 4 targets out of ~255,000,
// which moves no printed digit). On the held-out tail: t = cut .. |train|-1 with cut the start
// of the tail; a history may reach back before cut (it is only conditioned on, not counted).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "study/tables.h"

namespace poslab {

// c(h w) and c(h) of one target (the header's formula).
struct NgramCount {
  int64_t joint = 0, context = 0;
};

// The n-gram counts of a token sequence: every n consecutive tokens, packed into one integer
// (base V: h w -> h V + w, the history's first token most significant), sorted, with the
// running total of their counts, so that c(h w) is one binary search and c(h) the counts of
// the range [h V, h V + V) of packed keys. Memory: two 8-byte numbers per distinct n-gram.
class NgramModel {
 public:
  // Counts the n-grams tokens[t-n+1 .. t], t = n-1 .. size-1. V^n must fit 64 bits (V up
  // to 7131 at n = 5), else an error names n and V.
  NgramModel(std::span<const uint16_t> tokens, int n, int64_t vocab_size);

  int n() const { return n_; }
  int64_t vocab_size() const { return V_; }
  // The counts of target t of `tokens` (t >= n-1): h = tokens[t-n+1 .. t-1], w = tokens[t].
  NgramCount count(std::span<const uint16_t> tokens, int64_t t) const;
  // P(w | history) with add-k; history: the n-1 tokens before w.
  double probability(std::span<const uint16_t> history, uint16_t w, double k) const;

 private:
  NgramCount count_key(uint64_t key, uint16_t w) const;
  int n_;
  int64_t V_;
  std::vector<uint64_t> keys_;  // distinct packed n-grams, increasing
  std::vector<int64_t> cum_;    // cum_[i]: total count of keys_[0 .. i), size keys_ + 1
};

// The counts of targets t = max(from, n-1) .. size-1 of tokens under model m.
std::vector<NgramCount> target_counts(const NgramModel& m, std::span<const uint16_t> tokens,
                                      int64_t from);
// Mean of -ln((joint + k) / (context + k V)) over the targets (nats).
double add_k_loss(const std::vector<NgramCount>& targets, double k, int64_t vocab_size);

// The values of k tried for every n: half decades from 0.001 to 1.
const std::vector<double>& ngram_k_grid();

// One row per n = 1 .. max_n: k chosen on the held-out tail of train, val loss of the model
// refitted on all of train (header comment). corpus: the name written in the rows.
std::vector<NgramRow> ngram_reference(const std::string& corpus, const std::vector<uint16_t>& train,
                                      const std::vector<uint16_t>& val, int64_t vocab_size,
                                      int max_n = 5);
// The same for a prepared corpus folder (train.bin, val.bin, vocab.json): the rows of
// ngram.csv for that corpus.
std::vector<NgramRow> ngram_rows(const std::string& corpus_name, const std::string& data_dir);

}  // namespace poslab
