// `poslab train` and the one-file trainer (nn/gpt_reference.cpp, the program
// nn/gpt_reference_main.cpp builds) on the same corpus, seed and flags: the same batches, and
// the same first steps (loss, gradient norm, val loss and the weights after them) within f32
// tolerance, for every scheme and option; and a RoPE fine-tune under linear scaling.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "data/corpus.h"
#include "tests/nn/gpt_reference_adapter.h"
#include "tests/support/command.h"
#include "tests/support/temp_dir.h"
#include "train/checkpoint.h"
#include "train/log.h"
#include "train/trainer.h"

using namespace poslab;
namespace ref = poslab::reference;

namespace {

// A small corpus and a tiny model: a step takes milliseconds in either implementation.
TrainOptions reference_run(const test::TempDir& dir, PeKind pe) {
  static const char* text =
      "the quick brown fox jumps over the lazy dog. pack my box with five dozen liquor jugs.\n";
  std::string t;
  for (int i = 0; i < 40; ++i) t += text;
  if (!std::filesystem::exists(dir.file("data/val.bin")))
    write_corpus(build_corpus(t), dir.file("data"));
  TrainOptions o;
  o.data = dir.file("data"), o.out = dir.file("run");
  o.model.pe.kind = pe;
  o.model.n_embd = 16, o.model.n_layer = 2, o.model.n_head = 2, o.model.block_size = 16;
  o.batch = 4, o.steps = 6, o.warmup = 2, o.eval_every = 1, o.eval_batches = 2;
  o.adam.lr = 1e-2;  // large steps: a wrong update shows
  o.quiet = true;
  o.force = true;
  return o;
}

// The reference's settings for the run `o` (its corpus gives the vocabulary).
ref::TrainSettings settings_of(const TrainOptions& o) {
  ref::TrainSettings s;
  s.steps = o.steps, s.batch = o.batch, s.warmup = o.warmup, s.lr = o.adam.lr;
  s.min_lr_ratio = o.min_lr_ratio, s.seed = o.seed;
  return s;
}

// Trains `o` with poslab's trainer and the same steps with the reference, from the reference's
// `run` (its weights: its own initialisation, or a checkpoint's); then compares, step by step,
// the loss and gradient norm of log.csv (6 significant digits) and the val loss, and at the end
// every weight. f32 (the trainer) against double (the reference): losses, norms and val losses
// agree to 1.5e-6, 4.3e-6 and 1.4e-6 here (the log's 6 digits alone round by up to 1e-6):
// 2e-5 leaves room for another CPU's sums. An Adam step moves a weight by up to lr whatever the
// size of its gradient, so where a gradient is small against rounding the two drift apart
// faster: 2.4e-4 at most here (FIRE's biases; most weights below 2e-5), after 6 steps of
// lr = 1e-2. Weights are compared to lr / 10: a wrong update of any kind is a share of lr.
void compare(const TrainOptions& o, ref::Run& run) {
  train(o);
  const std::vector<LogRow> log = read_log(o.out + "/log.csv");
  REQUIRE(static_cast<int64_t>(log.size()) == o.steps);
  const std::vector<std::string> vocab = load_vocab(o.data + "/vocab.json");
  const std::vector<uint16_t> tokens = load_tokens(o.data + "/train.bin", vocab.size()),
                              val = load_tokens(o.data + "/val.bin", vocab.size());
  for (int64_t s = 0; s < o.steps; ++s) {
    INFO("step " << s + 1);
    double norm = 0;
    const double loss = ref::train_step(run, tokens, s, &norm);
    CHECK(std::abs(log[s].train_loss - loss) < 2e-5 * loss);
    CHECK(std::abs(log[s].grad_norm - norm) < 2e-5 * norm);
    CHECK(std::abs(log[s].val_loss - ref::val_loss(run, val, o.eval_batches)) < 2e-5 * loss);
  }
  const Checkpoint ckpt = load_checkpoint(o.out + "/model.safetensors");
  ref::Params trained = test::reference_params(*ckpt.model);
  std::vector<ref::NamedArray> a = ref::named_arrays(run.config, trained),
                               b = ref::named_arrays(run.config, run.params);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].name);
    double gap = 0;
    for (size_t k = 0; k < a[i].value->size(); ++k)
      gap = std::max(gap, std::abs((*a[i].value)[k] - (*b[i].value)[k]));
    CHECK(gap < 0.1 * o.adam.lr);
  }
}

}  // namespace

