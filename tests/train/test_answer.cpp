// The answer objective: task corpora with an answer mask (data/answer_mask.h), aligned
// sampling, the trainer's refusals, exact resume.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <set>

#include "data/answer_mask.h"
#include "data/atomic_file.h"
#include "data/corpus.h"
#include "tests/support/temp_dir.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

using namespace poslab;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kE = 9;  // example length: windows of T = 8

// n examples of kE tokens; token t of example k is id (k * kE + t) % vocab, so a row of a batch
// tells where it was read from. Example k's answer is its tokens [3 + k % 4, 3 + k % 4 + 2).
void hand_corpus(int64_t n, int64_t vocab, std::vector<uint16_t>& tokens,
                 std::vector<uint8_t>& marks) {
  for (int64_t k = 0; k < n; ++k)
    for (int64_t t = 0; t < kE; ++t) {
      tokens.push_back(static_cast<uint16_t>((k * kE + t) % vocab));
      int64_t a = 3 + k % 4;
      marks.push_back(t == 0                ? mark_example_start
                      : t >= a && t < a + 2 ? mark_answer
                                            : mark_context);
    }
}

// A task-like corpus on disk: "xy=yx\n" style examples of two letters from {a, b}, padded.
std::string write_toy_task(const test::TempDir& dir) {
  Corpus c;
  c.vocab = {"\n", "=", "_", "a", "b"};
  std::vector<uint8_t> train_marks, val_marks;
  Generator g(5);
  for (int split = 0; split < 2; ++split)
    for (int k = 0; k < (split ? 16 : 64); ++k) {
      uint16_t x = 3 + g.next_u64() % 2, y = 3 + g.next_u64() % 2;
      std::vector<uint16_t> ids{x, y, 1, y, x, 0, 2, 2, 2};  // "xy=yx\n___"
      std::vector<uint8_t> m{2, 0, 0, 1, 1, 1, 0, 0, 0};
      auto& to = split ? c.val : c.train;
      to.insert(to.end(), ids.begin(), ids.end());
      auto& mo = split ? val_marks : train_marks;
      mo.insert(mo.end(), m.begin(), m.end());
    }
  c.parts = {{"toy", c.train.size(), c.val.size()}};
  write_corpus(c, dir.file("task"));
  write_answer_mask(dir.file("task/train.mask"), train_marks);
  write_answer_mask(dir.file("task/val.mask"), val_marks);
  return dir.file("task");
}

TrainOptions answer_run(const test::TempDir& dir) {
  TrainOptions o;
  o.data = write_toy_task(dir);
  o.out = dir.file("run");
  o.objective = Objective::answer;
  o.model.pe.kind = PeKind::rope;
  o.model.n_embd = 16, o.model.n_layer = 1, o.model.n_head = 2, o.model.block_size = kE - 1;
  o.batch = 8, o.steps = 20, o.eval_every = 5, o.eval_batches = 2;
  o.quiet = true;
  return o;
}

}  // namespace

TEST_CASE("answer batches: whole examples from their start; targets -1 exactly off the answer",
          "[train]") {
  std::vector<uint16_t> tokens;
  std::vector<uint8_t> marks;
  hand_corpus(7, 1000, tokens, marks);
  Generator g(3);
  const int64_t B = 40, T = kE - 1;
  Batch b = sample_answer_batch(tokens, marks, B, T, g);
  REQUIRE(b.x.shape == std::vector<int64_t>{B, T});
  std::set<int32_t> starts;
  for (int64_t i = 0; i < B; ++i) {
    const int32_t o = b.x.data[i * T];
    REQUIRE(o % kE == 0);  // aligned: the row is one example, read from its first token
    starts.insert(o);
    for (int64_t t = 0; t < T; ++t) {
      REQUIRE(b.x.data[i * T + t] == o + t);
      const bool answer = marks[o + t + 1] == mark_answer;
      REQUIRE(b.y.data[i * T + t] == (answer ? o + t + 1 : -1));
    }
  }
  REQUIRE(starts.size() == 7);  // 40 draws reach every one of the 7 examples
  // one draw per example: a generator in the same state gives the same batch
  Generator g2(3);
  REQUIRE(sample_answer_batch(tokens, marks, B, T, g2).y.data == b.y.data);
  REQUIRE_THROWS_WITH(sample_answer_batch(tokens, marks, 2, T + 1, g),
                      Contains("whole examples of --ctx + 1 = 10 tokens"));
}

