// The one-file reference (nn/gpt_reference.cpp: plain loops in double, no autograd) against the
// framework (GPT::loss and backward()): the same loss and the same gradient of every parameter,
// for every scheme and option, both embedding conventions, with and without the causal mask;
// in f64 (the same math, rounding apart) and in f32 (the path that trains: our sgemm, the fast
// exp, the GELU kernel). Then what the reference's training needs to be poslab train's: the
// same random numbers, initial weights and drawn positions. tests/train/test_reference_train.cpp
// compares whole training steps.
#include <catch2/catch.hpp>

#include "posenc/random_positions.h"
#include "tests/nn/gpt_reference_adapter.h"
#include "tests/nn/tiny_gpt.h"

using namespace poslab;
using poslab::test::reference_batch;
using poslab::test::reference_config;
using poslab::test::reference_params;
using poslab::test::tiny;
namespace ref = poslab::reference;

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

// The reference's step on the model's weights, config and interventions (positions, scaling).
ref::StepResult reference_step(const GPT& m, const Ids& ids, const Ids& targets,
                               const Interventions& iv = {}) {
  return ref::forward_backward(reference_config(m.config(), iv.rope_scaling), reference_params(m),
                               reference_batch(ids, targets, iv.positions));
}

// The largest |framework - reference| over the loss and every gradient entry, each relative
// to the largest |entry| of its gradient (at least 1e-3, so a gradient that is nearly zero
// everywhere is compared on an absolute scale). Prints the worst parameter.
double worst_gap(const GPT& m, const Ids& ids, const Ids& targets, const Interventions& iv = {}) {
  Tensor loss = m.loss(ids, targets, nullptr, iv);
  backward(loss);
  ref::StepResult r = reference_step(m, ids, targets, iv);
  double worst = std::abs(loss.item() - r.loss) / std::abs(r.loss);
  std::vector<NamedParam> params = m.parameters();
  std::vector<ref::NamedArray> grads = ref::named_arrays(reference_config(m.config()), r.grad);
  REQUIRE(grads.size() == params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    REQUIRE(grads[i].name == params[i].name);
    REQUIRE(params[i].tensor.grad().defined());
    std::vector<double> g = params[i].tensor.grad().to_vector(), rg = *grads[i].value;
    REQUIRE(g.size() == rg.size());
    double scale = 1e-3, gap = 0;
    for (size_t k = 0; k < rg.size(); ++k) scale = std::max(scale, std::abs(rg[k]));
    for (size_t k = 0; k < rg.size(); ++k) gap = std::max(gap, std::abs(g[k] - rg[k]) / scale);
    if (gap > worst) UNSCOPED_INFO(params[i].name << ": relative gap " << gap);
    worst = std::max(worst, gap);
  }
  return worst;
}

// f64 on both sides, the same math in another order (blocked GEMMs, FlashAttention's
// recomputed softmax): they differ by rounding only, about 1e-15 of each gradient's size. A
// wrong sign, factor or index anywhere moves some entry by a sizeable share of it.
constexpr double kRounding = 1e-11;

// The schemes that act inside attention, where --nope-every leaves layers without position.
const std::vector<PeKind> kInAttention{PeKind::rope, PeKind::xpos,   PeKind::alibi,
                                       PeKind::t5,   PeKind::kerple, PeKind::fire};

}  // namespace

