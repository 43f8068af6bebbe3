// The v5 schemes and options (KERPLE, FIRE, xPos, p-RoPE, --nope-every, random positions):
// every hand-derived backward against central finite differences in f64, the per-pair bias of
// the fused attention against its plain-loop reference, and the properties each scheme's
// header claims.
#include <catch2/catch.hpp>
#include <cmath>

#include "nn/attention_reference.h"
#include "nn/gpt.h"
#include "posenc/fire.h"
#include "posenc/kerple.h"
#include "posenc/random_positions.h"
#include "posenc/xpos.h"
#include "tests/nn/tiny_gpt.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using namespace poslab::testing;
using poslab::test::tiny;

namespace {

struct QKV {
  Tensor q, k, v;
};
QKV qkv(int64_t B, int64_t T, int64_t H, int64_t D, uint64_t seed) {
  return {rand_leaf({B, T, H, D}, seed), rand_leaf({B, T, H, D}, seed + 1),
          rand_leaf({B, T, H, D}, seed + 2)};
}

// Larger weights than the init, so every path of a whole model carries signal.
std::vector<Tensor> randomize(GPT& m, std::vector<std::string>& names, uint64_t seed) {
  Generator g(seed);
  std::vector<Tensor> leaves;
  NoGrad ng;
  for (auto& p : m.parameters()) {
    bool positive = p.name.find("kerple") != std::string::npos;  // p, a >= 0.01
    Tensor r = Tensor::randn(p.tensor.shape(), g, 0.4, DType::f64);
    if (positive)
      r = Tensor::from_vector(
          [&] {
            std::vector<double> v = r.to_vector();
            for (double& x : v) x = 0.2 + std::abs(x);
            return v;
          }(),
          r.shape(), DType::f64);
    p.tensor.copy_(r);
    leaves.push_back(p.tensor), names.push_back(p.name);
  }
  return leaves;
}

}  // namespace

TEST_CASE("gradcheck: ops: attention with a per-pair bias, shared and per sequence",
          "[gradcheck][nn]") {
  for (int64_t Bb : {1, 2}) {
    QKV x = qkv(2, 5, 2, 4, 70);
    Tensor bias = rand_leaf({Bb, 2, 5, 5}, 80);
    CHECK_GRADCHECK(
        "ops: attention, per-pair bias (" + std::to_string(Bb) + ",H,T,T)",
        [&](auto& v) {
          AttentionOptions o;
          o.bias = v[3];
          return attention(v[0], v[1], v[2], o);
        },
        {x.q, x.k, x.v, bias}, named({"q", "k", "v", "bias"}));
  }
}

TEST_CASE("the fused attention's per-pair bias equals the plain loops, gradients included",
          "[nn]") {
  for (int64_t Bb : {1, 3}) {
    QKV x = qkv(3, 70, 2, 8, 90);  // two row blocks of the kernel
    Tensor bias = rand_leaf({Bb, 2, 70, 70}, 95);
    AttentionOptions o;
    o.bias = bias, o.window = 40;
    Tensor a = attention(x.q, x.k, x.v, o), r = attention_reference(x.q, x.k, x.v, o);
    REQUIRE(max_diff(a, r) < 1e-12);
    Tensor R = rand_leaf(a.shape(), 99);
    std::vector<Tensor> grads;
    for (bool fused : {true, false}) {
      zero_grad({x.q, x.k, x.v, bias});
      Tensor y = fused ? attention(x.q, x.k, x.v, o) : attention_reference(x.q, x.k, x.v, o);
      backward(sum(mul(y, R)));
      grads.push_back(bias.grad().detach().contiguous());
      grads.push_back(x.q.grad().detach().contiguous());
    }
    INFO("Bb = " << Bb);
    CHECK(max_diff(grads[0], grads[2]) < 1e-12);
    CHECK(max_diff(grads[1], grads[3]) < 1e-12);
  }
}

