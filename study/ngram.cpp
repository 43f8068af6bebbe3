// ngram.cpp — add-k character n-gram models (see ngram.h for the formula and the choices).
#include "study/ngram.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "data/corpus.h"
#include "tensor/check.h"

namespace poslab {
namespace {

// The n tokens ending at tokens[t] in base V: sum_i tokens[t-n+1+i] V^(n-1-i).
uint64_t pack(std::span<const uint16_t> tokens, int64_t t, int n, int64_t V) {
  uint64_t key = 0;
  for (int64_t i = t - n + 1; i <= t; ++i) key = key * V + tokens[i];
  return key;
}

void check_fits(int n, int64_t V) {
  if (n < 1) fail("ngram: expected n >= 1, but got n = ", n);
  if (V < 1) fail("ngram: expected a vocabulary of at least 1 token, but got V = ", V);
  uint64_t acc = 1;
  for (int i = 0; i < n; ++i) {
    if (acc > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(V))
      fail("ngram: V^n must fit 64 bits to pack an n-gram, but n = ", n, " and V = ", V);
    acc *= V;
  }
}

// Index of the first key >= key (keys_ is increasing).
size_t lower(const std::vector<uint64_t>& keys, uint64_t key) {
  return std::lower_bound(keys.begin(), keys.end(), key) - keys.begin();
}

}  // namespace

NgramModel::NgramModel(std::span<const uint16_t> tokens, int n, int64_t vocab_size)
    : n_(n), V_(vocab_size) {
  check_fits(n, vocab_size);
  const int64_t size = static_cast<int64_t>(tokens.size());
  std::vector<uint64_t> all;
  all.reserve(std::max<int64_t>(0, size - n + 1));
  for (int64_t t = n - 1; t < size; ++t) {
    if (tokens[t] >= V_) fail("ngram: token ", tokens[t], " at ", t, " is not below V = ", V_);
    all.push_back(pack(tokens, t, n, V_));
  }
  std::sort(all.begin(), all.end());
  cum_.push_back(0);
  for (size_t i = 0; i < all.size(); ++i) {  // run-length: one key per distinct n-gram
    if (i == 0 || all[i] != all[i - 1]) keys_.push_back(all[i]), cum_.push_back(cum_.back());
    ++cum_.back();
  }
}

// key = h V + w: c(h w) is key's own count, c(h) the counts of keys h V .. h V + V - 1.
NgramCount NgramModel::count_key(uint64_t key, uint16_t w) const {
  uint64_t lo = key - w;
  size_t i = lower(keys_, key), a = lower(keys_, lo), b = lower(keys_, lo + V_);
  NgramCount c;
  if (i < keys_.size() && keys_[i] == key) c.joint = cum_[i + 1] - cum_[i];
  c.context = cum_[b] - cum_[a];
  return c;
}

NgramCount NgramModel::count(std::span<const uint16_t> tokens, int64_t t) const {
  if (t < n_ - 1 || t >= static_cast<int64_t>(tokens.size()))
    fail("ngram: target ", t, " needs ", n_ - 1, " tokens of history inside ", tokens.size());
  return count_key(pack(tokens, t, n_, V_), tokens[t]);
}

double NgramModel::probability(std::span<const uint16_t> history, uint16_t w, double k) const {
  if (static_cast<int64_t>(history.size()) != n_ - 1)
    fail("ngram: a ", n_, "-gram model expects ", n_ - 1, " tokens of history, but got ",
         history.size());
  if (w >= V_) fail("ngram: token ", w, " is not below V = ", V_);
  uint64_t key = 0;
  for (uint16_t h : history) key = key * V_ + h;
  NgramCount c = count_key(key * V_ + w, w);
  return (c.joint + k) / (c.context + k * V_);
}

std::vector<NgramCount> target_counts(const NgramModel& m, std::span<const uint16_t> tokens,
                                      int64_t from) {
  std::vector<NgramCount> out;
  for (int64_t t = std::max<int64_t>(from, m.n() - 1); t < static_cast<int64_t>(tokens.size()); ++t)
    out.push_back(m.count(tokens, t));
  return out;
}

double add_k_loss(const std::vector<NgramCount>& targets, double k, int64_t vocab_size) {
  if (targets.empty()) fail("ngram: no targets to score");
  double total = 0;
  for (const NgramCount& c : targets)
    total -= std::log((c.joint + k) / (c.context + k * static_cast<double>(vocab_size)));
  return total / static_cast<double>(targets.size());
}

const std::vector<double>& ngram_k_grid() {
  static const std::vector<double> grid{0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1};
  return grid;
}

std::vector<NgramRow> ngram_reference(const std::string& corpus, const std::vector<uint16_t>& train,
                                      const std::vector<uint16_t>& val, int64_t vocab_size,
                                      int max_n) {
  const std::span<const uint16_t> all(train);
  const int64_t cut = static_cast<int64_t>(train.size()) * 9 / 10;  // held-out tail: the last 10%
  if (cut < max_n || static_cast<int64_t>(val.size()) < max_n)
    fail("ngram: ", corpus, ": train (", train.size(), " tokens) and val (", val.size(),
         ") are too short for ", max_n, "-grams");
  std::vector<NgramRow> rows;
  for (int n = 1; n <= max_n; ++n) {
    std::vector<NgramCount> held =
        target_counts(NgramModel(all.first(cut), n, vocab_size), all, cut);
    double best_k = 0, best = std::numeric_limits<double>::infinity();
    for (double k : ngram_k_grid()) {
      double l = add_k_loss(held, k, vocab_size);
      if (l < best) best = l, best_k = k;
    }
    NgramModel full(all, n, vocab_size);
    rows.push_back(
        {corpus, n, best_k, add_k_loss(target_counts(full, val, 0), best_k, vocab_size)});
  }
  return rows;
}

std::vector<NgramRow> ngram_rows(const std::string& corpus_name, const std::string& data_dir) {
  std::vector<std::string> vocab = load_vocab(data_dir + "/vocab.json");
  return ngram_reference(corpus_name, load_tokens(data_dir + "/train.bin", vocab.size()),
                         load_tokens(data_dir + "/val.bin", vocab.size()),
                         static_cast<int64_t>(vocab.size()));
}

}  // namespace poslab
