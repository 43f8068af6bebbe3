// The trainer, checkpoints and eval: round trips, exact resume, broken files, bad flags.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "tests/support/temp_dir.h"
#include "train/checkpoint.h"
#include "train/eval.h"
#include "train/log.h"
#include "train/trainer.h"

using namespace poslab;
using Catch::Contains;
namespace fs = std::filesystem;

// A small corpus and a tiny model so a step takes milliseconds.
static TrainOptions tiny_run(const test::TempDir& dir, PeKind pe) {
  static const char* text =
      "the quick brown fox jumps over the lazy dog. pack my box with five dozen liquor jugs.\n";
  std::string t;
  for (int i = 0; i < 40; ++i) t += text;
  if (!fs::exists(dir.file("data/val.bin"))) write_corpus(build_corpus(t), dir.file("data"));
  TrainOptions o;
  o.data = dir.file("data");
  o.out = dir.file("run");
  o.model.pe.kind = pe;
  o.model.n_embd = 16, o.model.n_layer = 1, o.model.n_head = 2, o.model.block_size = 16;
  o.batch = 4;
  o.steps = 20;
  o.eval_every = 5;
  o.eval_batches = 2;
  o.quiet = true;
  return o;
}

TEST_CASE("training lowers the loss", "[train]") {
  test::TempDir dir;
  TrainOptions o = tiny_run(dir, PeKind::rope);
  o.steps = 60;
  o.adam.lr = 1e-2;
  TrainResult r = train(o);
  REQUIRE(r.steps == 60);
  // well below the loss of a uniform guess over the vocabulary
  REQUIRE(r.val_loss < std::log(double(load_vocab(o.data + "/vocab.json").size())) - 0.5);
}

TEST_CASE("resume continues exactly: 10 + resume + 10 equals 20, byte for byte", "[train]") {
  for (PeKind pe : {PeKind::learned, PeKind::rope}) {
    test::TempDir a, b;
    TrainOptions straight = tiny_run(a, pe);
    train(straight);
    TrainOptions paused = tiny_run(b, pe);
    paused.stop_after = 10;
    REQUIRE(train(paused).steps == 10);
    REQUIRE(load_checkpoint(b.file("run/model.safetensors")).step == 10);
    paused.stop_after = 0;
    paused.resume = true;
    train(paused);
    REQUIRE(read_file(a.file("run/model.safetensors")) ==
            read_file(b.file("run/model.safetensors")));
    REQUIRE(read_file(a.file("run/state.safetensors")) ==
            read_file(b.file("run/state.safetensors")));
  }
}

TEST_CASE("keep_steps keeps the model of a step; a resume past it stays exact", "[train]") {
  test::TempDir a, b;
  TrainOptions straight = tiny_run(a, PeKind::rope);
  straight.keep_steps = {12};
  train(straight);
  // the kept copy is the model after step 12: the checkpoint of a run paused there
  TrainOptions paused = tiny_run(b, PeKind::rope);
  paused.stop_after = 12;
  train(paused);
  REQUIRE(load_checkpoint(kept_model_path(a.file("run"), 12)).step == 12);
  CHECK(read_file(kept_model_path(a.file("run"), 12)) ==
        read_file(b.file("run/model.safetensors")));
  // keeping a copy changes nothing else: paused without keep_steps, resumed with them, the
  // final model and state equal the straight run's, and the copy is the same file
  paused.stop_after = 0;
  paused.resume = true;
  paused.keep_steps = {12};
  train(paused);
  CHECK_FALSE(fs::exists(kept_model_path(b.file("run"), 12)));  // step 12 was before the resume
  CHECK(read_file(a.file("run/model.safetensors")) == read_file(b.file("run/model.safetensors")));
  CHECK(read_file(a.file("run/state.safetensors")) == read_file(b.file("run/state.safetensors")));
  straight.keep_steps = {21};
  straight.force = true;
  REQUIRE_THROWS_WITH(train(straight), Contains("keep_steps: expected steps in 1..--steps 20"));
}