TEST_CASE("gradcheck: kerple: the bias op and attention through its table", "[gradcheck][posenc]") {
  Tensor p = rand_leaf({3}, 1), a = rand_leaf({3}, 2);
  {
    NoGrad ng;
    p.copy_(Tensor::from_vector({0.5, 1.3, 0.02}, {3}, DType::f64));
    a.copy_(Tensor::from_vector({0.9, 0.1, 0.4}, {3}, DType::f64));
  }
  CHECK_GRADCHECK(
      "kerple: bias -p ln(1 + a n)",
      [&](auto& v) {
        return kerple_bias(v[0], v[1], {0, 1, 2, 5, 17, 300});
      },
      {p, a}, named({"bias_p (H)", "bias_a (H)"}));
  Generator g(3);
  Kerple ker(2, g, DType::f64);
  QKV x = qkv(2, 9, 2, 4, 10);
  for (int64_t q_pos0 : {0, 6}) {  // the whole window; 3 queries after 6 cached keys
    Tensor q = x.q.detach().slice(1, q_pos0, 9).contiguous();
    CHECK_GRADCHECK(
        "kerple: attention, queries at " + std::to_string(q_pos0) + "..8",
        [&, q_pos0](auto&) {
          AttentionTerms t = attention_terms_at(ker, q, x.k.detach(), q_pos0, true);
          AttentionOptions o;
          o.q_pos0 = q_pos0, o.rel_bias = t.rel_bias;
          return attention(t.q, t.k, x.v.detach(), o);
        },
        {ker.p(), ker.a()}, named({"bias_p (H)", "bias_a (H)"}));
  }
}

TEST_CASE("kerple: the table is -p ln(1 + a n), and the projection keeps p, a >= 0.01",
          "[posenc]") {
  Generator g(5);
  Kerple ker(2, g, DType::f64);
  {
    NoGrad ng;
    ker.p().copy_(Tensor::from_vector({-1.0, 0.7}, {2}, DType::f64));
    ker.a().copy_(Tensor::from_vector({0.5, 0.003}, {2}, DType::f64));
  }
  ker.project();
  REQUIRE(ker.p().to_vector() == std::vector<double>{0.01, 0.7});
  REQUIRE(ker.a().to_vector() == std::vector<double>{0.5, 0.01});
  Tensor q = Tensor::zeros({1, 4, 2, 2}, DType::f64);
  AttentionTerms t = attention_terms_at(ker, q, q, 0, true);  // columns r = -3..3
  std::vector<double> b = t.rel_bias.to_vector();
  // head 1, column 0: r = -3, n = 3: -0.7 ln(1 + 0.01 * 3); columns r > 0 (masked): n = 0
  CHECK(b[7 + 0] == Approx(-0.7 * std::log(1.03)).epsilon(1e-14));
  CHECK(b[7 + 6] == 0.0);
}

TEST_CASE("gradcheck: fire: every parameter, inside and past the threshold, drawn positions",
          "[gradcheck][posenc]") {
  PosencDims dims{8, 2, true, DType::f64, 0.02, 4, 1, 0};
  Generator g(7);
  Fire fire(dims, 5, g);
  const FireParams& f = fire.layer(0);
  {
    NoGrad ng;  // c off its init; m = 0.7: Lthr = 2.8, no query position ties with it
    f.c.copy_(Tensor::full({1}, -0.3, DType::f64));
    f.m.copy_(Tensor::full({1}, 0.7, DType::f64));
  }
  std::vector<Tensor> params{f.w0, f.b0, f.w2, f.b2, f.c, f.m};
  auto names =
      named({"mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias", "c", "L_multiplier"});
  PositionContext ctx;
  ctx.Tq = ctx.Tk = 6;  // queries at 0..5: rows 0..2 below Lthr, rows 3..5 past it
  CHECK_GRADCHECK(
      "fire: bias, rows below and past Lthr", [&](auto&) { return fire_bias(f, ctx, 4, true); },
      params, names);
  ctx.positions = Ids{{0, 2, 3, 7, 8, 11, 1, 4, 5, 6, 9, 10}, {2, 6}};
  CHECK_GRADCHECK(
      "fire: bias, drawn positions", [&](auto&) { return fire_bias(f, ctx, 4, true); }, params,
      names);
  PositionContext bi;
  bi.Tq = bi.Tk = 5;
  CHECK_GRADCHECK(
      "fire: bias, bidirectional", [&](auto&) { return fire_bias(f, bi, 4, false); }, params,
      names);
}

