// tiny_model.h — the tiny model the command tests share (test_attend, test_commands): C 16,
// 2 layers, 2 heads, T0 16, trained for a few steps on two repeated lines of Chinese, so that
// `attend`, `generate` and `eval` run on a real checkpoint with a real vocab.json.
#pragma once
#include <filesystem>
#include <string>

#include "data/corpus.h"
#include "tests/support/temp_dir.h"
#include "train/trainer.h"

namespace poslab::test {

// Trains into dir/run_<pe>[_mlm] (the corpus once, in dir/data) and returns its model's path.
// causal = false: a masked LM without the causal mask. random_positions = Lmax > 0: trained on
// positions drawn from [0, Lmax) (--random-positions), into dir/run_<pe>_rand.
inline std::string tiny_zh_model(const TempDir& dir, PeKind pe, bool causal = true,
                                 int64_t steps = 30, int64_t random_positions = 0) {
  if (!std::filesystem::exists(dir.file("data/val.bin"))) {
    std::string t;
    for (int i = 0; i < 60; ++i) t += "我送君，君送我。春风又绿江南岸，明月何时照我还。\n";
    write_corpus(build_corpus(t), dir.file("data"));
  }
  TrainOptions o;
  o.data = dir.file("data");
  o.out = dir.file(std::string("run_") + pe_name(pe) + (causal ? "" : "_mlm") +
                   (random_positions > 0 ? "_rand" : ""));
  o.model.pe.kind = pe, o.model.causal = causal, o.model.pe.random_positions = random_positions;
  o.objective = causal ? Objective::lm : Objective::mlm;
  o.model.n_embd = 16, o.model.n_layer = 2, o.model.n_head = 2, o.model.block_size = 16;
  o.batch = 4, o.steps = steps, o.eval_every = steps, o.eval_batches = 1, o.quiet = true;
  o.adam.lr = 1e-2;
  train(o);
  return o.out + "/model.safetensors";
}

}  // namespace poslab::test
