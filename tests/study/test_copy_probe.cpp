// Copy at a distance, v2 (study/copy_probe.h): the planted and control windows, the
// distances, and the probe on a tiny untrained model.
#include "study/copy_probe.h"

#include <algorithm>
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

TEST_CASE(
    "copy probe v2: in-distribution text planted twice after a lead of val text; the control "
    "shuffles the first copy",
    "[study]") {
  const std::vector<uint16_t> val = fake_val(5000, 20);
  std::vector<uint16_t> train = fake_val(3000, 20);
  std::fill(train.begin(), train.begin() + 2000, 7);  // strings of one character: drawn again
  Generator g(3);
  CopyOptions o;
  o.m = 24, o.lead = 100;
  for (int64_t d : {0, 16, 100, 3000}) {
    const int64_t m = o.m, lead = o.lead;
    CopyExample ex = copy_example(train, val, o, d, g);
    REQUIRE(static_cast<int64_t>(ex.planted.size()) == copy_window_length(o, d));
    REQUIRE(copy_window_length(o, d) == lead + 2 * m + d);
    REQUIRE(ex.control.size() == ex.planted.size());
    // the first copy [lead, lead + m) and the second (the last m) are equal when planted
    const std::vector<uint16_t> first(ex.planted.begin() + lead, ex.planted.begin() + lead + m);
    const std::vector<uint16_t> second(ex.planted.end() - m, ex.planted.end());
    REQUIRE(first == second);
    // m consecutive characters of the train split
    REQUIRE(std::search(train.begin(), train.end(), first.begin(), first.end()) != train.end());
    // the control's first copy: the same characters in another order; all else the same
    std::vector<uint16_t> shuffled(ex.control.begin() + lead, ex.control.begin() + lead + m);
    REQUIRE(shuffled != first);
    std::vector<uint16_t> a = first, b = shuffled;
    std::sort(a.begin(), a.end()), std::sort(b.begin(), b.end());
    REQUIRE(a == b);
    REQUIRE(std::equal(ex.planted.begin(), ex.planted.begin() + lead, ex.control.begin()));
    REQUIRE(
        std::equal(ex.planted.begin() + lead + m, ex.planted.end(), ex.control.begin() + lead + m));
    // the lead and the gap: lead + d consecutive characters of val
    std::vector<uint16_t> text(ex.planted.begin(), ex.planted.begin() + lead);
    text.insert(text.end(), ex.planted.begin() + lead + m, ex.planted.end() - m);
    REQUIRE(std::search(val.begin(), val.end(), text.begin(), text.end()) != val.end());
  }
  REQUIRE_THROWS_WITH(copy_example(train, val, o, 6000, g), Contains("fewer than lead + d"));
  const std::vector<uint16_t> flat(100, 3);
  REQUIRE_THROWS_WITH(copy_example(flat, val, o, 16, g), Contains("equal their own shuffle"));
}

TEST_CASE("copy probe v2: log-spaced distances up to the longest window", "[study]") {
  REQUIRE(copy_distances(4096, 32, 128) ==
          std::vector<int64_t>{16, 32, 64, 128, 256, 512, 1024, 2048, 3904});
  REQUIRE(CopyOptions{}.distances == copy_distances(4096, 32, 128));
  const CopyOptions full = study_copy_options(4096, 200);
  REQUIRE((full.m == 32 && full.lead == 128 && full.n == 200));
  // a toy study's windows of 128: m and lead an eighth of them
  const CopyOptions tiny = study_copy_options(128, 2);
  REQUIRE((tiny.m == 16 && tiny.lead == 16));
  REQUIRE(tiny.distances == std::vector<int64_t>{16, 32, 64, 80});
  REQUIRE_THROWS_WITH(copy_distances(60, 24, 0), Contains("cannot hold"));
}

TEST_CASE("copy probe v2: a tiny untrained model, the same rows from the same seed", "[study]") {
  GPTConfig cfg;
  cfg.vocab_size = 20, cfg.n_layer = 1, cfg.n_head = 2, cfg.n_embd = 8, cfg.block_size = 32;
  GPT model(cfg, 1);
  const std::vector<uint16_t> val = fake_val(3000, 20), train = fake_val(2000, 19);
  CopyOptions o;
  o.m = 8, o.lead = 16, o.distances = {16, 64, 200}, o.n = 5, o.seed = 4, o.batch_tokens = 100;
  const std::vector<CopyRow> rows = copy_probe(model, train, val, o);
  REQUIRE(rows.size() == 3);
  for (size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(rows[i].distance == o.distances[i]);
    REQUIRE(rows[i].n == 5);
    // an untrained model of 20 tokens: about ln 20 = 3.0 nats per character
    REQUIRE(std::isfinite(rows[i].loss_planted));
    REQUIRE(std::abs(rows[i].loss_planted - std::log(20.0)) < 1.0);
    REQUIRE(std::abs(rows[i].loss_control - std::log(20.0)) < 1.0);
    REQUIRE(rows[i].gain == Approx(rows[i].loss_control - rows[i].loss_planted));
    REQUIRE(rows[i].share == Approx(rows[i].gain / rows[i].loss_control));
  }
  // the same seed: the same rows (another batching: the same numbers but for rounding);
  // another seed: other examples
  const std::vector<CopyRow> again = copy_probe(model, train, val, o);
  o.batch_tokens = 100000;
  const std::vector<CopyRow> one_pass = copy_probe(model, train, val, o);
  o.seed = 5;
  const std::vector<CopyRow> other = copy_probe(model, train, val, o);
  for (size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(again[i].loss_planted == rows[i].loss_planted);
    REQUIRE(again[i].loss_control == rows[i].loss_control);
    REQUIRE(one_pass[i].loss_planted == Approx(rows[i].loss_planted).epsilon(1e-5));
    REQUIRE(other[i].loss_planted != rows[i].loss_planted);
  }
  // one distance's rows do not depend on the others in the list
  o.seed = 4, o.distances = {64};
  REQUIRE(copy_probe(model, train, val, o)[0].loss_planted ==
          Approx(rows[1].loss_planted).epsilon(1e-5));
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
  for (int64_t d : copy_distances(4096, o.m, o.lead)) {
    o.distances = {d};
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    const CopyRow r = copy_probe(model, val, val, o)[0];
    const double c = double(std::clock() - c0) / CLOCKS_PER_SEC;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    wall += s, cpu += c;
    std::printf("d %5lld  n %lld  %.2f s wall  %.2f s cpu  (planted %.3f, control %.3f)\n",
                (long long)d, (long long)o.n, s, c, r.loss_planted, r.loss_control);
  }
  std::printf("total %.2f s wall, %.2f s cpu\n", wall, cpu);
}