TEST_CASE("fire: inside Lthr the bias is a function of distance; past it, of the query too",
          "[posenc]") {
  PosencDims dims{8, 2, true, DType::f64, 0.02, 8, 1, 0};
  Generator g(9);
  Fire fire(dims, 4, g);
  PositionContext ctx;
  ctx.Tq = ctx.Tk = 12;
  std::vector<double> b = fire_bias(fire.layer(0), ctx, 8, true).to_vector();
  auto at = [&](int64_t h, int64_t i, int64_t j) { return b[(h * 12 + i) * 12 + j]; };
  CHECK(at(1, 5, 2) == Approx(at(1, 7, 4)).epsilon(1e-13));    // n = 3, both rows < Lthr = 8
  CHECK(std::abs(at(1, 10, 7) - at(1, 5, 2)) > 1e-6);          // n = 3, row 10 past Lthr
  CHECK(at(0, 3, 3) == Approx(at(0, 11, 11)).epsilon(1e-13));  // n = 0: u = 0 in every row
}

TEST_CASE("fire: in evaluation the bias made row by row is the tensor's, to the bit",
          "[nn][posenc]") {
  // Under NoGrad FIRE hands attention bias_rows, not a (Bp,H,Tq,Tk) tensor (fire.h): the scores
  // must be the same numbers. 70 rows: two of the kernel's row blocks.
  const int64_t T = 70;
  for (DType dt : {DType::f32, DType::f64}) {
    PosencDims dims{16, 2, true, dt, 0.02, 16, 1, 0};  // T0 = 16: most rows past Lthr
    Generator g(11);
    Fire fire(dims, 6, g);
    QKV x = qkv(2, T, 2, 8, 120);
    Tensor q = x.q.detach().to(dt), k = x.k.detach().to(dt), v = x.v.detach().to(dt);
    Generator draw(5);
    std::vector<int32_t> pos = draw_positions(T, 300, draw), pos2 = draw_positions(T, 300, draw);
    pos.insert(pos.end(), pos2.begin(), pos2.end());
    struct Case {
      const char* name;
      bool causal;
      int64_t offset, window;
      bool drawn;
    };
    for (const Case& c : {Case{"contiguous", true, 0, 0, false}, Case{"offset", true, 40, 0, false},
                          Case{"window", true, 0, 25, false}, Case{"drawn", true, 0, 0, true},
                          Case{"bidirectional", false, 0, 0, false}}) {
      PositionContext ctx;
      ctx.Tq = ctx.Tk = T, ctx.offset = c.offset;
      if (c.drawn) ctx.positions = Ids{pos, {2, T}};
      AttentionTerms tensor = fire.attention_terms(q, k, c.causal, ctx), rows;
      {
        NoGrad ng;
        rows = fire.attention_terms(q, k, c.causal, ctx);
      }
      INFO(c.name << ", " << dtype_name(dt));
      REQUIRE(tensor.bias.defined());
      REQUIRE((rows.bias_rows && !rows.bias.defined()));
      AttentionOptions a, b;
      a.causal = b.causal = c.causal, a.window = b.window = c.window;
      a.bias = tensor.bias.detach(), b.bias_rows = rows.bias_rows;
      NoGrad ng;
      CHECK(max_diff(attention(q, k, v, a), attention(q, k, v, b)) == 0);
      if (dt == DType::f64)
        CHECK(max_diff(attention_reference(q, k, v, a), attention_reference(q, k, v, b)) < 1e-13);
    }
  }
  // the whole model: evaluation's logits (NoGrad) are those of the training path
  GPTConfig c = tiny(PeKind::fire);
  GPT m(c, 6);
  Ids ids{{1, 4, 2, 6, 0, 3, 5, 1, 2}, {1, 9}};
  Interventions iv;
  iv.position_offset = 40;  // past Lthr
  Tensor with_grad = m.logits(ids, iv).detach();
  NoGrad ng;
  CHECK(max_diff(m.logits(ids, iv), with_grad) == 0);
}