TEST_CASE("wsd: every step's learning rate is the formula's", "[train]") {
  LrSchedule c{Schedule::wsd, 10, 100, 1e-2, 1e-3, 0.2};
  REQUIRE(c.decay_start() == 80);
  for (int64_t s = 0; s < 100; ++s) {
    double want = s < 10 ? 1e-2 * (s + 1) / 10 : s < 80 ? 1e-2 : 1e-2 - 9e-3 * (s - 79) / 20.0;
    CHECK(lr_at(c, s) == Approx(want).epsilon(1e-14));
  }
  CHECK(lr_at(c, 99) == Approx(1e-3).epsilon(1e-14));  // ends at min_lr
  // the constant phase does not depend on the total: a longer run's first 80 steps are the same
  LrSchedule longer = c;
  longer.total = 400;
  for (int64_t s = 0; s < 80; ++s) CHECK(lr_at(longer, s) == lr_at(c, s));
  // cosine as before: max at the end of the warmup, min at the end
  LrSchedule cosine{Schedule::cosine, 10, 100, 1e-2, 1e-3, 0.2};
  CHECK(lr_at(cosine, 10) == Approx(1e-2));
  CHECK(lr_at(cosine, 55) == Approx(1e-3 + 9e-3 * 0.5 * (1 + std::cos(M_PI * 0.5))));
  REQUIRE_THROWS_WITH(parse_schedule("linear"), Contains("cosine|wsd"));
}

TEST_CASE("wsd in the trainer: the log's learning rates are lr_at's", "[train]") {
  test::TempDir a;
  TrainOptions o = tiny_run(a, PeKind::rope);
  o.schedule = Schedule::wsd;
  o.eval_every = 1;
  train(o);
  const LrSchedule c = lr_schedule(o);
  REQUIRE(c.warmup == 2);  // min(100, 20 / 10)
  std::vector<LogRow> log = read_log(a.file("run/log.csv"));
  REQUIRE(log.size() == 20);
  for (const LogRow& r : log) CHECK(r.lr == Approx(lr_at(c, r.step - 1)).epsilon(1e-5));
  CHECK(log[15].lr == Approx(o.adam.lr));                      // step 16: the constant phase
  CHECK(log[19].lr == Approx(o.adam.lr * 0.1).epsilon(1e-5));  // the last step: min
}

TEST_CASE("a cooldown branch equals a run trained straight to its budget, byte for byte",
          "[train]") {
  for (PeKind pe : {PeKind::learned, PeKind::rope}) {
    // the long run (40 steps) keeps its state at 8, where a 10-step run starts decaying
    test::TempDir a, b;
    TrainOptions longer = tiny_run(a, pe);
    longer.schedule = Schedule::wsd;
    longer.warmup = 4;
    longer.steps = 40;
    longer.keep_steps = {8};
    train(longer);
    TrainOptions straight = tiny_run(b, pe);
    straight.schedule = Schedule::wsd;
    straight.warmup = 4;
    straight.steps = 10;
    REQUIRE(lr_schedule(straight).decay_start() == 8);
    train(straight);
    TrainOptions branch = straight;
    branch.out = b.file("branch");
    branch.branch_from = kept_state_path(a.file("run"), 8);
    train(branch);
    CHECK(read_file(b.file("run/model.safetensors")) ==
          read_file(b.file("branch/model.safetensors")));
    CHECK(read_file(b.file("run/state.safetensors")) ==
          read_file(b.file("branch/state.safetensors")));
    // its log starts with the long run's rows up to step 8
    std::vector<LogRow> log = read_log(b.file("branch/log.csv"));
    REQUIRE(log.size() == 2);
    CHECK(log[0].step == 5);
    CHECK(log[0].val_loss == read_log(a.file("run/log.csv"))[0].val_loss);
    CHECK(log[1].step == 10);
  }
}

TEST_CASE("a cooldown branch refuses what would not equal a straight run", "[train]") {
  test::TempDir a;
  TrainOptions longer = tiny_run(a, PeKind::rope);
  longer.schedule = Schedule::wsd;
  longer.warmup = 4;
  longer.steps = 40;
  longer.keep_steps = {12};
  train(longer);
  TrainOptions branch = longer;
  branch.out = a.file("branch");
  branch.keep_steps.clear();
  branch.steps = 10;  // decays from 8: step 12 is past it
  branch.branch_from = kept_state_path(a.file("run"), 12);
  REQUIRE_THROWS_WITH(train(branch), Contains("past this run's decay start 8"));
  branch.schedule = Schedule::cosine;
  REQUIRE_THROWS_WITH(train(branch), Contains("needs --schedule wsd"));
}

