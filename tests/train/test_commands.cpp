// Two commands a learner types, run as the program (the guide runs them too, but only in the
// plain builds; these run under the sanitizers as well).
// `poslab generate`: the prompt is echoed, greedy decoding (temperature 0, through the KV cache)
// picks at every step a character the full-prefix logits rank first, sampling is repeatable from
// its seed, and the learned table's length is a named refusal.
// `poslab eval --json`: the loss is the mean of GPT::loss over the windows docs/evaluation.md
// defines, computed here window by window.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "data/corpus.h"
#include "data/json.h"
#include "tests/support/command.h"
#include "tests/support/temp_dir.h"
#include "tests/train/tiny_model.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

using namespace poslab;
using Catch::Contains;
using poslab::test::output_of;

TEST_CASE("generate: greedy decoding picks a top character of the full-prefix logits",
          "[train][generate]") {
  test::TempDir dir;
  for (PeKind pe : {PeKind::rope, PeKind::alibi, PeKind::learned}) {
    INFO(pe_name(pe));
    std::string ckpt = test::tiny_zh_model(dir, pe, true, 40);
    int status = -1;
    const int n = 12;
    std::string out =
        output_of(std::string(POSLAB_BIN) + " generate --ckpt " + ckpt +
                      " --prompt 春风 --tokens " + std::to_string(n) + " --temperature 0",
                  &status);
    INFO(out);
    REQUIRE(status == 0);
    REQUIRE(out.rfind("春风", 0) == 0);  // the prompt first
    REQUIRE(out.back() == '\n');
    std::vector<std::string> vocab =
        load_vocab(std::filesystem::path(ckpt).parent_path().string() + "/vocab.json");
    // every character the corpus has: encode refuses any other
    std::vector<uint16_t> ids = encode(vocab, out.substr(0, out.size() - 1));
    REQUIRE(ids.size() == 2 + n);

    // Recompute each step from the whole prefix (no cache): the generated character's logit
    // is the largest, up to f32 rounding between the cached and the recomputed path.
    Checkpoint ck = load_checkpoint(ckpt);
    for (size_t t = 2; t < ids.size(); ++t) {
      Ids prefix{std::vector<int32_t>(ids.begin(), ids.begin() + static_cast<long>(t)),
                 {1, static_cast<int64_t>(t)}};
      Tensor logits = ck.model->logits(prefix);
      std::vector<double> row =
          logits.slice(1, static_cast<int64_t>(t) - 1, static_cast<int64_t>(t)).to_vector();
      double best = row[0];
      for (double x : row) best = std::max(best, x);
      INFO("position " << t);
      CHECK(row[ids[t]] >= best - 1e-4);
    }
  }
}

TEST_CASE("generate: a seed repeats its sample; a bad request is a named error",
          "[train][generate][errors]") {
  test::TempDir dir;
  std::string ckpt = test::tiny_zh_model(dir, PeKind::learned, true, 40), bin = POSLAB_BIN;
  int s1 = -1, s2 = -1, status = -1;
  std::string cmd = bin + " generate --ckpt " + ckpt + " --prompt 明月 --tokens 10 --seed 7";
  std::string a = output_of(cmd, &s1), b = output_of(cmd, &s2);
  REQUIRE(s1 == 0);
  REQUIRE(s2 == 0);
  CHECK(a == b);

  // the learned table has block_size = 16 rows: 2 + 15 positions do not fit
  std::string e =
      output_of(bin + " generate --ckpt " + ckpt + " --prompt 明月 --tokens 15", &status);
  CHECK(status != 0);
  CHECK_THAT(e, Contains("--tokens") && Contains("max_len = 16"));

  e = output_of(bin + " generate --prompt 明月", &status);
  CHECK(status != 0);
  CHECK_THAT(e, Contains("--ckpt"));

  e = output_of(bin + " generate --ckpt " + ckpt + " --temperature -1", &status);
  CHECK(status != 0);
  CHECK_THAT(e, Contains("--temperature"));
}

