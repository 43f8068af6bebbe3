// The model: permutation equivariance without positions; cached decoding; dynamic scaling;
// parameters and config errors. Its gradient checks are in gradcheck_nn.cpp.
#include <catch2/catch.hpp>

#include "nn/gpt.h"
#include "posenc/rope.h"
#include "tests/nn/tiny_gpt.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using Catch::Contains;

using poslab::test::tiny;

// Without positions and without a mask, attention sees a set: permuting the tokens permutes
// the output rows. "我打你" and "你打我" are the same three tokens in another order.
// Max over t, v of |out(x)[t] - out(perm x)[perm^-1 t]| for a permutation of 3 tokens.
static double equivariance_gap(const GPT& m, const std::vector<int32_t>& toks,
                               const std::vector<int>& perm) {
  NoGrad ng;
  std::vector<int32_t> p(3);
  for (int t = 0; t < 3; ++t)
    p[t] = toks[perm[t]];  // position t of the permuted input holds token perm[t]
  Tensor a = m.logits(Ids{toks, {1, 3}}), b = m.logits(Ids{p, {1, 3}});
  double gap = 0;
  for (int t = 0; t < 3; ++t)
    for (int v = 0; v < 7; ++v)
      gap = std::max(gap, std::abs(b.at({0, t, v}) - a.at({0, perm[t], v})));
  return gap;
}

TEST_CASE("NoPE without a mask is permutation-equivariant; every PE breaks it", "[nn][posenc]") {
  std::vector<int32_t> wo_da_ni{0, 1, 2};  // 我=0 打=1 你=2; reversed: 你打我
  std::vector<int> reverse{2, 1, 0}, rotate{1, 2, 0};
  for (const std::string& name : pe_names()) {
    if (name == "xpos") {  // its decay assumes keys before queries: refused without the mask
      REQUIRE_THROWS_WITH(GPT(tiny(PeKind::xpos, false), 3), Catch::Contains("--causal true"));
      continue;
    }
    GPT m(tiny(parse_pe(name), /*causal=*/false), 3);
    double rev = equivariance_gap(m, wo_da_ni, reverse),
           rot = equivariance_gap(m, wo_da_ni, rotate);
    INFO("pe = " << name << ": gap under reversal " << rev << ", under rotation " << rot);
    if (name == "none") {
      REQUIRE(rev < 1e-12);
      REQUIRE(rot < 1e-12);
    } else if (name == "alibi" || name == "kerple" || name == "fire") {
      // without the mask ALiBi's bias is -m|i - j|, which a reversal preserves: 我打你 and
      // 你打我 stay mirror images. Any other order breaks it. KERPLE's -p ln(1 + a|i - j|) too,
      // and FIRE's f(phi(|i - j|) / phi(Lthr)) while every query sits below Lthr (T0 = 6).
      REQUIRE(rev < 1e-12);
      REQUIRE(rot > 1e-6);
    } else {
      REQUIRE(rev > 1e-6);
      REQUIRE(rot > 1e-6);
    }
  }
}

TEST_CASE("cached decoding equals recomputing the whole prefix, for every scheme", "[nn][posenc]") {
  std::vector<int32_t> toks{3, 1, 4, 1, 5, 2, 6, 5, 3, 5};
  for (const std::string& name : pe_names()) {
    for (ScalingKind sk : {ScalingKind::none, ScalingKind::dynamic}) {
      if (sk != ScalingKind::none && name != "rope") continue;
      GPTConfig cfg = tiny(parse_pe(name));
      cfg.block_size = 4;  // decode past T0 so dynamic scaling changes with the length
      cfg.pe.max_len = 16;
      GPT m(cfg, 5);
      Interventions iv;
      iv.rope_scaling = {sk, 0, cfg.block_size};
      KVCache cache = m.new_cache(16);
      double worst = 0;
      for (size_t t = 0; t < toks.size(); ++t) {
        Tensor step = m.decode(Ids{{toks[t]}, {1, 1}}, cache, iv.rope_scaling);  // (1,1,V)
        Ids prefix{std::vector<int32_t>(toks.begin(), toks.begin() + t + 1), {1, int64_t(t + 1)}};
        Tensor full;
        {
          NoGrad ng;
          full = m.logits(prefix, iv);
        }
        for (int v = 0; v < 7; ++v)
          worst = std::max(worst, std::abs(step.at({0, 0, v}) - full.at({0, int64_t(t), v})));
      }
      INFO("pe = " << name << " scaling = " << scaling_name(sk) << ": max difference " << worst);
      REQUIRE(worst < 1e-10);
    }
  }
}