TEST_CASE("an answer mask is checked: size, values, example starts, an answer each",
          "[train][errors]") {
  test::TempDir dir;
  std::vector<uint16_t> tokens;
  std::vector<uint8_t> good;
  hand_corpus(3, 1000, tokens, good);
  const std::string p = dir.file("m.mask");
  write_answer_mask(p, good);
  AnswerMask m = load_answer_mask(p, tokens.size());
  REQUIRE(m.example_len == kE);
  REQUIRE(m.marks == good);
  REQUIRE_THROWS_WITH(load_answer_mask(p, tokens.size() + 1),
                      Contains("m.mask: expected one byte per token of its split (28 bytes)"));
  auto refused = [&](std::vector<uint8_t> bad, const std::string& what) {
    write_file_atomic(p, std::string(bad.begin(), bad.end()));
    REQUIRE_THROWS_WITH(load_answer_mask(p, bad.size()), Contains(what));
  };
  std::vector<uint8_t> bad = good;
  bad[4] = 7;
  refused(bad, "m.mask: byte 4: expected a mark 0, 1 or 2, but got 7");
  bad = good;
  bad[0] = 0;
  refused(bad, "m.mask: byte 0: expected 2");
  bad = good;
  bad[kE + 3] = mark_example_start;
  refused(bad, "byte 12: expected a 2 exactly where an example starts (every 9 bytes");
  bad = good;
  std::fill(bad.begin() + 2 * kE + 1, bad.end(), mark_context);
  refused(bad, "m.mask: the example at byte 18 holds no answer token");
  bad = good;
  bad.resize(2 * kE + 4);
  refused(bad, "22 tokens are not a whole number of examples of 9 tokens");
  REQUIRE_THROWS_WITH(write_answer_mask(p, {2, 3}), Contains("entry 1 is 3"));
}

TEST_CASE("train --objective answer refuses a corpus without its mask, or the wrong --ctx",
          "[train][errors]") {
  test::TempDir dir;
  TrainOptions o = answer_run(dir);
  fs::remove(dir.file("task/val.mask"));
  REQUIRE_THROWS_WITH(
      train(o), Contains("--objective answer: " + dir.file("task/val.mask") + " does not exist"));
  fs::remove(dir.file("task/train.mask"));
  REQUIRE_THROWS_WITH(train(o), Contains(dir.file("task/train.mask") + " does not exist"));
  test::TempDir dir2;
  o = answer_run(dir2);
  o.model.block_size = 12;
  REQUIRE_THROWS_WITH(train(o),
                      Contains("--ctx 12: the examples of " + dir2.file("task/train.mask") +
                               " are 9 tokens long, so train with --ctx 8"));
  o = answer_run(dir2);
  o.model.causal = false;
  REQUIRE_THROWS_WITH(validate(o), Contains("--causal false with --objective answer"));
  REQUIRE_THROWS_WITH(parse_objective("span"),
                      Contains("--objective: expected one of lm|mlm|answer, but got 'span'"));
}

TEST_CASE("answer training learns the answer; its val loss is the answer loss", "[train]") {
  test::TempDir dir;
  TrainOptions o = answer_run(dir);
  o.steps = 200;
  o.adam.lr = 1e-2;
  TrainResult r = train(o);
  // "xy=yx\n": the first answer letter is a coin flip to a model that ignores the prompt
  // (log 2 = 0.69 per letter); copying from the prompt brings the mean answer loss near 0 (0.0004
  // after these 200 steps)
  REQUIRE(r.val_loss < 0.1);
}

TEST_CASE("answer objective: 10 steps + resume + 10 equals 20, byte for byte", "[train]") {
  test::TempDir a, b;
  TrainOptions straight = answer_run(a);
  train(straight);
  TrainOptions paused = answer_run(b);
  paused.stop_after = 10;
  REQUIRE(train(paused).steps == 10);
  paused.stop_after = 0;
  paused.resume = true;
  train(paused);
  REQUIRE(read_file(a.file("run/model.safetensors")) == read_file(b.file("run/model.safetensors")));
  REQUIRE(read_file(a.file("run/state.safetensors")) == read_file(b.file("run/state.safetensors")));
}