TEST_CASE("eval --json: the mean loss of the windows of L + 1 tokens; bad flags are named",
          "[train][eval]") {
  test::TempDir dir;
  std::string ckpt = test::tiny_zh_model(dir, PeKind::rope, true, 40), bin = POSLAB_BIN,
              data = dir.file("data");
  const int64_t L = 24;  // past the trained 16: the command does not care
  int status = -1;
  std::string out = output_of(
      bin + " eval --ckpt " + ckpt + " --data " + data + " --len " + std::to_string(L) + " --json",
      &status);
  INFO(out);
  REQUIRE(status == 0);
  Json j = json_parse(out, "poslab eval --json");

  // window w: tokens wL .. wL + L, inputs the first L, targets the last L (each window on its
  // own, from position 0)
  Checkpoint ck = load_checkpoint(ckpt);
  std::vector<uint16_t> val =
      load_tokens(data + "/val.bin", static_cast<size_t>(ck.model->config().vocab_size));
  const int64_t W = (static_cast<int64_t>(val.size()) - 1) / L;
  REQUIRE(W >= 2);
  double sum = 0;
  for (int64_t w = 0; w < W; ++w) {
    Ids x{{}, {1, L}}, y{{}, {1, L}};
    for (int64_t t = 0; t < L; ++t) {
      x.data.push_back(val[w * L + t]);
      y.data.push_back(val[w * L + t + 1]);
    }
    sum += ck.model->loss(x, y).item();
  }
  CHECK(j.find("windows")->as_number() == W);
  CHECK(j.find("tokens")->as_number() == W * L);
  CHECK(j.find("loss")->as_number() == Approx(sum / W).epsilon(1e-5));

  std::string e = output_of(bin + " eval --ckpt " + ckpt + " --data " + data + " --len 0", &status);
  CHECK(status != 0);
  CHECK_THAT(e, Contains("--len"));
  e = output_of(bin + " eval --ckpt " + ckpt + " --data " + dir.file("nowhere"), &status);
  CHECK(status != 0);
  CHECK_THAT(e, Contains("nowhere"));
  e = output_of(bin + " eval --ckpt " + ckpt + " --data " + data + " --factor 2", &status);
  CHECK(status != 0);
  CHECK_THAT(e, Contains("--rope-scaling"));
}

TEST_CASE(
    "eval --positions: a random-positions model reads drawn positions or 0..L-1; bad "
    "requests are named",
    "[train][eval]") {
  test::TempDir dir;
  const std::string bin = POSLAB_BIN, data = dir.file("data");
  const std::string drawn = test::tiny_zh_model(dir, PeKind::rope, true, 20, 32);  // Lmax 32
  const std::string plain = test::tiny_zh_model(dir, PeKind::rope, true, 20);
  auto eval = [&](const std::string& ckpt, const std::string& flags, int* status) {
    return output_of(bin + " eval --ckpt " + ckpt + " --data " + data + " " + flags, status);
  };
  int status = -1;
  std::string out = eval(drawn, "--len 24 --json", &status);
  INFO(out);
  REQUIRE(status == 0);
  Json r = json_parse(out, "eval, drawn positions");
  CHECK(r.find("positions")->as_string() == "random");  // the default of such a model
  out = eval(drawn, "--len 24 --json --positions contiguous", &status);
  REQUIRE(status == 0);
  Json c = json_parse(out, "eval, contiguous positions");
  CHECK(c.find("positions")->as_string() == "contiguous");
  CHECK(c.find("loss")->as_number() != r.find("loss")->as_number());
  out = eval(drawn, "--len 24 --json --seed 7", &status);  // another draw, another loss
  REQUIRE(status == 0);
  CHECK(json_parse(out, "eval, seed 7").find("loss")->as_number() != r.find("loss")->as_number());

  std::string e = eval(drawn, "--len 40", &status);  // 40 distinct positions from [0, 32)
  CHECK(status != 0);
  CHECK_THAT(e, Contains("Lmax = 32") && Contains("--positions contiguous"));
  e = eval(drawn, "--len 24 --position-offset 4", &status);
  CHECK(status != 0);
  CHECK_THAT(e, Contains("--position-offset") && Contains("--positions contiguous"));
  e = eval(drawn, "--len 24 --positions sideways", &status);
  CHECK(status != 0);
  CHECK_THAT(e, Contains("--positions") && Contains("sideways"));
  e = eval(plain, "--len 24 --positions random", &status);
  CHECK(status != 0);
  CHECK_THAT(e, Contains("trained without --random-positions"));
  CHECK(eval(plain, "--len 24 --positions contiguous", &status).find("loss") != std::string::npos);
  CHECK(status == 0);
}
