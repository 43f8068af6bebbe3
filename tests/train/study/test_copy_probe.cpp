// Copy at a distance (train/study/copy_probe.h): the planted and control windows, the
// distances, and the probe on a tiny untrained model.
#include "train/study/copy_probe.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

using namespace poslab;
using Catch::Contains;

namespace {

std::vector<uint16_t> fake_val(int64_t n, uint16_t vocab) {
  std::vector<uint16_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<uint16_t>((i * 7 + i / 13) % vocab);
  return v;
}

}  // namespace

TEST_CASE("copy probe: planted and control differ only in the first copy", "[study]") {
  const std::vector<uint16_t> val = fake_val(5000, 20);
  const std::vector<uint16_t> alphabet = copy_alphabet(
      {"\n", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o"});
  REQUIRE(alphabet.size() == 15);
  REQUIRE(alphabet.front() == 1);  // the newline (id 0) is left out
  Generator g(3);
  for (int64_t d : {0, 16, 100, 4048}) {
    const int64_t m = 24;
    CopyExample ex = copy_example(val, m, d, alphabet, g);
    REQUIRE(static_cast<int64_t>(ex.planted.size()) == 2 * m + d);
    REQUIRE(ex.control.size() == ex.planted.size());
    // the first copy [0, m) and the second [m + d, 2m + d) are equal in the planted window
    const std::vector<uint16_t> first(ex.planted.begin(), ex.planted.begin() + m);
    const std::vector<uint16_t> second(ex.planted.begin() + m + d, ex.planted.end());
    REQUIRE(first == second);
    for (uint16_t c : first) REQUIRE((c >= 1 && c <= 15));  // from the alphabet
    // the control's first copy is another string; everything after it is the same
    REQUIRE(!std::equal(first.begin(), first.end(), ex.control.begin()));
    REQUIRE(std::equal(ex.planted.begin() + m, ex.planted.end(), ex.control.begin() + m));
    // between the copies: d consecutive characters of val
    if (d > 0) {
      auto at =
          std::search(val.begin(), val.end(), ex.planted.begin() + m, ex.planted.begin() + m + d);
      REQUIRE(at != val.end());
    }
  }
  REQUIRE_THROWS_WITH(copy_example(val, 24, 6000, alphabet, g), Contains("fewer than the gap"));
  REQUIRE_THROWS_WITH(copy_example(val, 24, 16, {3}, g), Contains("at least 2 tokens"));
}

TEST_CASE("copy probe: log-spaced distances up to the longest window", "[study]") {
  REQUIRE(copy_distances(4096, 24) ==
          std::vector<int64_t>{16, 32, 64, 128, 256, 512, 1024, 2048, 4048});
  REQUIRE(copy_distances(256, 24) == std::vector<int64_t>{16, 32, 64, 128, 208});
  REQUIRE(CopyOptions{}.distances == copy_distances(4096, 24));
  REQUIRE_THROWS_WITH(copy_distances(60, 24), Contains("cannot hold two copies"));
}

TEST_CASE("copy probe: a tiny untrained model, the same rows from the same seed", "[study]") {
  GPTConfig cfg;
  cfg.vocab_size = 20, cfg.n_layer = 1, cfg.n_head = 2, cfg.n_embd = 8, cfg.block_size = 32;
  GPT model(cfg, 1);
  const std::vector<uint16_t> val = fake_val(3000, 20);
  CopyOptions o;
  o.m = 8, o.distances = {16, 64, 200}, o.n = 5, o.seed = 4, o.batch_tokens = 100;
  const std::vector<CopyRow> rows = copy_probe(model, val, o);
  REQUIRE(rows.size() == 3);
  for (size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(rows[i].distance == o.distances[i]);
    REQUIRE(rows[i].n == 5);
    // an untrained model of 20 tokens: about ln 20 = 3.0 nats per character
    REQUIRE(std::isfinite(rows[i].loss_planted));
    REQUIRE(std::abs(rows[i].loss_planted - std::log(20.0)) < 1.0);
    REQUIRE(std::abs(rows[i].loss_control - std::log(20.0)) < 1.0);
  }
  // the same seed: the same rows (another batching: the same numbers but for rounding);
  // another seed: other examples
  const std::vector<CopyRow> again = copy_probe(model, val, o);
  o.batch_tokens = 100000;
  const std::vector<CopyRow> one_pass = copy_probe(model, val, o);
  o.seed = 5;
  const std::vector<CopyRow> other = copy_probe(model, val, o);
  for (size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(again[i].loss_planted == rows[i].loss_planted);
    REQUIRE(again[i].loss_control == rows[i].loss_control);
    REQUIRE(one_pass[i].loss_planted == Approx(rows[i].loss_planted).epsilon(1e-5));
    REQUIRE(other[i].loss_planted != rows[i].loss_planted);
  }
  // a token cap lowers n where windows are long: 2 (2m + d - 1) = 62 input tokens per example
  // at d = 16, 158 at 64, 416 at 193; a distance's first examples stay the same
  o.max_tokens = 1000, o.distances = {16, 64, 193}, o.seed = 4;
  const std::vector<CopyRow> capped = copy_probe(model, val, o);
  REQUIRE(capped[0].n == 5);  // 1000 / 62 = 16, at most n
  REQUIRE(capped[1].n == 5);
  REQUIRE(capped[2].n == 2);  // 1000 / 416
  REQUIRE(capped[1].loss_planted == Approx(rows[1].loss_planted).epsilon(1e-5));
  REQUIRE(copy_examples_at(o, 10000) == 1);
  o.max_tokens = 0;
  // one distance's rows do not depend on the others in the list
  o.seed = 4, o.distances = {64};
  REQUIRE(copy_probe(model, val, o)[0].loss_planted == Approx(rows[1].loss_planted).epsilon(1e-5));
}

// Not run by default: the probe's cost on an untrained model of the study's size (d 128, 4
// layers, 4 heads, 100 tokens), n examples per distance (POSLAB_COPY_N, default 20): wall and
// CPU seconds (all threads) per distance on stdout. `test_study "[.copy_timing]"`.
TEST_CASE("copy probe: the cost per distance at the study's model size", "[.copy_timing]") {
  GPTConfig cfg;
  cfg.vocab_size = 100, cfg.n_layer = 4, cfg.n_head = 4, cfg.n_embd = 128, cfg.block_size = 256;
  cfg.pe.kind = PeKind::rope;
  GPT model(cfg, 1);
  const char* env = std::getenv("POSLAB_COPY_N");
  CopyOptions o;
  o.n = env ? std::atoll(env) : 20;
  const std::vector<uint16_t> val = fake_val(200000, 100);
  double wall = 0, cpu = 0;
  for (int64_t d : copy_distances(4096, o.m)) {
    o.distances = {d};
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    const CopyRow r = copy_probe(model, val, o)[0];
    const double c = double(std::clock() - c0) / CLOCKS_PER_SEC;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    wall += s, cpu += c;
    std::printf("d %5lld  n %lld  %.2f s wall  %.2f s cpu  (planted %.3f, control %.3f)\n",
                (long long)d, (long long)o.n, s, c, r.loss_planted, r.loss_control);
  }
  std::printf("total %.2f s wall, %.2f s cpu\n", wall, cpu);
}