// A kill between the state write and the weights write leaves model.safetensors one
// checkpoint behind state.safetensors (found by tests/train/test_killed.cpp under load).
TEST_CASE("a model file behind the state is rewritten on resume, also after the last step",
          "[train]") {
  test::TempDir a, b;
  TrainOptions straight = tiny_run(a, PeKind::rope);
  train(straight);
  TrainOptions o = tiny_run(b, PeKind::rope);
  o.stop_after = 10;
  train(o);
  std::string old_model = read_file(b.file("run/model.safetensors"));  // step 10
  o.stop_after = 15;
  o.resume = true;
  train(o);
  // mid-run: state at 15, weights at 10
  write_file_atomic(b.file("run/model.safetensors"), old_model);
  o.stop_after = 0;
  train(o);
  REQUIRE(read_file(a.file("run/model.safetensors")) == read_file(b.file("run/model.safetensors")));
  // after the last step: state at 20, weights at 10; the resume repairs and succeeds
  write_file_atomic(b.file("run/model.safetensors"), old_model);
  REQUIRE(train(o).steps == 20);
  REQUIRE(read_file(a.file("run/model.safetensors")) == read_file(b.file("run/model.safetensors")));
  // a run that really finished is still refused
  REQUIRE_THROWS_WITH(train(o), Contains("already finished"));
}

TEST_CASE("save -> load gives the same loss bit for bit", "[train]") {
  test::TempDir dir;
  TrainOptions o = tiny_run(dir, PeKind::alibi);
  train(o);
  Checkpoint ck = load_checkpoint(dir.file("run/model.safetensors"));
  save_checkpoint(*ck.model, ck.step, dir.file("copy.safetensors"));
  Checkpoint ck2 = load_checkpoint(dir.file("copy.safetensors"));
  auto toks =
      load_tokens(dir.file("data/train.bin"), load_vocab(dir.file("data/vocab.json")).size());
  EvalResult r1 = evaluate(*ck.model, toks, 16, 4, 4, "train"),
             r2 = evaluate(*ck2.model, toks, 16, 4, 4, "train");
  REQUIRE(std::memcmp(&r1.loss, &r2.loss, sizeof(double)) == 0);
  REQUIRE(read_file(dir.file("run/model.safetensors")) == read_file(dir.file("copy.safetensors")));
}

TEST_CASE("an existing run is never overwritten without --resume or --force", "[train][errors]") {
  test::TempDir dir;
  TrainOptions o = tiny_run(dir, PeKind::none);
  o.steps = 2;
  train(o);
  std::string before = read_file(dir.file("run/model.safetensors"));
  REQUIRE_THROWS_WITH(train(o),
                      Contains("already holds a run; pass --resume to continue it or --force"));
  REQUIRE(read_file(dir.file("run/model.safetensors")) == before);
  o.out = "/proc/poslab-cannot-write-here";
  REQUIRE_THROWS_WITH(train(o), Contains("/proc/poslab-cannot-write-here"));
}

TEST_CASE("flags out of range are named errors", "[train][errors]") {
  test::TempDir dir;
  TrainOptions o = tiny_run(dir, PeKind::rope);
  o.steps = 0;
  REQUIRE_THROWS_WITH(validate(o),
                      Contains("--steps: expected a positive number of steps, but got 0"));
  o = tiny_run(dir, PeKind::rope);
  o.model.block_size = 0;
  REQUIRE_THROWS_WITH(validate(o), Contains("--ctx"));
  o = tiny_run(dir, PeKind::rope);
  o.model.n_head = 3;
  REQUIRE_THROWS_WITH(validate(o),
                      Contains("--heads: expected a head count that divides --d = 16"));
  o = tiny_run(dir, PeKind::rope);
  o.model.n_embd = 12, o.model.n_head = 4;
  REQUIRE_THROWS_WITH(validate(o), Contains("even head dim"));
  o = tiny_run(dir, PeKind::none);
  o.model.causal = false;
  REQUIRE_THROWS_WITH(validate(o), Contains("use --objective mlm"));
}

