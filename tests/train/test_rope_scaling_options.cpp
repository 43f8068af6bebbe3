// RoPE scaling as the user asks for it (train/rope_scaling_options.h): published HF
// rope_scaling configs read as the flags that say the same, every bad flag and bad config key
// named, and yarn in a fine-tune's every forward (s = 4 against the original T0). The
// formulas themselves: tests/posenc/test_rope_scaling.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "data/atomic_file.h"
#include "data/json.h"
#include "tests/support/command.h"
#include "tests/support/gradcheck.h"
#include "tests/support/temp_dir.h"
#include "tests/train/tiny_model.h"
#include "train/checkpoint.h"
#include "train/eval.h"
#include "train/rope_scaling_options.h"

using namespace poslab;
using Catch::Contains;

// The flags as eval reads them.
static RopeScaling from_flags(std::vector<std::string> words, const ScaledModel& m) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  Args a("eval", rope_scaling_flags(), static_cast<int>(argv.size()), argv.data());
  return rope_scaling_options(a, m);
}

static RopeScaling from_json(const std::string& text, const ScaledModel& m) {
  return rope_scaling_from_json(text, "cfg.json", m);
}

// Both scalings give the same tables for a window of length L.
static void same_frequencies(const RopeScaling& a, const RopeScaling& b, const ScaledModel& m,
                             int64_t L) {
  const RopeFrequencies fa = rope_frequencies(m.rotated_dims, m.theta, a, L),
                        fb = rope_frequencies(m.rotated_dims, m.theta, b, L);
  CHECK(a.kind == b.kind);
  CHECK(fa.freq == fb.freq);
  CHECK(fa.mscale == fb.mscale);
  CHECK(fa.pos_scale == fb.pos_scale);
}

// "1,2.5,3" or "[1,2.5,3]": the same doubles in both (%.17g reads back exactly).
static std::string number_list(const std::vector<double>& v) {
  std::string s;
  char buf[32];
  for (double x : v)
    std::snprintf(buf, sizeof buf, "%.17g", x), s += (s.empty() ? "" : ",") + std::string(buf);
  return s;
}