TEST_CASE("the one-file trainer's first steps are poslab train's: every scheme",
          "[train][reference]") {
  for (const std::string& name : pe_names()) {
    INFO("pe = " << name);
    test::TempDir dir;
    TrainOptions o = reference_run(dir, parse_pe(name));
    o.model.embedding = name == "sinusoidal" ? EmbeddingKind::scaled : EmbeddingKind::gpt2;
    o.model.vocab_size = static_cast<int64_t>(load_vocab(o.data + "/vocab.json").size());
    ref::Run run = ref::start_run(test::reference_config(o.model), settings_of(o));
    compare(o, run);
  }
}

TEST_CASE(
    "the one-file trainer's first steps are poslab train's: p-RoPE, --nope-every, "
    "random positions",
    "[train][reference]") {
  struct Case {
    PeKind pe;
    double proportion;
    int64_t nope_every, random_positions;
  };
  for (Case k : {Case{PeKind::rope, 0.5, 2, 0}, Case{PeKind::kerple, 1, 2, 40},
                 Case{PeKind::fire, 1, 0, 40}, Case{PeKind::learned, 1, 0, 40}}) {
    INFO("pe = " << pe_name(k.pe));
    test::TempDir dir;
    TrainOptions o = reference_run(dir, k.pe);
    o.model.pe.rope_proportion = k.proportion, o.model.pe.nope_every = k.nope_every;
    o.model.pe.random_positions = k.random_positions;
    o.model.vocab_size = static_cast<int64_t>(load_vocab(o.data + "/vocab.json").size());
    ref::Config c = test::reference_config(o.model);
    ref::Run run = ref::start_run(c, settings_of(o));
    compare(o, run);
  }
}

TEST_CASE("the one-file trainer fine-tunes like poslab train under linear RoPE scaling",
          "[train][reference]") {
  test::TempDir dir;
  TrainOptions base = reference_run(dir, PeKind::rope);
  base.model.block_size = 8, base.out = dir.file("base");
  train(base);
  // --init-from base --ctx 16 --rope-scaling linear --factor 2: positions p / 2
  TrainOptions o = reference_run(dir, PeKind::rope);
  o.init_from = dir.file("base/model.safetensors"), o.steps = 3;
  o.rope_scaling.kind = ScalingKind::linear, o.rope_scaling.factor = 2;
  o.model.vocab_size = static_cast<int64_t>(load_vocab(o.data + "/vocab.json").size());
  ref::Run run = ref::start_run(test::reference_config(o.model, o.rope_scaling), settings_of(o));
  run.params = test::reference_params(*load_checkpoint(o.init_from).model);
  compare(o, run);
}

// The program itself (nn/gpt_reference_main.cpp, built alone: `make reference-train`), its
// flags and its printed curve: each line's train and val loss are the run's log.csv row, to the
// 4 decimals it prints.
TEST_CASE("the one-file trainer's program prints poslab train's loss curve", "[train][reference]") {
  for (const char* pe : {"rope", "t5"}) {
    INFO("pe = " << pe);
    test::TempDir dir;
    TrainOptions o = reference_run(dir, parse_pe(pe));
    train(o);
    const std::vector<LogRow> log = read_log(o.out + "/log.csv");
    int status = 0;
    const std::string out = test::output_of(
        std::string(POSLAB_REFERENCE_TRAIN) + " --data " + o.data + " --pe " + pe +
            " --d 16 --layers 2 --heads 2 --ctx 16 --batch 4 --steps 6 --warmup 2 --lr 1e-2"
            " --eval-every 1 --eval-batches 2",
        &status);
    INFO(out);
    REQUIRE(status == 0);
    std::istringstream lines(out);
    std::string line;
    size_t row = 0;
    while (std::getline(lines, line)) {
      long long step = 0;
      double train_loss = 0, val_loss = 0;
      if (std::sscanf(line.c_str(), "step %lld train loss %lf val loss %lf", &step, &train_loss,
                      &val_loss) != 3)
        continue;
      REQUIRE(row < log.size());
      CHECK(step == log[row].step);
      CHECK(std::abs(train_loss - log[row].train_loss) < 6e-5);  // %.4f: 5e-5, and f32's 1e-6
      CHECK(std::abs(val_loss - log[row].val_loss) < 6e-5);
      ++row;
    }
    CHECK(row == log.size());
  }
  int status = 0;
  const std::string out =
      test::output_of(std::string(POSLAB_REFERENCE_TRAIN) + " --pe rotary", &status);
  CHECK(status != 0);
  CHECK(out.find("--pe: expected none|learned|") != std::string::npos);
}