TEST_CASE("the plain-loop reference is the same model as GPT: loss and every gradient",
          "[nn][posenc][reference]") {
  auto [ids, targets] = batch(2, 6, 7, 11);
  for (const std::string& name : pe_names())
    for (EmbeddingKind e : {EmbeddingKind::gpt2, EmbeddingKind::scaled})
      for (bool causal : {true, false}) {
        if (name == "xpos" && !causal) continue;  // xPos's decay needs the mask (posenc/xpos.h)
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
  for (const std::string& name : pe_names())
    for (bool causal : {true, false}) {
      if (name == "xpos" && !causal) continue;
      INFO("pe = " << name << ", causal " << causal);
      GPTConfig c = tiny(parse_pe(name), causal);
      c.pe.nope_every = acts_in_attention(c.pe.kind) ? 2 : 0;  // block 1 without position
      GPT m(c, 5);
      const ref::StepResult r = reference_step(m, ids, targets);
      const int64_t L = m.config().n_layer;
      REQUIRE(static_cast<int64_t>(r.attention.size()) == L);
      const std::vector<Tensor> maps = m.attention_maps(ids, L - 1);
      REQUIRE(static_cast<int64_t>(maps.size()) == L);
      for (int64_t l = 0; l < L; ++l) {
        INFO("block " << l);
        const std::vector<double> one = maps[l].to_vector(),
                                  alone = m.attention_map(ids, l).to_vector();
        REQUIRE(one.size() == r.attention[l].size());
        REQUIRE(alone.size() == one.size());
        double gap = 0;
        for (size_t k = 0; k < one.size(); ++k)
          gap = std::max(
              {gap, std::abs(one[k] - r.attention[l][k]), std::abs(alone[k] - r.attention[l][k])});
        CHECK(gap < kRounding);
      }
    }
  CHECK_THROWS_WITH(GPT(tiny(PeKind::rope), 5).attention_maps(ids, 2),
                    Catch::Contains("layer 2 out of range for 2 layers"));
}

TEST_CASE("the reference follows every scheme's settings and ignored targets",
          "[nn][posenc][reference]") {
  auto [ids, targets] = batch(2, 6, 7, 12);
  SECTION("rope: the half layout, a quarter of each head rotated, theta 100") {
    GPTConfig c = tiny(PeKind::rope);
    c.n_embd = 16;  // D = 8: rotated dims r = 2
    c.pe.rope_layout = RopeLayout::half, c.pe.rope_fraction = 0.25, c.pe.theta = 100;
    REQUIRE(worst_gap(GPT(c, 3), ids, targets) < kRounding);
  }
  SECTION("p-RoPE: 3 of 8 pairs keep their frequencies, either layout") {
    for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half}) {
      GPTConfig c = tiny(PeKind::rope);
      c.n_embd = 32;  // D = 16: 8 pairs, floor(0.4 * 8) = 3 kept
      c.pe.rope_proportion = 0.4, c.pe.rope_layout = layout, c.pe.theta = 100;
      REQUIRE(worst_gap(GPT(c, 3), ids, targets) < kRounding);
    }
  }
  SECTION("xpos: the half layout, a steep decay (B = 4)") {
    GPTConfig c = tiny(PeKind::xpos);
    c.pe.rope_layout = RopeLayout::half, c.pe.xpos_scale_base = 4;
    REQUIRE(worst_gap(GPT(c, 3), ids, targets) < kRounding);
  }
  SECTION("alibi with 3 heads (slopes of the non-power-of-two rule)") {
    GPTConfig c = tiny(PeKind::alibi);
    c.n_embd = 12, c.n_head = 3;
    REQUIRE(worst_gap(GPT(c, 3), ids, targets) < kRounding);
  }
  SECTION("t5 with 4 buckets up to distance 3: offsets share buckets") {
    for (bool causal : {true, false}) {
      GPTConfig c = tiny(PeKind::t5, causal);
      c.pe.t5_buckets = causal ? 4 : 8, c.pe.t5_max_distance = 3;
      REQUIRE(worst_gap(GPT(c, 3), ids, targets) < kRounding);
    }
  }
  SECTION("fire with 5 hidden units") {
    GPTConfig c = tiny(PeKind::fire);
    c.pe.fire_width = 5;
    REQUIRE(worst_gap(GPT(c, 3), ids, targets) < kRounding);
  }
  SECTION("targets of -1 are left out of the mean") {
    targets.data[1] = targets.data[4] = -1;
    REQUIRE(worst_gap(GPT(tiny(PeKind::learned), 3), ids, targets) < kRounding);
  }
}

TEST_CASE("the reference leaves every k-th layer without position (--nope-every)",
          "[nn][posenc][reference]") {
  auto [ids, targets] = batch(2, 6, 7, 13);
  for (PeKind pe : kInAttention)
    for (int64_t k : {1, 2}) {  // 1: no layer has position; 2: layer 1 has none (of 3)
      INFO("pe = " << pe_name(pe) << ", nope_every " << k);
      GPTConfig c = tiny(pe);
      c.n_layer = 3, c.pe.nope_every = k;
      GPT m(c, 4);
      if (k == 1 && (pe == PeKind::t5 || pe == PeKind::kerple)) {
        // the shared table is read by no layer: no gradient reaches it, nor the reference's
        Tensor loss = m.loss(ids, targets);
        backward(loss);
        REQUIRE(std::abs(loss.item() - reference_step(m, ids, targets).loss) < 1e-12);
        continue;
      }
      REQUIRE(worst_gap(m, ids, targets) < kRounding);
    }
}

TEST_CASE("the reference reads given positions (random positions) wherever a position enters",
          "[nn][posenc][reference]") {
  auto [ids, targets] = batch(2, 6, 7, 14);
  for (const std::string& name : pe_names())
    for (bool causal : {true, false}) {
      if (name == "none" || (name == "xpos" && !causal)) continue;
      INFO("pe = " << name << ", causal " << causal);
      GPTConfig c = tiny(parse_pe(name), causal);
      c.pe.random_positions = 12, c.pe.max_len = 0;  // learned: 12 rows
      GPT m(c, 6);
      Interventions iv;
      iv.positions = draw_position_rows(2, 6, 12, 99, 0);  // FIRE: queries past Lthr = 6 too
      REQUIRE(worst_gap(m, ids, targets, iv) < kRounding);
    }
}