// The configs as their models ship them (config.json's rope_scaling, and the model's head dim,
// rope_theta and original length), beside the flags that say the same.
TEST_CASE("published HF configs give the frequencies of the equivalent flags", "[train][scaling]") {
  SECTION("Llama 3.1: llama3, factor 8, lff 1, hff 4, T0 8192, theta 500000, head dim 128") {
    const ScaledModel m{8192, 500000, 128};
    const RopeScaling cfg = from_json(
        R"({"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192, "rope_type": "llama3"})",
        m);
    const RopeScaling flags = from_flags({"--rope-scaling", "llama3", "--factor", "8"}, m);
    same_frequencies(cfg, flags, m, 100);
    // pair 32 keeps 0.3711223 of its frequency (worked in tests/posenc/test_rope_scaling.cpp)
    const RopeFrequencies f = rope_frequencies(128, 500000, cfg, 100);
    CHECK(f.freq[32] / std::pow(500000, -0.5) == Approx(0.3711223).epsilon(1e-6));
    CHECK(f.mscale == 1);
  }
  SECTION("Qwen2.5: yarn by its old key 'type', factor 4, T0 32768, theta 1e6") {
    const ScaledModel m{32768, 1e6, 128};
    const RopeScaling cfg = from_json(
        R"({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})", m);
    same_frequencies(cfg, from_flags({"--rope-scaling", "yarn", "--factor", "4"}, m), m, 100);
    CHECK(rope_frequencies(128, 1e6, cfg, 100).mscale == Approx(1.1386294).epsilon(1e-7));
  }
  SECTION("DeepSeek-V3: yarn with mscale = mscale_all_dim = 1, factor 40: cos and sin times 1") {
    const ScaledModel m{4096, 10000, 64};
    const RopeScaling cfg = from_json(
        R"({"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0,
            "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"})",
        m);
    const RopeScaling flags =
        from_flags({"--rope-scaling", "yarn", "--factor", "40", "--beta-fast", "32", "--beta-slow",
                    "1", "--mscale", "1", "--mscale-all-dim", "1"},
                   m);
    same_frequencies(cfg, flags, m, 100);
    CHECK(rope_frequencies(64, 10000, cfg, 100).mscale == 1);
  }
  SECTION("gpt-oss: yarn with truncate false, factor 32, theta 150000") {
    const ScaledModel m{4096, 150000, 64};
    const RopeScaling cfg = from_json(
        R"({"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
            "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": false})",
        m);
    const RopeScaling flags =
        from_flags({"--rope-scaling", "yarn", "--factor", "32", "--yarn-truncate", "false"}, m);
    same_frequencies(cfg, flags, m, 100);
    CHECK(!cfg.ramp.truncate);
    // pair 13 keeps 0.4726393 (ramp between 8.0927791 and 17.3980245), not truncated's 0.5
    const double f13 = std::pow(150000, -26.0 / 64), keep = 0.4726393;
    CHECK(rope_frequencies(64, 150000, cfg, 100).freq[13] ==
          Approx(keep * f13 + (1 - keep) * f13 / 32).epsilon(1e-6));
  }
  SECTION("Phi-3's shape: longrope, 48 short and 48 long factors, head dim 96, T0 4096") {
    // Phi-3-mini-128k's geometry; the two lists are ours (each pair's factor 1 + i/64, 1 + i/8)
    const ScaledModel m{4096, 10000, 96};
    std::vector<double> shortf, longf;
    for (int i = 0; i < 48; ++i) shortf.push_back(1 + i / 64.0), longf.push_back(1 + i / 8.0);
    const RopeScaling cfg =
        from_json(R"({"type": "longrope", "short_factor": [)" + number_list(shortf) +
                      R"(], "long_factor": [)" + number_list(longf) + "]}",
                  m);
    const RopeScaling flags = from_flags({"--rope-scaling", "longrope", "--short-factor",
                                          number_list(shortf), "--long-factor", number_list(longf)},
                                         m);
    for (int64_t L : {4096, 8192, 131072}) same_frequencies(cfg, flags, m, L);
    // at 131072 = 32 T0: the long factors, and sqrt(1 + ln 32 / ln 4096) = sqrt(17/12)
    const RopeFrequencies f = rope_frequencies(96, 10000, cfg, 131072);
    CHECK(f.freq[47] == Approx(std::pow(10000, -94.0 / 96) / (1 + 47 / 8.0)).epsilon(1e-14));
    CHECK(f.mscale == Approx(1.1902381).epsilon(1e-7));
    CHECK(rope_frequencies(96, 10000, cfg, 4096).freq[47] ==
          Approx(std::pow(10000, -94.0 / 96) / (1 + 47 / 64.0)).epsilon(1e-14));
  }
  SECTION("rope_theta and null values; default is no scaling; dynamic's factor is HF's f") {
    const ScaledModel m{64, 10000, 16};
    const RopeScaling cfg = from_json(
        R"({"rope_type": "dynamic", "factor": 2, "rope_theta": 10000.0, "attention_factor": null,
            "original_max_position_embeddings": null})",
        m);
    CHECK(cfg.kind == ScalingKind::dynamic);
    CHECK(cfg.factor == 2);
    CHECK(from_flags({"--rope-scaling", "dynamic", "--factor", "2"}, m).factor == 2);
    CHECK(from_json(R"({"rope_type": "default", "rope_theta": 1e4})", m).kind == ScalingKind::none);
    CHECK(from_flags({}, m).kind == ScalingKind::none);
  }
}