TEST_CASE("gradcheck: xpos: attention through the grown queries and shrunk keys",
          "[gradcheck][posenc]") {
  XPos xp(4, 10000, 8, RopeLayout::interleaved);  // B = 8: a steep decay over 6 positions
  QKV x = qkv(2, 6, 2, 4, 30);
  CHECK_GRADCHECK(
      "xpos: attention (B = 8)",
      [&](auto& v) {
        AttentionTerms t = attention_terms_at(xp, v[0], v[1], 0, true);
        return attention(t.q, t.k, v[2], AttentionOptions{});
      },
      {x.q, x.k, x.v}, named({"q", "k", "v"}));
}

TEST_CASE("xpos: q'.k' is RoPE's pair dot times zeta_i^((m - n)/B), and refuses far positions",
          "[posenc]") {
  const int64_t D = 4;
  XPos xp(D, 100, 16, RopeLayout::interleaved);
  RoPE rope(D, 100);
  Tensor q = rand_leaf({1, 9, 1, D}, 40).detach(), k = rand_leaf({1, 9, 1, D}, 41).detach();
  AttentionTerms tx = attention_terms_at(xp, q, k, 0, true),
                 tr = attention_terms_at(rope, q, k, 0, true);
  std::vector<double> qx = tx.q.to_vector(), kx = tx.k.to_vector(), qr = tr.q.to_vector(),
                      kr = tr.k.to_vector(), zeta = xpos_zeta(D);
  for (int64_t m : {3, 8})
    for (int64_t n : {int64_t(0), int64_t(2), m}) {
      double dx = 0, dr = 0;
      for (int64_t i = 0; i < D / 2; ++i) {
        double pair =
            qr[m * D + 2 * i] * kr[n * D + 2 * i] + qr[m * D + 2 * i + 1] * kr[n * D + 2 * i + 1];
        dr += pair * std::pow(zeta[i], double(m - n) / 16);
        dx += qx[m * D + 2 * i] * kx[n * D + 2 * i] + qx[m * D + 2 * i + 1] * kx[n * D + 2 * i + 1];
      }
      CHECK(dx == Approx(dr).epsilon(1e-12));
    }
  XPos small(D, 100, 2, RopeLayout::interleaved);  // 64 B = 128
  Tensor big = Tensor::zeros({1, 130, 1, D}, DType::f64);
  REQUIRE_THROWS_WITH(attention_terms_at(small, big, big, 0, true),
                      Catch::Contains("position 129 is past 64 B = 128"));
}

TEST_CASE("p-RoPE: the kept pairs turn as in RoPE, the others never", "[posenc]") {
  RoPE full(8, 10000), prope(8, 10000, RopeLayout::interleaved, 1, 0.5);  // K = 2 of 4 pairs
  REQUIRE(prope.kept_pairs() == 2);
  Tensor x = rand_leaf({1, 7, 1, 8}, 50).detach();
  std::vector<double> a = rope_rotate_at(full, x, 0, 7).to_vector(),
                      b = rope_rotate_at(prope, x, 0, 7).to_vector(), v = x.to_vector();
  for (int64_t t = 0; t < 7; ++t)
    for (int64_t d = 0; d < 8; ++d) {
      INFO("position " << t << " dim " << d);
      CHECK(b[t * 8 + d] == Approx(d < 4 ? a[t * 8 + d] : v[t * 8 + d]).margin(1e-15));
    }
  REQUIRE_THROWS_WITH(RoPE(8, 10000, RopeLayout::interleaved, 0.5, 0.5),
                      Catch::Contains("--rope-proportion p < 1 with --rope-fraction f < 1"));
  REQUIRE_THROWS_WITH(RoPE(8, 10000, RopeLayout::interleaved, 1, 1.5),
                      Catch::Contains("--rope-proportion: expected p in [0, 1]"));
}

