// Gradient checks of attention and the model (tests/support/gradcheck.h): the fused attention
// op (ops), attention with each scheme's terms (posenc.h's hook: rope rotates q and k, alibi
// hands a bias table), a learned relative-bias table, one Block with every parameter, and a
// whole 2-layer model per scheme. Each op's name starts with the table `make gradcheck`
// prints it in.
#include <catch2/catch.hpp>

#include "nn/attention_op.h"
#include "nn/gpt.h"
#include "posenc/alibi.h"
#include "posenc/rope.h"
#include "posenc/t5.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using poslab::testing::named;
using poslab::testing::rand_leaf;

namespace {

struct Qkv {
  Tensor q, k, v;
};
Qkv qkv_leaves(int64_t B, int64_t Tq, int64_t Tk, int64_t H, int64_t D, uint64_t seed) {
  return {rand_leaf({B, Tq, H, D}, seed), rand_leaf({B, Tk, H, D}, seed + 1),
          rand_leaf({B, Tk, H, D}, seed + 2)};
}

// Attention with the terms `pe` hands it (as the model's attention module does), checked with
// respect to q, k, v before the scheme acts.
void check_through_scheme(const std::string& op, const PositionalEncoding& pe, const Qkv& x,
                          bool causal) {
  CHECK_GRADCHECK(
      op,
      [&pe, causal](auto& v) {
        AttentionTerms t = attention_terms_at(pe, v[0], v[1], 0, causal);
        AttentionOptions o;
        o.causal = causal;
        o.rel_bias = t.rel_bias;
        return attention(t.q, t.k, v[2], o);
      },
      {x.q, x.k, x.v}, named({"q", "k", "v"}));
}

}  // namespace

TEST_CASE("gradcheck: ops: fused attention with and without mask, on strided q/k/v",
          "[gradcheck][nn]") {
  Qkv x = qkv_leaves(2, 7, 7, 2, 4, 5);
  for (bool causal : {true, false}) {
    AttentionOptions o;
    o.causal = causal;
    CHECK_GRADCHECK(
        std::string("ops: attention ") + (causal ? "causal" : "no mask"),
        [o](auto& v) { return attention(v[0], v[1], v[2], o); }, {x.q, x.k, x.v},
        named({"q", "k", "v"}));
  }
  // q, k, v as column blocks of one (B,T,3C) projection, as the model makes them
  Tensor qkv = rand_leaf({1, 5, 3 * 8}, 8);
  CHECK_GRADCHECK(
      "ops: attention on strided q/k/v",
      [](auto& v) {
        Tensor q = reshape(slice(v[0], 2, 0, 8), {1, 5, 2, 4}),
               k = reshape(slice(v[0], 2, 8, 16), {1, 5, 2, 4}),
               w = reshape(slice(v[0], 2, 16, 24), {1, 5, 2, 4});
        return attention(q, k, w, AttentionOptions{});
      },
      {qkv}, named({"qkv"}));
  // the same blocks with a learned bias table as T5 hands it
  for (bool causal : {true, false}) {
    Tensor table = rand_leaf({2, 9}, 9);
    CHECK_GRADCHECK(
        std::string("ops: attention on strided q/k/v + rel_bias ") +
            (causal ? "causal" : "no mask"),
        [causal](auto& v) {
          AttentionOptions o;
          o.causal = causal;
          o.rel_bias = v[1];
          Tensor q = reshape(slice(v[0], 2, 0, 8), {1, 5, 2, 4}),
                 k = reshape(slice(v[0], 2, 8, 16), {1, 5, 2, 4}),
                 w = reshape(slice(v[0], 2, 16, 24), {1, 5, 2, 4});
          return attention(q, k, w, o);
        },
        {qkv, table}, named({"qkv", "rel_bias"}));
  }
}

TEST_CASE("gradcheck: ops: attention with a learned relative-bias table", "[gradcheck][nn]") {
  // the table T5's bias will be gathered into; dbias collects dS along each diagonal
  for (bool causal : {true, false}) {
    Qkv x = qkv_leaves(2, 9, 9, 3, 4, 11);
    Tensor bias = rand_leaf({3, 17}, 14);
    AttentionOptions o;
    o.causal = causal;
    CHECK_GRADCHECK(
        std::string("ops: attention + rel_bias ") + (causal ? "causal" : "no mask"),
        [o](auto& v) {
          AttentionOptions with = o;
          with.rel_bias = v[3];
          return attention(v[0], v[1], v[2], with);
        },
        {x.q, x.k, x.v, bias}, named({"q", "k", "v", "rel_bias"}));
  }
  // a decoding step: 3 queries at positions 6..8 over 9 keys (a table of 3 + 9 - 1 columns)
  Qkv x = qkv_leaves(1, 3, 9, 2, 4, 15);
  Tensor bias = rand_leaf({2, 11}, 18);
  CHECK_GRADCHECK(
      "ops: attention + rel_bias, queries at 6..8",
      [](auto& v) {
        AttentionOptions o;
        o.q_pos0 = 6;
        o.rel_bias = v[3];
        return attention(v[0], v[1], v[2], o);
      },
      {x.q, x.k, x.v, bias}, named({"q", "k", "v", "rel_bias"}));
}

