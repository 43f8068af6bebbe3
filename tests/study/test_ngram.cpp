// The add-k n-gram reference (study/ngram.h): hand-computed probabilities and losses,
// normalisation, the choice of k, and the shape of the curve on fortunes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "data/corpus.h"
#include "study/ngram.h"
#include "tests/support/temp_dir.h"

using namespace poslab;
using Catch::Contains;

TEST_CASE("ngram: add-k probabilities and the loss of a 2-symbol corpus, by hand", "[ngram]") {
  // train 0 1 0 1 0 0: bigrams 01 10 01 10 00 -> c(01) = 2, c(00) = 1, c(0) = 3;
  // c(10) = 2, c(11) = 0, c(1) = 2. With k = 0.5, V = 2:
  //   P(1|0) = 2.5/4, P(0|0) = 1.5/4, P(0|1) = 2.5/3, P(1|1) = 0.5/3
  const std::vector<uint16_t> train{0, 1, 0, 1, 0, 0};
  NgramModel bigram(train, 2, 2);
  const uint16_t zero[] = {0}, one[] = {1};
  CHECK(bigram.probability(zero, 1, 0.5) == Approx(2.5 / 4));
  CHECK(bigram.probability(zero, 0, 0.5) == Approx(1.5 / 4));
  CHECK(bigram.probability(one, 0, 0.5) == Approx(2.5 / 3));
  CHECK(bigram.probability(one, 1, 0.5) == Approx(0.5 / 3));
  // val 0 1 1: targets 1 (0 -> 1) and 2 (1 -> 1)
  const std::vector<uint16_t> val{0, 1, 1};
  std::vector<NgramCount> c = target_counts(bigram, val, 0);
  REQUIRE(c.size() == 2);
  CHECK(add_k_loss(c, 0.5, 2) == Approx(-(std::log(2.5 / 4) + std::log(0.5 / 3)) / 2));
  // unigram: c(0) = 4, c(1) = 2 of 6; k = 1: P(0) = 5/8, P(1) = 3/8; val targets 0, 1, 2
  NgramModel unigram(train, 1, 2);
  CHECK(unigram.probability({}, 0, 1) == Approx(5.0 / 8));
  CHECK(add_k_loss(target_counts(unigram, val, 0), 1, 2) ==
        Approx(-(std::log(5.0 / 8) + 2 * std::log(3.0 / 8)) / 3));
}

TEST_CASE("ngram: for any history the probabilities sum to 1 over the vocabulary", "[ngram]") {
  const int64_t V = 7;
  std::vector<uint16_t> train(3000);
  uint32_t x = 99;
  for (auto& t : train) x = x * 1664525u + 1013904223u, t = static_cast<uint16_t>((x >> 20) % 5);
  NgramModel trigram(train, 3, V);  // tokens 5 and 6 never occur
  for (double k : {0.001, 0.1, 1.0}) {
    const std::vector<std::vector<uint16_t>> histories{{0, 1}, {4, 4}, {6, 5}};  // last: unseen
    for (const auto& h : histories) {
      double sum = 0;
      for (uint16_t w = 0; w < V; ++w) sum += trigram.probability(h, w, k);
      CHECK(sum == Approx(1).epsilon(1e-12));
    }
    CHECK(trigram.probability(std::vector<uint16_t>{6, 5}, 3, k) == Approx(1.0 / V));
  }
  REQUIRE_THROWS_WITH(trigram.probability(std::vector<uint16_t>{1}, 0, 1),
                      Contains("expects 2 tokens of history, but got 1"));
  REQUIRE_THROWS_WITH(NgramModel(train, 6, 70000), Contains("V^n must fit 64 bits"));
}

TEST_CASE("ngram: the reference rows pick k from the grid by the held-out tail", "[ngram]") {
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 200; ++i) text += "a quick brown fox jumps over a lazy dog\n";
  write_corpus(build_corpus(text), dir.file("data"));
  std::vector<NgramRow> rows = ngram_rows("toy", dir.file("data"));
  REQUIRE(rows.size() == 5);
  const auto& grid = ngram_k_grid();
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].corpus == "toy");
    CHECK(rows[i].n == static_cast<long>(i + 1));
    CHECK(std::find(grid.begin(), grid.end(), rows[i].k) != grid.end());
  }
  // a repeated line whose 4-character histories are each followed by one character only: the
  // 5-gram is nearly certain, and the smallest k (trust the counts most) fits best
  CHECK(rows[4].val_loss < 0.1);
  CHECK(rows[4].k == grid.front());
}

TEST_CASE("ngram: on fortunes the val loss falls from n = 1 to n = 4", "[ngram][slow]") {
  const Corpus c = prepare_corpus("fortunes");
  // a slice keeps the test quick: 400,000 train tokens, 40,000 val tokens
  std::vector<uint16_t> train(c.train.begin(), c.train.begin() + 400000),
      val(c.val.begin(), c.val.begin() + 40000);
  std::vector<NgramRow> rows =
      ngram_reference("fortunes", train, val, static_cast<int64_t>(c.vocab.size()));
  for (int n = 1; n < 4; ++n) {
    INFO("n = " << n << ": " << rows[n - 1].val_loss << " then " << rows[n].val_loss);
    CHECK(rows[n].val_loss < rows[n - 1].val_loss - 0.05);
  }
  CHECK(rows[0].val_loss < std::log(static_cast<double>(c.vocab.size())));  // below uniform
}
