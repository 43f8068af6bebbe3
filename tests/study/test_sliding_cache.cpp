// The run folder's cache of the sliding-window losses (study/sliding_cache.h) and the
// evaluation cache's sliding fields (runner.h, read_eval).
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "data/atomic_file.h"
#include "study/runner.h"
#include "study/sliding_cache.h"
#include "tests/support/temp_dir.h"

using namespace poslab;

namespace {

GPT small_model(uint64_t seed) {
  GPTConfig c;
  c.vocab_size = 9;
  c.n_embd = 16, c.n_layer = 1, c.n_head = 2, c.block_size = 16;
  c.pe.kind = PeKind::rope;
  return GPT(c, seed);
}

std::vector<uint16_t> tokens(int64_t n) {
  std::vector<uint16_t> t(n);
  for (int64_t i = 0; i < n; ++i) t[i] = static_cast<uint16_t>((i * 7 + i / 5) % 9);
  return t;
}

}  // namespace

TEST_CASE("sliding cache: computed once, reused for the same model and split, remade otherwise",
          "[study]") {
  test::TempDir dir;
  GPT model = small_model(1);
  std::vector<uint16_t> val = tokens(150);
  std::vector<double> first = run_sliding_losses(dir.path(), model, val, false);
  REQUIRE(first.size() == 149);
  CHECK(first == sliding_losses(model, val, 16));  // f32 losses survive the float32 file
  const std::string bin = read_file(dir.file("sliding.bin"));
  CHECK(bin.size() == 149 * sizeof(float));
  // reused: the files are not written again (the file's time is set an hour back, so that a
  // rewrite shows even within the file system's clock resolution)
  const auto old =
      std::filesystem::last_write_time(dir.file("sliding.bin")) - std::chrono::hours(1);
  std::filesystem::last_write_time(dir.file("sliding.bin"), old);
  CHECK(run_sliding_losses(dir.path(), model, val, false) == first);
  CHECK(std::filesystem::last_write_time(dir.file("sliding.bin")) == old);
  // unless asked to recompute
  CHECK(run_sliding_losses(dir.path(), model, val, true) == first);
  CHECK(std::filesystem::last_write_time(dir.file("sliding.bin")) != old);
  // another model (other weights): recomputed
  GPT other = small_model(2);
  std::vector<double> second = run_sliding_losses(dir.path(), other, val, false);
  CHECK(second != first);
  CHECK(second == sliding_losses(other, val, 16));
  // another split: recomputed, with its own length
  CHECK(run_sliding_losses(dir.path(), other, tokens(120), false).size() == 119);
  // a sliding.bin that does not match sliding.json (a torn update): recomputed
  write_file_atomic(dir.file("sliding.bin"), std::string(119 * sizeof(float), '\0'));
  CHECK(run_sliding_losses(dir.path(), other, tokens(120), false) ==
        sliding_losses(other, tokens(120), 16));
}

TEST_CASE("sliding cache: a cache of more targets serves fewer; asked for more, it is remade",
          "[study]") {
  test::TempDir dir;
  GPT model = small_model(1);
  std::vector<uint16_t> val = tokens(150);
  std::vector<double> some = run_sliding_losses(dir.path(), model, val, false, 40);
  REQUIRE(some.size() == 40);
  CHECK(read_file(dir.file("sliding.bin")).size() == 40 * sizeof(float));
  CHECK_THAT(read_file(dir.file("sliding.json")),
             Catch::Contains("\"window\":16,\"stride\":4,\"targets\":40,"));
  std::vector<double> more = run_sliding_losses(dir.path(), model, val, false, 100);
  REQUIRE(more.size() == 100);
  CHECK(read_file(dir.file("sliding.bin")).size() == 100 * sizeof(float));
  // the targets both cover have the same losses, up to float rounding of the batched products
  for (size_t i = 0; i < some.size(); ++i) CHECK(more[i] == Approx(some[i]).margin(1e-5));
  // 100 cached: 60 are read from it, not recomputed
  const auto old =
      std::filesystem::last_write_time(dir.file("sliding.bin")) - std::chrono::hours(1);
  std::filesystem::last_write_time(dir.file("sliding.bin"), old);
  std::vector<double> fewer = run_sliding_losses(dir.path(), model, val, false, 60);
  CHECK(std::filesystem::last_write_time(dir.file("sliding.bin")) == old);
  CHECK(fewer == std::vector<double>(more.begin(), more.begin() + 60));
}

TEST_CASE("read_eval reads the sliding losses back, NaN when the file has none", "[study]") {
  test::TempDir dir;
  EvalResult r;
  r.loss = 2.25, r.ppl = std::exp(2.25), r.tokens = 32, r.len = 16, r.windows = 2;
  r.buckets = {{0, 8, 2.5}, {8, 16, 2.0}};
  write_file_atomic(dir.file("plain.json"), r.json() + "\n");
  std::optional<EvalResult> plain = read_eval(dir.file("plain.json"), 2);
  REQUIRE(plain.has_value());
  CHECK(std::isnan(plain->sliding_loss));
  CHECK(std::isnan(plain->buckets[1].sliding_loss));
  r.sliding_loss = 2.125, r.buckets[0].sliding_loss = 2.375, r.buckets[1].sliding_loss = 1.875;
  write_file_atomic(dir.file("sliding.json"), r.json() + "\n");
  std::optional<EvalResult> back = read_eval(dir.file("sliding.json"), 2);
  REQUIRE(back.has_value());
  CHECK(back->loss == r.loss);
  CHECK(back->sliding_loss == r.sliding_loss);
  CHECK(back->buckets[0].sliding_loss == 2.375);
  CHECK(back->buckets[1].sliding_loss == 1.875);
  CHECK_FALSE(
      read_eval(dir.file("sliding.json"), 3).has_value());  // other windows: not this evaluation
}
