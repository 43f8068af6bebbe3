// task_score.cpp — scoring the synthetic tasks (tasks.h): exact match and per-character
// accuracy from one forward pass, Wilson's interval.
#include <algorithm>
#include <cmath>

#include "data/corpus.h"
#include "posenc/random_positions.h"
#include "study/tasks.h"

namespace poslab {

// One forward pass over the examples (padded with '_' after their ends, which a causal model
// never sees from an answer position), then at each answer character c the argmax of the
// logits at position c - 1 (given the correct prefix text[0, c)).
TaskScore score_answers(const GPT& model, const std::vector<std::string>& vocab,
                        const std::vector<TaskExample>& examples, int64_t first,
                        std::vector<bool>* exact) {
  const uint16_t pad = encode(vocab, "_")[0];
  std::vector<std::vector<uint16_t>> ids;
  size_t L = 0;  // input length: the longest example minus its last character
  for (const TaskExample& ex : examples) {
    ids.push_back(encode(vocab, ex.text));
    L = std::max(L, ids.back().size() - 1);
  }
  const int64_t B = static_cast<int64_t>(examples.size()), T = static_cast<int64_t>(L);
  Ids x{std::vector<int32_t>(B * T, pad), {B, T}};
  for (int64_t b = 0; b < B; ++b)
    std::copy(ids[b].begin(), ids[b].end() - 1, x.data.begin() + b * T);
  Interventions iv;  // random positions: each example its own draw, while T fits in [0, Lmax)
  const int64_t Lmax = model.config().pe.random_positions;
  if (Lmax > 0 && T <= Lmax) iv.positions = draw_position_rows(B, T, Lmax, 0, first);
  const std::vector<double> logits = model.logits(x, iv).to_vector();  // (B,T,V)
  const int64_t V = model.config().vocab_size;
  TaskScore s;
  s.n = B;
  for (int64_t b = 0; b < B; ++b) {
    int64_t right = 0, chars = 0;
    for (size_t c = examples[b].answer_start; c < ids[b].size(); ++c, ++chars) {
      const double* row = logits.data() + (b * T + static_cast<int64_t>(c) - 1) * V;
      right += std::max_element(row, row + V) - row == ids[b][c];
    }
    s.chars += chars, s.correct_chars += right, s.correct += right == chars;
    if (exact) exact->push_back(right == chars);
  }
  return s;
}

TaskScore task_accuracy(const GPT& model, const std::vector<std::string>& vocab,
                        const std::string& task, const TaskCell& cell, int64_t n, uint64_t seed,
                        DistanceScores* by_distance) {
  Generator g(seed);
  NoGrad no_grad;
  std::vector<TaskExample> all;
  for (int64_t k = 0; k < n; ++k) all.push_back(test_example(task, cell, g));
  // passes of about 16384 input tokens: attention memory bounded, and several examples of
  // 4096 characters to a pass (one matrix product per layer instead of several)
  TaskScore s;
  for (size_t done = 0; done < all.size();) {
    std::vector<TaskExample> chunk;
    size_t longest = 0;
    while (done < all.size()) {
      longest = std::max(longest, all[done].text.size());
      if (!chunk.empty() && longest * (chunk.size() + 1) > 16384) break;
      chunk.push_back(all[done++]);
    }
    std::vector<bool> exact;
    const TaskScore c =
        score_answers(model, vocab, chunk, static_cast<int64_t>(done - chunk.size()), &exact);
    s.n += c.n, s.correct += c.correct, s.chars += c.chars, s.correct_chars += c.correct_chars;
    for (size_t i = 0; by_distance && i < chunk.size(); ++i) {
      auto& [count, correct] = (*by_distance)[distance_bucket(chunk[i].distance).first];
      ++count, correct += exact[i];
    }
  }
  return s;
}

// Wilson (1927), "Probable inference, the law of succession, and statistical inference", JASA
// 22(158): the p with |phat - p| <= z sqrt(p (1-p) / n), solved for p (a quadratic):
//   centre = (phat + z^2 / 2n) / (1 + z^2 / n)
//   half   = z / (1 + z^2 / n) * sqrt(phat (1 - phat) / n + z^2 / 4n^2)
// with z = 1.959964, the normal quantile at 97.5%.
ProportionInterval wilson_interval(int64_t correct, int64_t n) {
  if (n <= 0) return {0, 1};
  if (correct < 0 || correct > n)
    fail("wilson_interval: expected 0 <= correct <= n, but got ", correct, " of ", n);
  const double z = 1.959963984540054, N = static_cast<double>(n);
  const double p = static_cast<double>(correct) / N, z2 = z * z;
  const double centre = (p + z2 / (2 * N)) / (1 + z2 / N);
  const double half = z / (1 + z2 / N) * std::sqrt(p * (1 - p) / N + z2 / (4 * N * N));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace poslab