TEST_CASE("nope_every: a layer without position is the same layer with pe none", "[nn]") {
  Ids ids{{1, 4, 2, 6, 0, 3}, {1, 6}};
  GPTConfig every = tiny(PeKind::rope), none = tiny(PeKind::none), never = tiny(PeKind::rope);
  every.pe.nope_every = 1;  // both layers without position
  never.pe.nope_every = 3;  // k > n_layer: no layer without
  GPT a(every, 3), b(none, 3), c(never, 3), d(tiny(PeKind::rope), 3);
  NoGrad ng;
  CHECK(max_diff(a.logits(ids), b.logits(ids)) == 0.0);
  CHECK(max_diff(c.logits(ids), d.logits(ids)) == 0.0);
  GPTConfig fire = tiny(PeKind::fire);
  fire.pe.nope_every = 2;
  GPT f(fire, 3);
  int fire_tensors = 0;
  for (const NamedParam& p : f.parameters())
    fire_tensors += p.name.find(".fire.") != std::string::npos;
  CHECK(fire_tensors == 6);  // layer 0 only
  GPTConfig learned = tiny(PeKind::learned);
  learned.pe.nope_every = 2;
  REQUIRE_THROWS_WITH(GPT(learned, 1), Catch::Contains("--nope-every applies to schemes that act"));
}

TEST_CASE(
    "random positions: a draw of 0..T-1 is the contiguous model; draws are sorted and "
    "distinct",
    "[nn][posenc]") {
  Ids ids{{1, 4, 2, 6, 0, 3}, {1, 6}};
  for (PeKind pe : {PeKind::learned, PeKind::sinusoidal, PeKind::rope, PeKind::alibi, PeKind::t5,
                    PeKind::kerple, PeKind::fire, PeKind::xpos}) {
    GPTConfig c = tiny(pe);
    c.pe.random_positions = 8;
    GPT m(c, 4);
    Interventions iv;
    iv.positions = Ids{{0, 1, 2, 3, 4, 5}, {1, 6}};
    NoGrad ng;
    INFO("pe = " << pe_name(pe));
    CHECK(max_diff(m.logits(ids, iv), m.logits(ids)) < 1e-12);
    iv.positions = Ids{{0, 2, 3, 5, 6, 7}, {1, 6}};
    CHECK(max_diff(m.logits(ids, iv), m.logits(ids)) > 1e-6);
  }
  Generator g(1);
  std::vector<int32_t> d = draw_positions(100, 4096, g);
  for (size_t i = 1; i < d.size(); ++i) REQUIRE(d[i] > d[i - 1]);
  REQUIRE(d.back() < 4096);
  Generator h(2);
  std::vector<int32_t> all = draw_positions(16, 16, h);
  for (int32_t i = 0; i < 16; ++i) REQUIRE(all[i] == i);
}

TEST_CASE("gradcheck: v5: whole models with every new option", "[gradcheck][nn][posenc]") {
  Ids ids{{1, 4, 2, 6, 0, 3, 3, 5, 1, 2}, {2, 5}}, tgt{{4, 2, 6, 0, 3, 5, 1, 2, 2, 6}, {2, 5}};
  struct Case {
    std::string name;
    PeKind pe;
    double proportion;
    int64_t nope_every, random_positions;
  };
  for (const Case& k : std::vector<Case>{{"rope p=0.5", PeKind::rope, 0.5, 0, 0},
                                         {"rope nope_every 2", PeKind::rope, 1, 2, 0},
                                         {"fire nope_every 2", PeKind::fire, 1, 2, 0},
                                         {"rope random positions", PeKind::rope, 1, 0, 12},
                                         {"learned random positions", PeKind::learned, 1, 0, 12},
                                         {"kerple random positions", PeKind::kerple, 1, 0, 12},
                                         {"fire random positions", PeKind::fire, 1, 0, 12},
                                         {"t5 random positions", PeKind::t5, 1, 0, 12}}) {
    GPTConfig c = tiny(k.pe);
    c.pe.rope_proportion = k.proportion, c.pe.nope_every = k.nope_every;
    c.pe.random_positions = k.random_positions, c.pe.max_len = 0;
    GPT m(c, 11);
    std::vector<std::string> names;
    std::vector<Tensor> leaves = randomize(m, names, 12);
    Interventions iv;
    if (k.random_positions) iv.positions = draw_position_rows(2, 5, 12, 77, 0);
    CHECK_GRADCHECK(
        pe_name(k.pe) + std::string(": whole model, ") + k.name,
        [&](auto&) { return m.loss(ids, tgt, nullptr, iv); }, leaves, named(names, 16));
  }
}