TEST_CASE("a NaN loss stops training naming the step, and the last checkpoint stays",
          "[train][errors]") {
  test::TempDir dir;
  TrainOptions o = tiny_run(dir, PeKind::rope);
  o.adam.lr = 1e38;  // finite but huge weights after the first update: the next loss is NaN
  o.warmup = 0;
  o.steps = 5;
  o.eval_every = 1;
  REQUIRE_THROWS_WITH(train(o),
                      Contains("step 2: the loss is") && Contains("last good checkpoint"));
  REQUIRE(load_checkpoint(dir.file("run/model.safetensors")).step == 1);
}

TEST_CASE("non-finite weights stop training naming the step and the tensor; none is saved",
          "[train][errors]") {
  test::TempDir dir;
  TrainOptions o = tiny_run(dir, PeKind::rope);
  o.steps = 5;
  o.eval_every = 1;
  o.stop_after = 2;
  train(o);          // a good checkpoint at step 2
  o.adam.lr = 1e39;  // past the float range: the next update makes the weights inf/NaN
  o.stop_after = 0;
  o.resume = true;
  REQUIRE_THROWS_WITH(train(o), Contains("step 3") && Contains("transformer.") &&
                                    Contains("non-finite") && Contains("last good checkpoint"));
  Checkpoint c = load_checkpoint(dir.file("run/model.safetensors"));
  REQUIRE(c.step == 2);
  for (const NamedParam& p : c.model->parameters()) REQUIRE(kernel::all_finite(p.tensor));
}

// ---- checkpoints that lie ----

static std::string valid_checkpoint(const test::TempDir& dir) {
  GPTConfig c;
  c.vocab_size = 5, c.n_layer = 1, c.n_head = 2, c.n_embd = 4, c.block_size = 8,
  c.pe.kind = PeKind::learned;
  GPT m(c, 1);
  save_checkpoint(m, 3, dir.file("ok.safetensors"));
  return read_file(dir.file("ok.safetensors"));
}

TEST_CASE("broken checkpoints get errors naming the file and the tensor", "[train][errors]") {
  test::TempDir dir;
  std::string ok = valid_checkpoint(dir);
  auto load_bytes = [&](const std::string& bytes) {
    write_file_atomic(dir.file("bad.safetensors"), bytes);
    return load_checkpoint(dir.file("bad.safetensors"));
  };
  REQUIRE_NOTHROW(load_bytes(ok));
  REQUIRE_THROWS_WITH(load_bytes(ok.substr(0, ok.size() / 2)), Contains("bad.safetensors"));
  std::string big = ok;
  uint64_t huge = 1ull << 40;
  std::memcpy(big.data(), &huge, 8);
  REQUIRE_THROWS_WITH(load_bytes(big), Contains("bad.safetensors") && Contains("header"));
  // a wrong shape for one tensor: rewrite the config so wte should be (6,4)
  uint64_t n;
  std::memcpy(&n, ok.data(), 8);
  std::string header = ok.substr(8, n), rest = ok.substr(8 + n);
  std::string h2 = header;
  h2.replace(h2.find("\"vocab_size\":\"5\""), 16, "\"vocab_size\":\"6\"");
  REQUIRE_THROWS_WITH(load_bytes(ok.substr(0, 8) + h2 + rest),
                      Contains("transformer.wte.weight") && Contains("(5,4)") && Contains("(6,4)"));
  // a missing tensor: rename ln_f's bias so it no longer matches
  std::string h3 = header;
  h3.replace(h3.find("transformer.ln_f.bias"), 21, "transformer.ln_f.biaz");
  REQUIRE_THROWS_WITH(load_bytes(ok.substr(0, 8) + h3 + rest),
                      Contains("'transformer.ln_f.bias' is missing"));
  // a wrong dtype
  std::string h4 = header;
  h4.replace(h4.find("F32"), 3, "F16");
  REQUIRE_THROWS_WITH(load_bytes(ok.substr(0, 8) + h4 + rest), Contains("F16"));
  // an absurd config
  std::string h5 = header;
  h5.replace(h5.find("\"n_head\":\"2\""), 12, "\"n_head\":\"3\"");
  REQUIRE_THROWS_WITH(load_bytes(ok.substr(0, 8) + h5 + rest), Contains("--heads"));
}

