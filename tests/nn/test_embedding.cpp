// The two embedding conventions (nn/embedding.h): gradchecks of the scaled embedding alone and
// in a whole model with a learned and a sinusoidal table; the scale on the input only, not on
// the tied head nor on the position table; the initial stds.
#include <catch2/catch.hpp>
#include <cmath>

#include "nn/gpt.h"
#include "tests/nn/tiny_gpt.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using Catch::Contains;
using poslab::testing::named;
using poslab::testing::rand_leaf;

// The shared tiny model with one embedding convention.
static GPTConfig tiny(PeKind pe, EmbeddingKind embedding) {
  return test::tiny(pe, /*causal=*/true, embedding);
}

// Every parameter redrawn with std 0.4 (the init's 0.02, 1s and 0s carry little signal).
static void randomize(const GPT& m, uint64_t seed) {
  Generator g(seed);
  NoGrad ng;
  for (const NamedParam& p : m.parameters())
    p.tensor.copy_(Tensor::randn(p.tensor.shape(), g, 0.4, DType::f64));
}

static Tensor param(const GPT& m, const std::string& name) {
  for (const NamedParam& p : m.parameters())
    if (p.name == name) return p.tensor;
  FAIL("no parameter " << name);
  return {};
}

TEST_CASE("gradcheck: scaled embedding lookup, repeated ids", "[gradcheck][nn]") {
  Generator g(3);
  Embedding emb(5, 4, EmbeddingKind::scaled, g, DType::f64);
  CHECK(emb.scale == 2.0);              // sqrt(C)
  Ids ids{{1, 4, 1, 0, 4, 4}, {2, 3}};  // rows 1 and 4 gather from several positions
  CHECK_GRADCHECK(
      "ops: scaled embedding lookup, repeated ids", [&](auto&) { return emb.forward(ids); },
      {emb.weight}, named({"wte"}));
}

// The whole model's loss against every wte and wpe element (all of them: the scale acts on
// the input use of wte but not on its head use, and wpe is added after the scaling), then a
// sample of 16 elements of every parameter.
static void gradcheck_scaled_model(PeKind pe) {
  Ids ids{{1, 4, 2, 6, 0, 3, 3, 5, 1, 2}, {2, 5}}, tgt{{4, 2, 6, 0, 3, 5, 1, 2, 2, 6}, {2, 5}};
  GPT m(tiny(pe, EmbeddingKind::scaled), 11);
  randomize(m, 12);
  std::vector<Tensor> tables{param(m, "transformer.wte.weight")};
  std::vector<std::string> names{"transformer.wte.weight"};
  if (pe == PeKind::learned) {
    tables.push_back(param(m, "transformer.wpe.weight"));
    names.push_back("transformer.wpe.weight");
  }
  const std::string name = std::string(pe_name(pe)) + ": whole model, embedding=scaled";
  CHECK_GRADCHECK(
      name + ", every embedding element", [&](auto&) { return m.loss(ids, tgt); }, tables,
      named(names));
  std::vector<Tensor> all;
  std::vector<std::string> all_names;
  for (const NamedParam& p : m.parameters()) all.push_back(p.tensor), all_names.push_back(p.name);
  CHECK_GRADCHECK(
      name + ", 16 elements of every parameter", [&](auto&) { return m.loss(ids, tgt); }, all,
      named(all_names, 16));
}

TEST_CASE("gradcheck: scaled embedding + learned, the whole model", "[gradcheck][nn][posenc]") {
  gradcheck_scaled_model(PeKind::learned);
}

TEST_CASE("gradcheck: scaled embedding + sinusoidal, the whole model", "[gradcheck][nn][posenc]") {
  gradcheck_scaled_model(PeKind::sinusoidal);
}

// With wte = W, the scaled model's input is sqrt(C) W[ids] + PE and its head is h W^T. A gpt2
// model given wte = sqrt(C) W has the same input (PE unscaled in both) and the head
// h (sqrt(C) W)^T: its logits are exactly sqrt(C) times the scaled model's. A scale on the head
// too, or on the position table, breaks this.
TEST_CASE("scaled embedding: the input is scaled, the tied head and the PE table are not",
          "[nn][posenc]") {
  const double s = std::sqrt(8.0);
  Ids ids{{1, 4, 2, 6, 0, 3}, {1, 6}};
  for (const std::string& name : pe_names()) {
    INFO("pe " << name);
    GPT scaled(tiny(parse_pe(name), EmbeddingKind::scaled), 5);
    GPT gpt2(tiny(parse_pe(name), EmbeddingKind::gpt2), 6);
    randomize(scaled, 7);
    {
      NoGrad ng;
      const std::vector<NamedParam> from = scaled.parameters(), to = gpt2.parameters();
      REQUIRE(from.size() == to.size());
      for (size_t i = 0; i < from.size(); ++i) to[i].tensor.copy_(from[i].tensor);
      param(gpt2, "transformer.wte.weight")
          .copy_(scale(param(scaled, "transformer.wte.weight"), s));
    }
    NoGrad ng;
    const std::vector<double> a = scaled.logits(ids).to_vector(), b = gpt2.logits(ids).to_vector();
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(s * a[i] - b[i]));
    CHECK(worst < 1e-10);
  }
}

// Sample std of a tensor's elements.
static double sample_std(const Tensor& t) {
  const std::vector<double> v = t.to_vector();
  double mean = 0, sq = 0;
  for (double x : v) mean += x / v.size();
  for (double x : v) sq += (x - mean) * (x - mean) / v.size();
  return std::sqrt(sq);
}

TEST_CASE("embedding init: std 0.02 for gpt2, d^-0.5 for scaled, wte and wpe alike", "[nn]") {
  GPTConfig c = tiny(PeKind::learned, EmbeddingKind::gpt2);
  c.vocab_size = 64, c.n_embd = 64, c.n_head = 4, c.pe.max_len = 64;  // 4096 draws each
  GPT gpt2(c, 1);
  CHECK(sample_std(param(gpt2, "transformer.wte.weight")) == Approx(0.02).epsilon(0.05));
  CHECK(sample_std(param(gpt2, "transformer.wpe.weight")) == Approx(0.02).epsilon(0.05));
  c.embedding = EmbeddingKind::scaled;
  GPT scaled(c, 1);
  CHECK(sample_std(param(scaled, "transformer.wte.weight")) == Approx(0.125).epsilon(0.05));
  CHECK(sample_std(param(scaled, "transformer.wpe.weight")) == Approx(0.125).epsilon(0.05));
  // The Linear weights do not change with the embedding: same seed, same draws after wte/wpe.
  CHECK(param(scaled, "transformer.h.0.attn.c_attn.weight").to_vector() ==
        param(gpt2, "transformer.h.0.attn.c_attn.weight").to_vector());
  CHECK(GPTConfig{}.embedding == EmbeddingKind::gpt2);  // the default
}

TEST_CASE("embedding names", "[nn][errors]") {
  CHECK(parse_embedding("scaled") == EmbeddingKind::scaled);
  CHECK(std::string(embedding_name(EmbeddingKind::gpt2)) == "gpt2");
  REQUIRE_THROWS_WITH(parse_embedding("fairseq"),
                      Contains("--embedding: expected one of gpt2|scaled, but got 'fairseq'"));
}