// Each bad input, and the words its error must hold (tests/BAD_INPUTS.md lists them).
TEST_CASE("bad scaling flags are named with their valid values", "[train][scaling][errors]") {
  const ScaledModel m{64, 10000, 8};  // r/2 = 4 pairs
  auto refuses = [&](std::vector<std::string> words, std::vector<std::string> needles) {
    std::string line;
    for (const std::string& w : words) line += w + " ";
    INFO(line);
    try {
      from_flags(words, m);
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      for (const std::string& n : needles) CHECK_THAT(e.what(), Contains(n));
    }
  };
  refuses({"--rope-scaling", "llama3", "--attention-factor", "2"},
          {"--attention-factor applies only to --rope-scaling yarn|longrope", "llama3"});
  refuses({"--long-factor", "1,1,1,1"}, {"--long-factor needs --rope-scaling longrope"});
  refuses({"--factor", "2"}, {"--factor needs --rope-scaling"});
  refuses({"--rope-scaling", "yarn", "--low-freq-factor", "1"},
          {"--low-freq-factor applies only to --rope-scaling llama3"});
  refuses({"--rope-scaling", "longrope", "--yarn-truncate", "false", "--long-factor", "1,1,1,1"},
          {"--yarn-truncate applies only to --rope-scaling yarn"});
  refuses({"--rope-scaling", "ntk", "--beta-fast", "16"}, {"--beta-fast", "yarn"});
  refuses({"--rope-scaling", "longrope", "--long-factor", "1,2,3"},
          {"--long-factor", "r/2 = 4 numbers", "got 3"});
  refuses({"--rope-scaling", "longrope", "--long-factor", "1,2,3,4", "--short-factor", "1,0,1,1"},
          {"--short-factor", "> 0", "number 2 is 0"});
  refuses({"--rope-scaling", "longrope", "--long-factor", "1,x,1,1"},
          {"--long-factor", "expected a number", "'x'"});
  refuses({"--rope-scaling", "longrope"}, {"--long-factor", "required with longrope", "4 numbers"});
  refuses({"--rope-scaling", "linear", "--factor", "0.5"}, {"--factor", ">= 1", "0.5"});
  refuses({"--rope-scaling", "llama3", "--high-freq-factor", "1"},
          {"--high-freq-factor", "more than the low frequency factor"});
  refuses({"--rope-scaling", "llama3", "--low-freq-factor", "0"}, {"--low-freq-factor", "> 0"});
  refuses({"--rope-scaling", "yarn", "--beta-slow", "40"}, {"--beta-fast", "more than beta_slow"});
  refuses({"--rope-scaling", "yarn", "--attention-factor", "0"}, {"--attention-factor", "> 0"});
  refuses({"--rope-scaling", "yarn", "--mscale", "-1"}, {"--mscale", ">= 0"});
  refuses({"--rope-scaling", "yarn", "--yarn-truncate", "no"},
          {"--yarn-truncate", "true or false"});
  refuses({"--rope-scaling", "longrope4"}, {"--rope-scaling", "llama3|longrope"});
}