TEST_CASE("eval follows the protocol: windows, tokens, buckets, and clear length errors",
          "[train]") {
  test::TempDir dir;
  TrainOptions o = tiny_run(dir, PeKind::learned);
  o.steps = 2;
  train(o);
  Checkpoint ck = load_checkpoint(dir.file("run/model.safetensors"));
  auto vocab = load_vocab(dir.file("data/vocab.json"));
  auto val = load_tokens(dir.file("data/val.bin"), vocab.size());
  int64_t L = 8;
  EvalResult r = evaluate(*ck.model, val, L, 0, 4, "val");
  REQUIRE(r.windows == (static_cast<int64_t>(val.size()) - 1) / L);
  REQUIRE(r.tokens == L * r.windows);
  REQUIRE(r.buckets.size() == 4);
  REQUIRE(r.buckets[3].end == 8);
  double mean = 0;
  for (auto& b : r.buckets) mean += b.loss / 4;
  REQUIRE(mean == Approx(r.loss).epsilon(1e-9));  // equal-size buckets average to the loss
  REQUIRE(r.ppl == Approx(std::exp(r.loss)));
  REQUIRE(evaluate(*ck.model, val, L, 3, 4, "val").windows == 3);
  REQUIRE_THROWS_WITH(evaluate(*ck.model, val, 32, 1, 4, "val"),
                      Contains("L = 32") && Contains("max_len = 16"));
  std::vector<uint16_t> short_split(5, 1);
  REQUIRE_THROWS_WITH(evaluate(*ck.model, short_split, 8, 0, 4, "val"),
                      Contains("holds 5 tokens, fewer than --len + 1 = 9"));
}

TEST_CASE("log.csv: training throughput, and evaluation time in its own column", "[train]") {
  test::TempDir dir;
  TrainOptions o = tiny_run(dir, PeKind::rope);
  o.eval_every = 5;
  o.eval_batches = 20;  // evaluations cost more than the steps between them
  train(o);
  const std::string text = read_file(o.out + "/log.csv");
  REQUIRE(text.rfind("step,lr,train_loss,val_loss,grad_norm,tokens_per_s,eval_seconds\n", 0) == 0);
  std::vector<LogRow> log = read_log(o.out + "/log.csv");
  REQUIRE(log.size() == 4);
  for (size_t i = 0; i < log.size(); ++i) {
    CHECK(log[i].step == static_cast<int64_t>(5 * (i + 1)));
    CHECK(log[i].tokens_per_s > 0);
    CHECK(log[i].eval_seconds > 0);
    if (i) CHECK(log[i].eval_seconds > log[i - 1].eval_seconds);  // cumulative
  }
  // A log written before eval_seconds existed still reads, with the column missing as NaN.
  write_file_atomic(dir.file("old.csv"),
                    "step,lr,train_loss,val_loss,grad_norm,tokens_per_s\n5,0.001,3,3.1,0.5,900\n");
  std::vector<LogRow> old = read_log(dir.file("old.csv"));
  REQUIRE(old.size() == 1);
  CHECK(old[0].tokens_per_s == 900);
  CHECK(std::isnan(old[0].eval_seconds));
}

TEST_CASE("learned: rows past the training length keep their initial values through training",
          "[train]") {
  // Training windows use positions 0..T0-1 only, so no gradient reaches rows T0..max_len-1,
  // and wpe gets no weight decay (docs/model.md): AdamW leaves those rows exactly as they were
  // initialised, while the trained rows move (docs/guide.md, section 2, exercise 2).
  test::TempDir dir;
  TrainOptions o = tiny_run(dir, PeKind::learned);
  o.model.pe.max_len = 32;  // T0 = block_size = 16
  train(o);
  Checkpoint trained = load_checkpoint(o.out + "/model.safetensors");
  GPT init(trained.model->config(), o.seed);
  auto wpe = [](const GPT& m) {
    for (const NamedParam& p : m.parameters())
      if (p.name == "transformer.wpe.weight") {
        REQUIRE_FALSE(p.decay);
        return p.tensor.to_vector();
      }
    FAIL("no transformer.wpe.weight");
    return std::vector<double>{};
  };
  const std::vector<double> before = wpe(init), after = wpe(*trained.model);
  const size_t C = before.size() / 32, T0 = 16;
  REQUIRE(std::equal(before.begin() + T0 * C, before.end(), after.begin() + T0 * C));
  REQUIRE_FALSE(std::equal(before.begin(), before.begin() + T0 * C, after.begin()));
}
