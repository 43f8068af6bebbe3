// The study's planned work (study/eta.h), counted here by hand for one run of the tiny
// study on a val split of known size: training and its val losses, the evaluation at each length
// under each scaling, the sliding pass once per run over the targets it needs, the kept model at
// T0.
#include <catch2/catch.hpp>

#include <fstream>

#include "study/eta.h"
#include "study/study.h"
#include "tests/support/temp_dir.h"

using namespace poslab;

TEST_CASE("planned tokens: training, every evaluation, one sliding pass over the targets used",
          "[study]") {
  test::TempDir d;
  StudyConfig c = study_config(StudySize::tiny);  // d 32, 1 layer, T0 32, lens 32 64 128
  c.out = d.file("study");
  StudyPlan p = study_plan(c);
  RunSpec r = p.run("rope_s1");
  r.train.data = d.path();
  {
    std::ofstream val(d.file("val.bin"), std::ios::binary);  // 1001 tokens: 1000 targets
    val << std::string(2 * 1001, '\0');
  }
  REQUIRE(c.d == 32);
  REQUIRE(c.layers == 1);
  REQUIRE(c.ctx == 32);
  REQUIRE(c.lens == std::vector<int64_t>{32, 64, 128});
  REQUIRE(c.eval_windows == 2);
  // multiply-adds per token at length L: 1 layer x 32 x (12 x 32 + L); a training token of the
  // main network is 3 forward tokens at 32: 3 x 32 x 416
  auto cost = [](double L) { return (384 + L) / (3 * 416.0); };
  size_t scalings = 0;  // plain rope; linear, ntk, dynamic, yarn, llama3, yarn untruncated
  for (const EvalSpec& e : p.evals) scalings += e.run == "rope_s1";
  REQUIRE(scalings == 7);
  // steps 16 of batch 4, the val loss after every step (eval_every 1) over 4 batches
  REQUIRE(r.train.steps == 16);
  REQUIRE(r.train.batch == 4);
  REQUIRE(r.train.eval_every == 1);
  REQUIRE(r.train.eval_batches == 4);
  const double train = 16 * 4 * 32 + 16 * 4 * 4 * 32 * cost(32);
  const double evals = 7 * (2 * 32 * cost(32) + 2 * 64 * cost(64) + 2 * 128 * cost(128));
  // targets 1 .. 256 (2 windows of 128): windows at 0, 8, ..., 224 (the first reaching 256)
  const double sliding = 29 * 32 * cost(32);
  // the model at 80% of the steps, at T0; the 32-token window's evaluation at T0
  const double kept = 2 * 32 * cost(32), window = 2 * 32 * cost(32);
  // the probes (probe_windows 1 window of 128, copy_examples 2): attribution 3 x 128 at 128 and
  // 4 x 128 at 32; RoPE pairs 8 + 1 evaluations at 128; copy (v2: m 16 after a lead of 16) gaps
  // 16, 32, 64 and 80 = 128 - 16 - 2m, 2 windows of 48 + d each
  REQUIRE(c.probe_windows == 1);
  REQUIRE(c.copy_examples == 2);
  double probes = 128 * (3 * cost(128) + 4 * cost(32)) + 9 * 128 * cost(128);
  for (double gap : {16, 32, 64}) probes += 2 * 2 * (48 + gap) * cost(48 + gap);
  probes += 2 * 2 * 128 * cost(128);
  CHECK(planned_tokens(c, p, r) ==
        Approx(train + evals + sliding + kept + window + probes).epsilon(1e-12));
  // a branch trains only its steps after the state it starts from
  RunSpec b4 = p.run("rope_b4_s1");
  b4.train.data = d.path();
  REQUIRE((b4.train.steps == 4 && b4.start_step == 3 && b4.train.eval_every == 1));
  const double b4_evals = 2 * 32 * cost(32) + 2 * 64 * cost(64) + 2 * 128 * cost(128);
  CHECK(planned_tokens(c, p, b4) ==
        Approx(1 * 4 * 32 + 1 * 4 * 4 * 32 * cost(32) + b4_evals + sliding).epsilon(1e-12));
  // a masked LM is not causal: no sliding pass, no kept model
  RunSpec mlm = p.run("mlm_rope_s1");
  mlm.train.data = d.path();
  double mlm_evals = 0;
  for (const EvalSpec& e : p.evals)
    if (e.run == mlm.name) mlm_evals += 2 * 32 * cost(32) + 2 * 64 * cost(64) + 2 * 128 * cost(128);
  REQUIRE(mlm.train.steps == 4);  // B/4: val loss after each step
  REQUIRE(mlm.train.eval_every == 1);
  CHECK(planned_tokens(c, p, mlm) ==
        Approx(4 * 4 * 32 + 4 * 4 * 4 * 32 * cost(32) + mlm_evals).epsilon(1e-12));
}