TEST_CASE("gradcheck: alibi: attention with ALiBi's bias where it matters", "[gradcheck][nn]") {
  // H = 8: slopes 2^-1 .. 2^-8, so at T = 16 the first heads' bias reaches -7.5; H = 6: the
  // non-power-of-two rule (2^-2, 2^-4, 2^-6, 2^-8, 2^-1, 2^-3)
  for (int64_t H : {8, 6})
    for (bool causal : {true, false}) {
      ALiBi alibi(H);
      check_through_scheme(
          "alibi: attention H=" + std::to_string(H) + " T=16" + (causal ? " causal" : " no mask"),
          alibi, qkv_leaves(1, 16, 16, H, 4, 20 + H), causal);
    }
}

TEST_CASE("gradcheck: rope: attention with RoPE's rotated q and k", "[gradcheck][nn]") {
  RoPE rope(4, 10000);
  check_through_scheme("rope: attention H=2 T=9 causal", rope, qkv_leaves(2, 9, 9, 2, 4, 30), true);
}

// T5 at nb = 8, max_distance = 12 over T = 20: offsets past num_buckets/2 (log-spaced buckets)
// and past max_distance (the last bucket), so the scatter-add sums many offsets per bucket.
// The table drawn with std 1 (not 0.02) so that the bias shapes attention.
TEST_CASE("gradcheck: t5: attention through the t5 bias, and the table's gradient",
          "[gradcheck][nn]") {
  for (bool causal : {true, false}) {
    Generator g(40);
    T5Bias t5(3, T5Options{8, 12, causal}, g, DType::f64);
    {
      NoGrad ng;
      t5.weight().copy_(Tensor::randn({8, 3}, g, 1.0, DType::f64));
    }
    std::string form = causal ? " causal" : " bidirectional";
    Qkv x = qkv_leaves(1, 20, 20, 3, 4, causal ? 41 : 44);
    check_through_scheme("t5: attention H=3 T=20 nb=8 max_distance=12" + form, t5, x, causal);
    Tensor rel_bias = t5.weight();    // the leaf the scheme holds, perturbed in place
    for (int64_t q_pos0 : {0, 17}) {  // the whole window; 3 queries at 17..19 (decoding)
      Tensor q = x.q.detach().slice(1, q_pos0, 20).contiguous(), k = x.k.detach(), v = x.v.detach();
      CHECK_GRADCHECK(
          "t5: attention, queries at " + std::to_string(q_pos0) + ".." + std::to_string(19) + form,
          [&, q_pos0](auto&) {
            AttentionTerms t = attention_terms_at(t5, q, k, q_pos0, causal);
            AttentionOptions o;
            o.causal = causal, o.q_pos0 = q_pos0, o.rel_bias = t.rel_bias;
            return attention(t.q, t.k, v, o);
          },
          {rel_bias}, named({"rel_bias (8, H)"}));
    }
  }
}

TEST_CASE("gradcheck: ops: one Block, every parameter", "[gradcheck][nn]") {
  Generator g(1);
  Block blk(8, 2, true, g, 0.3, DType::f64);
  std::vector<NamedParam> params;
  blk.collect(params, "block");
  std::vector<Tensor> inputs{rand_leaf({2, 5, 8}, 2)};
  std::vector<std::string> names{"x"};
  for (const NamedParam& p : params) {
    NoGrad ng;  // move off the init's 1s and 0s, so every parameter carries signal
    p.tensor.copy_(Tensor::randn(p.tensor.shape(), g, 0.5, DType::f64));
    inputs.push_back(p.tensor);
    names.push_back(p.name);
  }
  REQUIRE(params.size() == 12);
  RoPE rope(4, 10000);
  PositionContext at;
  at.Tq = at.Tk = 5;
  at = rope.context(at, DType::f64, Device::cpu);  // x's 5 positions
  CHECK_GRADCHECK(
      "ops: Block (rope, causal)", [&](auto& v) { return blk.forward(v[0], rope, at); }, inputs,
      named(names));
}

TEST_CASE("gradcheck: every scheme: a whole 2-layer model", "[gradcheck][nn][posenc]") {
  Ids ids{{1, 4, 2, 6, 0, 3, 3, 5, 1, 2}, {2, 5}}, tgt{{4, 2, 6, 0, 3, 5, 1, 2, 2, 6}, {2, 5}};
  for (const std::string& name : pe_names()) {
    GPTConfig c;
    c.vocab_size = 7, c.n_layer = 2, c.n_head = 2, c.n_embd = 8, c.block_size = 6, c.pe.max_len = 8;
    c.pe.kind = parse_pe(name), c.dtype = DType::f64;
    GPT m(c, 11);
    Generator g(12);
    std::vector<Tensor> leaves;
    std::vector<std::string> names;
    {
      NoGrad ng;  // larger weights than the 0.02 init so every path carries signal
      for (auto& p : m.parameters()) {
        p.tensor.copy_(Tensor::randn(p.tensor.shape(), g, 0.4, DType::f64));
        leaves.push_back(p.tensor), names.push_back(p.name);
      }
    }
    // 16 elements of every parameter tensor (all of them would take a minute per scheme)
    CHECK_GRADCHECK(
        name + ": whole model, loss", [&](auto&) { return m.loss(ids, tgt); }, leaves,
        named(names, 16));
  }
}