TEST_CASE("dynamic scaling equals ntk with each row's own s, and plain RoPE below T0", "[posenc]") {
  GPTConfig cfg = tiny(PeKind::rope);
  cfg.block_size = 4;
  GPT m(cfg, 6);
  Ids ids{{1, 2, 3, 4, 5, 6, 0, 1}, {1, 8}};
  NoGrad ng;
  Tensor plain = m.logits(ids);
  Interventions dynamic, ntk;
  dynamic.rope_scaling = {ScalingKind::dynamic, 0, 4};
  Tensor dyn = m.logits(ids, dynamic);
  for (int64_t t = 0; t < 8; ++t) {
    // row t uses s = max(1, (t+1)/4): the same as ntk with that factor on the prefix 0..t
    ntk.rope_scaling = {ScalingKind::ntk, std::max(1.0, (t + 1) / 4.0), 4};
    Ids prefix{std::vector<int32_t>(ids.data.begin(), ids.data.begin() + t + 1), {1, t + 1}};
    Tensor ref = m.logits(prefix, ntk);
    for (int v = 0; v < 7; ++v) {
      REQUIRE(dyn.at({0, t, v}) == Approx(ref.at({0, t, v})).margin(1e-10));
      if (t < 4) REQUIRE(dyn.at({0, t, v}) == Approx(plain.at({0, t, v})).margin(1e-10));
    }
  }
}

TEST_CASE("the parameter count follows the architecture", "[nn]") {
  GPTConfig c = tiny(PeKind::learned);
  GPT m(c, 1);
  int64_t C = 8, V = 7, L = 2;
  int64_t per_block =
      2 * C + (3 * C * C + 3 * C) + (C * C + C) + 2 * C + (4 * C * C + 4 * C) + (4 * C * C + C);
  REQUIRE(m.num_parameters() == V * C + 8 * C + L * per_block + 2 * C);
  GPT r(tiny(PeKind::rope), 1);
  REQUIRE(r.num_parameters() == V * C + L * per_block + 2 * C);
  REQUIRE(m.parameters()[1].name == "transformer.wpe.weight");
  REQUIRE(m.parameters()[2].name == "transformer.h.0.ln_1.weight");
}

TEST_CASE("bad model configs are named errors", "[nn][errors]") {
  GPTConfig c = tiny(PeKind::rope);
  c.n_head = 3;
  REQUIRE_THROWS_WITH(GPT(c, 1),
                      Contains("--heads: expected a head count that divides --d = 8, but got 3"));
  c.n_head = 4;
  c.n_embd = 12;  // D = 3
  REQUIRE_THROWS_WITH(GPT(c, 1),
                      Contains("expected an even head dim D = d/heads") && Contains("D = 3"));
}

// A training step allocates nothing new once the first steps have filled the caching
// allocator (tensor/allocator.h): every tensor of a step reuses a block freed by the one
// before, and the kernels' scratch (sgemm's packing, attention's score blocks) is kept per
// thread. Measured on the canonical config (bench_train_step): 0 fresh blocks per step.
TEST_CASE("a steady-state training step takes no fresh memory, for every scheme", "[nn]") {
  for (const std::string& pe : pe_names()) {
    GPTConfig c;
    c.vocab_size = 20, c.n_layer = 2, c.n_head = 2, c.n_embd = 32, c.block_size = 64;
    c.pe.kind = parse_pe(pe);
    GPT m(c, 1);
    std::vector<Tensor> params;
    for (const NamedParam& p : m.parameters()) params.push_back(p.tensor);
    Ids x{std::vector<int32_t>(4 * 64), {4, 64}}, y = x;
    for (size_t i = 0; i < x.data.size(); ++i)
      x.data[i] = static_cast<int32_t>(i * 7 % 20), y.data[i] = static_cast<int32_t>(i * 3 % 20);
    auto step = [&] {
      zero_grad(params);
      backward(m.loss(x, y));
    };
    step(), step();
    AllocStats before = cpu_alloc_stats();
    step(), step();
    AllocStats after = cpu_alloc_stats();
    INFO(pe);
    CHECK(after.fresh_allocations == before.fresh_allocations);
    CHECK(after.bytes_in_use == before.bytes_in_use);
  }
}
