// The whole-model reference (nn/gpt_reference.cpp: plain loops in double, no autograd) against
// the framework (GPT::loss and backward()): the same loss and the same gradient of every
// parameter, for every scheme, both embedding conventions, with and without the causal mask.
#include <catch2/catch.hpp>

#include "nn/gpt_reference.h"
#include "tests/nn/tiny_gpt.h"

using namespace poslab;
using poslab::test::tiny;

namespace {

// ids and next-token targets (B,T) of tokens below V, drawn from a fixed seed.
std::pair<Ids, Ids> batch(int64_t B, int64_t T, int64_t V, uint64_t seed) {
  Generator gen(seed);
  Ids ids{{}, {B, T}}, targets{{}, {B, T}};
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int32_t> row(T + 1);
    for (int32_t& token : row) token = static_cast<int32_t>(gen.uniform() * V);
    ids.data.insert(ids.data.end(), row.begin(), row.end() - 1);
    targets.data.insert(targets.data.end(), row.begin() + 1, row.end());
  }
  return {ids, targets};
}

// The largest |framework - reference| over the loss and every gradient entry, each relative
// to the largest |entry| of its gradient (at least 1e-3, so a gradient that is nearly zero
// everywhere is compared on an absolute scale). Prints the worst parameter.
double worst_gap(const GPT& m, const Ids& ids, const Ids& targets) {
  Tensor loss = m.loss(ids, targets);
  backward(loss);
  ReferenceStep ref = gpt_reference_step(m, ids, targets);
  double worst = std::abs(loss.item() - ref.loss) / std::abs(ref.loss);
  std::vector<NamedParam> params = m.parameters();
  REQUIRE(ref.grads.size() == params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    REQUIRE(ref.grads[i].name == params[i].name);
    std::vector<double> g = params[i].tensor.grad().to_vector(), r = ref.grads[i].value;
    REQUIRE(g.size() == r.size());
    double scale = 1e-3, gap = 0;
    for (size_t k = 0; k < r.size(); ++k) scale = std::max(scale, std::abs(r[k]));
    for (size_t k = 0; k < r.size(); ++k) gap = std::max(gap, std::abs(g[k] - r[k]) / scale);
    if (gap > worst) UNSCOPED_INFO(params[i].name << ": relative gap " << gap);
    worst = std::max(worst, gap);
  }
  return worst;
}

}  // namespace

// f64 on both sides, the same math in another order (blocked GEMMs, FlashAttention's
// recomputed softmax): they differ by rounding only, about 1e-15 of each gradient's size. A
// wrong sign, factor or index anywhere moves some entry by a sizeable share of it.
constexpr double kRounding = 1e-11;

// The six schemes the reference covers so far; the v5 ones (kerple, fire, xpos) join when
// nn/gpt_reference.cpp has their loops (issue #63 item 9, #66).
static std::vector<std::string> v4_pe_names() {
  std::vector<std::string> n = pe_names();
  n.resize(6);
  return n;
}

TEST_CASE("the plain-loop reference is the same model as GPT: loss and every gradient",
          "[nn][posenc][reference]") {
  auto [ids, targets] = batch(2, 6, 7, 11);
  for (const std::string& name : v4_pe_names())
    for (EmbeddingKind e : {EmbeddingKind::gpt2, EmbeddingKind::scaled})
      for (bool causal : {true, false}) {
        INFO("pe = " << name << ", embedding " << embedding_name(e) << ", causal " << causal);
        GPT m(tiny(parse_pe(name), causal, e), 5);
        REQUIRE(worst_gap(m, ids, targets) < kRounding);
      }
}

TEST_CASE(
    "every block's attention weights, in one pass and one block at a time, are the "
    "reference's",
    "[nn][posenc][reference]") {
  auto [ids, targets] = batch(2, 6, 7, 12);
  for (const std::string& name : v4_pe_names())
    for (bool causal : {true, false}) {
      INFO("pe = " << name << ", causal " << causal);
      GPT m(tiny(parse_pe(name), causal), 5);
      const ReferenceStep ref = gpt_reference_step(m, ids, targets);
      const int64_t L = m.config().n_layer;
      REQUIRE(static_cast<int64_t>(ref.attention.size()) == L);
      const std::vector<Tensor> maps = m.attention_maps(ids, L - 1);
      REQUIRE(static_cast<int64_t>(maps.size()) == L);
      for (int64_t l = 0; l < L; ++l) {
        INFO("block " << l);
        const std::vector<double> one = maps[l].to_vector(),
                                  alone = m.attention_map(ids, l).to_vector();
        REQUIRE(one.size() == ref.attention[l].size());
        REQUIRE(alone.size() == one.size());
        double gap = 0;
        for (size_t k = 0; k < one.size(); ++k)
          gap = std::max({gap, std::abs(one[k] - ref.attention[l][k]),
                          std::abs(alone[k] - ref.attention[l][k])});
        CHECK(gap < kRounding);
      }
    }
  CHECK_THROWS_WITH(GPT(tiny(PeKind::rope), 5).attention_maps(ids, 2),
                    Catch::Contains("layer 2 out of range for 2 layers"));
}

TEST_CASE("the reference follows RoPE's options, ALiBi's and T5's settings, ignored targets",
          "[nn][posenc][reference]") {
  auto [ids, targets] = batch(2, 6, 7, 12);
  SECTION("rope: the half layout, a quarter of each head rotated, theta 100") {
    GPTConfig c = tiny(PeKind::rope);
    c.n_embd = 16;  // D = 8: rotated dims r = 2
    c.pe.rope_layout = RopeLayout::half, c.pe.rope_fraction = 0.25, c.pe.theta = 100;
    REQUIRE(worst_gap(GPT(c, 3), ids, targets) < kRounding);
  }
  SECTION("alibi with 3 heads (slopes of the non-power-of-two rule)") {
    GPTConfig c = tiny(PeKind::alibi);
    c.n_embd = 12, c.n_head = 3;
    REQUIRE(worst_gap(GPT(c, 3), ids, targets) < kRounding);
  }
  SECTION("t5 with 4 buckets up to distance 3: offsets share buckets") {
    GPTConfig c = tiny(PeKind::t5);
    c.pe.t5_buckets = 4, c.pe.t5_max_distance = 3;
    REQUIRE(worst_gap(GPT(c, 3), ids, targets) < kRounding);
  }
  SECTION("targets of -1 are left out of the mean") {
    targets.data[1] = targets.data[4] = -1;
    REQUIRE(worst_gap(GPT(tiny(PeKind::learned), 3), ids, targets) < kRounding);
  }
}

TEST_CASE("the reference refuses what it does not model, by name", "[nn][reference][errors]") {
  GPT m(tiny(PeKind::learned), 1);
  Ids ids{std::vector<int32_t>(9, 0), {1, 9}};
  REQUIRE_THROWS_WITH(gpt_reference_step(m, ids, ids),
                      Catch::Contains("a window of 9 positions, but wpe holds 8"));
  REQUIRE_THROWS_WITH(gpt_reference_step(m, ids, Ids{{0}, {1, 1}}),
                      Catch::Contains("expected ids and targets of one shape"));
}