TEST_CASE("bad HF configs are named with the file and the key", "[train][scaling][errors]") {
  const ScaledModel m{64, 10000, 8};
  auto refuses = [&](const std::string& json, std::vector<std::string> needles) {
    INFO(json);
    try {
      from_json(json, m);
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      CHECK_THAT(e.what(), Contains("cfg.json"));
      for (const std::string& n : needles) CHECK_THAT(e.what(), Contains(n));
    }
  };
  refuses(R"({"rope_type": "yarn", "factor": 4,})",
          {"byte 34", "expected a string key"});  // invalid JSON: where
  refuses(R"([1, 2])", {"expected a JSON object", "an array"});
  refuses(R"({"factor": 4})", {"'rope_type' (or 'type') is required", "llama3"});
  refuses(R"({"rope_type": null, "factor": 4})", {"'rope_type' (or 'type') is required"});
  refuses(R"({"rope_type": "ntk", "factor": 4})", {"'rope_type'", "'ntk'", "HF has no ntk type"});
  refuses(R"({"rope_type": "yarn", "type": "linear"})", {"'rope_type'", "'type'", "disagree"});
  refuses(R"({"rope_type": 3})", {"'rope_type'", "expected a string"});
  refuses(R"({"rope_type": "yarn", "factr": 4})", {"key 'factr'", "not an HF rope_scaling key"});
  refuses(R"({"rope_type": "yarn", "truncate": "false"})",
          {"key 'truncate'", "expected a boolean", "a string"});
  refuses(R"({"rope_type": "yarn", "factor": "4"})", {"key 'factor'", "expected a number"});
  refuses(R"({"rope_type": "longrope", "long_factor": [1, "2", 3, 4]})",
          {"key 'long_factor'", "an array of numbers"});
  refuses(R"({"rope_type": "llama3", "attention_factor": 2})",
          {"key 'attention_factor'", "does not belong to rope_type 'llama3'", "low_freq_factor"});
  refuses(R"({"rope_type": "default", "factor": 2})",
          {"key 'factor'", "does not belong to rope_type 'default'"});
  refuses(R"({"rope_type": "yarn", "original_max_position_embeddings": 4096})",
          {"'original_max_position_embeddings' is 4096", "T0 (block_size) is 64"});
  refuses(R"({"rope_type": "yarn", "original_max_position_embeddings": 64.5})",
          {"'original_max_position_embeddings'", "expected an integer"});
  refuses(R"({"rope_type": "yarn", "rope_theta": 500000})",
          {"'rope_theta' is 500000", "checkpoint's rope_theta is 10000"});
  refuses(R"({"rope_type": "longrope", "long_factor": [1, 2]})",
          {"key 'long_factor'", "r/2 = 4 numbers", "got 2"});
  refuses(R"({"rope_type": "longrope"})", {"key 'long_factor'", "required with longrope"});
  refuses(R"({"rope_type": "llama3", "low_freq_factor": 4, "high_freq_factor": 4})",
          {"key 'high_freq_factor'", "more than the low frequency factor"});
  refuses(R"({"rope_type": "yarn", "factor": 0.5})", {"key 'factor'", ">= 1"});
}

TEST_CASE("--rope-scaling-config: the file sets the scaling alone", "[train][scaling][errors]") {
  test::TempDir dir;
  const ScaledModel m{64, 10000, 8};
  const std::string file = dir.file("rope_scaling.json");
  write_file_atomic(file, R"({"rope_type": "yarn", "factor": 4, "truncate": false})");
  const RopeScaling sc = from_flags({"--rope-scaling-config", file}, m);
  CHECK(sc.kind == ScalingKind::yarn);
  CHECK(sc.factor == 4);
  CHECK(!sc.ramp.truncate);
  CHECK(sc.train_len == 64);
  for (std::vector<std::string> extra : std::vector<std::vector<std::string>>{
           {"--rope-scaling", "yarn"}, {"--factor", "4"}, {"--beta-fast", "16"}}) {
    std::vector<std::string> words{"--rope-scaling-config", file};
    words.insert(words.end(), extra.begin(), extra.end());
    REQUIRE_THROWS_WITH(from_flags(words, m),
                        Contains("--rope-scaling-config") && Contains(file) && Contains(extra[0]));
  }
  REQUIRE_THROWS_WITH(from_flags({"--rope-scaling-config", dir.file("none.json")}, m),
                      Contains("none.json") && Contains("cannot open"));
}