TEST_CASE("the reference is one step of a RoPE-scaled fine-tune (linear, factor 4)",
          "[nn][posenc][reference]") {
  auto [ids, targets] = batch(2, 12, 7, 15);  // 12 tokens: twice the model's T0 of 6
  for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half}) {
    GPTConfig c = tiny(PeKind::rope);
    c.pe.rope_layout = layout;
    Interventions iv;
    iv.rope_scaling.kind = ScalingKind::linear, iv.rope_scaling.factor = 4;
    REQUIRE(worst_gap(GPT(c, 7), ids, targets, iv) < kRounding);
  }
}

// f32, the path that trains: our sgemm kernels, the attention kernel's fast exp and the GELU
// kernel, against the reference's double loops on the same (f32) weights. A model large enough
// for the blocked kernels (C = 64, T = 32). f32 rounds at 6e-8; a gradient is a sum of hundreds
// of such products through 2 layers, and the fast exp is good to a few ulp: the gaps measured
// here are 5e-7 to 8e-7 of a gradient's largest entry. 2e-5 leaves room for other CPUs'
// summation orders, and still fails on a wrong term (a share of the gradient, 1e-2 and up).
TEST_CASE("the reference matches the f32 framework that trains, every scheme, within 2e-5",
          "[nn][posenc][reference]") {
  auto [ids, targets] = batch(2, 32, 40, 16);
  for (const std::string& name : pe_names()) {
    INFO("pe = " << name);
    GPTConfig c = tiny(parse_pe(name));
    c.dtype = DType::f32, c.vocab_size = 40, c.n_embd = 64, c.n_head = 4, c.block_size = 32;
    c.pe.max_len = 32, c.pe.nope_every = name == "rope" ? 2 : 0;
    GPT m(c, 8);
    CHECK(worst_gap(m, ids, targets) < 2e-5);
  }
  GPTConfig c = tiny(PeKind::rope);
  c.dtype = DType::f32, c.vocab_size = 40, c.n_embd = 64, c.n_head = 4, c.block_size = 32;
  c.pe.rope_proportion = 0.5;
  Interventions iv;
  iv.positions = draw_position_rows(2, 32, 100, 5, 0);
  CHECK(worst_gap(GPT(c, 9), ids, targets, iv) < 2e-5);
}

TEST_CASE("the reference draws poslab's random numbers, initial weights and positions",
          "[nn][reference]") {
  Generator a(42);
  ref::Generator b(42);
  for (int i = 0; i < 1000; ++i) REQUIRE(a.next_u64() == b.next_u64());
  for (int i = 0; i < 1001; ++i) REQUIRE(a.uniform() == b.uniform());
  for (int i = 0; i < 1001; ++i) REQUIRE(a.normal() == b.normal());  // the spare value too
  for (int pe = 0; pe < static_cast<int>(pe_names().size()); ++pe)
    REQUIRE(std::string(ref::pe_name(static_cast<ref::Pe>(pe))) == pe_names()[pe]);
  // GPT(c, seed)'s weights, drawn in its order, to the bit (f64)
  for (const std::string& name : pe_names())
    for (EmbeddingKind e : {EmbeddingKind::gpt2, EmbeddingKind::scaled}) {
      INFO("pe = " << name << ", embedding " << embedding_name(e));
      GPTConfig c = tiny(parse_pe(name), true, e);
      c.n_layer = 3, c.pe.max_len = 0, c.pe.random_positions = name == "learned" ? 10 : 0;
      c.pe.nope_every = name == "fire" ? 2 : 0;  // FIRE draws for layers 0 and 2 only
      const GPT m(c, 1234);
      ref::Params drawn = ref::init_params(reference_config(m.config()), 1234);
      ref::Params taken = reference_params(m);
      std::vector<ref::NamedArray> d = ref::named_arrays(reference_config(m.config()), drawn),
                                   t = ref::named_arrays(reference_config(m.config()), taken);
      REQUIRE(d.size() == t.size());
      for (size_t i = 0; i < d.size(); ++i) {
        INFO(d[i].name);
        REQUIRE(*d[i].value == *t[i].value);
      }
    }
  // --random-positions: a step's rows and a val batch's
  for (int64_t step : {0, 7, -3}) {
    const Ids want = draw_position_rows(3, 16, 40, position_seed(1337, step), 0);
    REQUIRE(ref::draw_positions(3, 16, 40, 1337, step) == want.data);
  }
}

TEST_CASE("the reference refuses what it cannot compute, by name", "[nn][reference][errors]") {
  GPT m(tiny(PeKind::learned), 1);
  Ids ids{std::vector<int32_t>(9, 0), {1, 9}};
  REQUIRE_THROWS_WITH(reference_step(m, ids, ids),
                      Catch::Contains("a window of 9 positions, but wpe holds 8"));
  REQUIRE_THROWS_WITH(reference_step(m, ids, Ids{{0}, {1, 1}}),
                      Catch::Contains("expected ids and targets of one shape"));
  Ids big{std::vector<int32_t>(4, 7), {1, 4}};
  REQUIRE_THROWS_WITH(reference_step(m, big, big), Catch::Contains("past the vocabulary"));
  REQUIRE_THROWS_WITH(ref::parse_pe("rotary"), Catch::Contains("expected none|learned|"));
}