// The study's fine-tune with yarn: a model of block_size 4 T0 trained with yarn at s = 4 against
// the original T0 in every forward. Its gradient is the derivative of its loss (a whole-model
// check in f64: T0 = 8, theta 100, so that d(1) = 8 ln(8 / 2 pi) / (2 ln 100) = 0.21 puts the
// ramp between pairs 0 and 1, and windows of 32 = 4 T0), and the trainer runs it.
TEST_CASE("yarn in training: s = 4 against the original T0 in every forward",
          "[train][scaling][gradcheck]") {
  GPTConfig c;
  c.vocab_size = 7, c.n_layer = 1, c.n_head = 2, c.n_embd = 16, c.block_size = 32;
  c.pe.theta = 100, c.dtype = DType::f64;
  GPT model(c, 5);
  Generator g(6);
  std::vector<Tensor> leaves;
  std::vector<std::string> names;
  {
    NoGrad ng;  // larger weights than the 0.02 init so that every path carries signal
    for (auto& p : model.parameters()) {
      p.tensor.copy_(Tensor::randn(p.tensor.shape(), g, 0.4, DType::f64));
      leaves.push_back(p.tensor), names.push_back(p.name);
    }
  }
  Ids ids{{}, {1, 32}}, tgt{{}, {1, 32}};
  for (int t = 0; t < 32; ++t) ids.data.push_back((t * 3) % 7), tgt.data.push_back((t * 5 + 1) % 7);
  Interventions yarn;
  yarn.rope_scaling = {ScalingKind::yarn, 4, 8};
  CHECK(model.loss(ids, tgt, nullptr, yarn).item() != model.loss(ids, tgt).item());
  CHECK_GRADCHECK(
      "rope: whole model under yarn (s = 4, T0 = 8)",
      [&](auto&) { return model.loss(ids, tgt, nullptr, yarn); }, leaves,
      poslab::testing::named(names, 8));

  // the trainer: a T0 = 16 model continued at 64 with yarn (s = 4 against 16), as the study's
  test::TempDir dir;
  const std::string start = test::tiny_zh_model(dir, PeKind::rope, true, 10);
  TrainOptions o;
  o.data = dir.file("data"), o.out = dir.file("yarn4");
  o.model.n_embd = 16, o.model.n_layer = 2, o.model.n_head = 2, o.model.block_size = 64;
  o.batch = 2, o.steps = 3, o.eval_every = 3, o.eval_batches = 1, o.quiet = true;
  o.init_from = start, o.rope_scaling = {ScalingKind::yarn, 4, 16};
  const TrainResult r = train(o);
  CHECK(std::isfinite(r.train_loss));
  CHECK(std::isfinite(r.val_loss));
  TrainOptions plain = o;  // the same continuation without the scaling trains another model
  plain.out = dir.file("plain4"), plain.rope_scaling = {};
  CHECK(train(plain).train_loss != r.train_loss);
}

// eval reads the file as it reads the flags that say the same: the same loss.
TEST_CASE("eval --rope-scaling-config equals the same scaling given by flags",
          "[train][scaling][eval]") {
  test::TempDir dir;
  const std::string ckpt = test::tiny_zh_model(dir, PeKind::rope, true, 20), bin = POSLAB_BIN;
  const std::string cfg = dir.file("yarn.json");
  write_file_atomic(cfg, R"({"rope_type": "yarn", "factor": 2, "beta_fast": 8,
                             "original_max_position_embeddings": 16, "rope_theta": 10000})");
  const std::string eval =
      bin + " eval --ckpt " + ckpt + " --data " + dir.file("data") + " --len 32 --json ";
  int s1 = -1, s2 = -1;
  const std::string a = test::output_of(eval + "--rope-scaling-config " + cfg, &s1),
                    b = test::output_of(eval + "--rope-scaling yarn --factor 2 --beta-fast 8", &s2);
  INFO(a << b);
  REQUIRE(s1 == 0);
  REQUIRE(s2 == 0);
  CHECK(json_parse(a, "a").find("loss")->as_number() ==
        json_parse(b, "b").find("loss")->as_number());
  int s3 = -1;
  const std::string e = test::output_of(eval + "--rope-scaling-config " + cfg + " --factor 2", &s3);
  CHECK(s3 != 0);
  CHECK_THAT(e, Contains("--rope-scaling-config") && Contains("--factor"));
}
