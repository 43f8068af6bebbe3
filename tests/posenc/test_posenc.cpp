// Positional encodings: properties and errors (docs/model.md). Their gradient checks are in
// gradcheck_posenc.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "posenc/alibi.h"
#include "posenc/factory.h"
#include "posenc/learned.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"

using namespace poslab;
using Catch::Contains;

static void tables(int64_t D, int64_t pos0, int64_t T, Tensor* c, Tensor* s, double theta = 10000) {
  RopeFrequencies f{rope_base_frequencies(D, theta), 1, 1};
  rope_tables(f, pos0, T, DType::f64, c, s);
}

TEST_CASE("RoPE options: which dims are rotated, and which pairs", "[posenc]") {
  // x = e_lo at position 1: the rotation moves it only into its partner hi
  auto moved_to = [](RopeLayout layout, double f, int64_t lo) {
    RoPE rope(12, 10000, layout, f);
    Tensor x = Tensor::zeros({1, 2, 1, 12}, DType::f64);
    x.slice(1, 1, 2).slice(3, lo, lo + 1).fill_(1.0);
    Tensor y = rope_rotate_at(rope, x, 0, 2);
    std::vector<int64_t> nonzero;
    for (int64_t d = 0; d < 12; ++d)
      if (std::abs(y.at({0, 1, 0, d})) > 1e-12) nonzero.push_back(d);
    return nonzero;
  };
  REQUIRE(RoPE(12, 10000, RopeLayout::half, 0.5).rotated_dims() == 6);
  REQUIRE(RoPE(12, 10000, RopeLayout::half, 0.4).rotated_dims() == 4);  // 2 floor(2.4)
  REQUIRE(moved_to(RopeLayout::interleaved, 1, 4) == std::vector<int64_t>{4, 5});
  REQUIRE(moved_to(RopeLayout::half, 1, 4) == std::vector<int64_t>{4, 10});
  REQUIRE(moved_to(RopeLayout::half, 0.5, 1) == std::vector<int64_t>{1, 4});
  REQUIRE(moved_to(RopeLayout::interleaved, 0.5, 7) == std::vector<int64_t>{7});  // d >= r
  REQUIRE(moved_to(RopeLayout::half, 0.5, 11) == std::vector<int64_t>{11});
  REQUIRE_THROWS_WITH(RoPE(12, 10000, RopeLayout::half, 0.1),
                      Contains("r = 2 floor(f D / 2) = 0") && Contains("D = 12"));
  REQUIRE_THROWS_WITH(RoPE(12, 10000, RopeLayout::half, 1.5), Contains("(0, 1]"));
  REQUIRE_THROWS_WITH(parse_rope_layout("diagonal"), Contains("interleaved|half"));
}

TEST_CASE("RoPE keeps norms, is the identity at position 0, and is relative", "[posenc]") {
  int64_t D = 8, T = 12;
  Tensor c, s;
  tables(D, 0, T, &c, &s);
  Generator g(3);
  Tensor x = Tensor::randn({1, T, 1, D}, g, 1, DType::f64);
  Tensor y = rope_rotate(x, c, s);
  for (int64_t t = 0; t < T; ++t) {
    double nx = 0, ny = 0;
    for (int64_t d = 0; d < D; ++d)
      nx += std::pow(x.at({0, t, 0, d}), 2), ny += std::pow(y.at({0, t, 0, d}), 2);
    REQUIRE(ny == Approx(nx).epsilon(1e-12));
  }
  for (int64_t d = 0; d < D; ++d) REQUIRE(y.at({0, 0, 0, d}) == x.at({0, 0, 0, d}));
  // the same q and k placed at (m, n) and (m + 5, n + 5): equal dot products
  Tensor q = Tensor::randn({1, 1, 1, D}, g, 1, DType::f64),
         k = Tensor::randn({1, 1, 1, D}, g, 1, DType::f64);
  auto dot_at = [&](int64_t m, int64_t n) {
    Tensor cm, sm, cn, sn;
    tables(D, m, 1, &cm, &sm);
    tables(D, n, 1, &cn, &sn);
    Tensor a = rope_rotate(q, cm, sm), b = rope_rotate(k, cn, sn);
    double acc = 0;
    for (int64_t d = 0; d < D; ++d) acc += a.at({0, 0, 0, d}) * b.at({0, 0, 0, d});
    return acc;
  };
  REQUIRE(dot_at(7, 2) == Approx(dot_at(12, 7)).epsilon(1e-10));
  REQUIRE(dot_at(3, 3) == Approx(dot_at(100, 100)).epsilon(1e-10));
  REQUIRE(dot_at(7, 2) != Approx(dot_at(7, 3)).epsilon(1e-6));
}

TEST_CASE("RoPE refuses an odd head dim", "[posenc][errors]") {
  REQUIRE_THROWS_WITH(RoPE(5, 10000),
                      Contains("rope: expected an even head dim D") && Contains("D = 5"));
}

TEST_CASE("sinusoidal values equal the formula at spot positions", "[posenc]") {
  SinusoidalPE pe(16);
  Tensor t = pe.table(300);
  for (int64_t p : {0, 1, 17, 299})
    for (int64_t i : {0, 3, 7}) {
      double a = p / std::pow(10000.0, 2.0 * i / 16);
      REQUIRE(t.at({p, 2 * i}) == Approx(std::sin(a)).margin(1e-12));
      REQUIRE(t.at({p, 2 * i + 1}) == Approx(std::cos(a)).margin(1e-12));
    }
}

TEST_CASE("learned table: a clear error past max_len", "[posenc]") {
  Generator g(5);
  LearnedPE pe(6, 4, g, DType::f64);
  REQUIRE_THROWS_WITH(add_to_embeddings_at(pe, Tensor::zeros({1, 8, 4}, DType::f64), 0),
                      Contains("L = 8") && Contains("max_len = 6"));
}

TEST_CASE("ALiBi slopes follow the paper", "[posenc]") {
  auto s8 = alibi_slopes(8);
  for (int h = 0; h < 8; ++h) REQUIRE(s8[h] == std::pow(2.0, -(h + 1)));
  auto s6 = alibi_slopes(6);
  std::vector<double> want{0.25, 1.0 / 16, 1.0 / 64, 1.0 / 256, 0.5, 0.125};
  REQUIRE(s6 == want);
  REQUIRE(alibi_slopes(4) == std::vector<double>{0.25, 1.0 / 16, 1.0 / 64, 1.0 / 256});
}

TEST_CASE("yarn: the deployed ramp (linear in the pair index) is not the paper's (linear in r_i)",
          "[posenc]") {
  int64_t D = 32, T0 = 256;
  double theta = 10000;
  std::vector<double> deployed = yarn_keep(D, theta, T0), paper = yarn_keep_paper(D, theta, T0);
  REQUIRE(deployed.size() == 16);
  for (int64_t i = 0; i < 16; ++i) {
    CHECK(deployed[i] == Approx(i <= 7 ? 1 - i / 7.0 : 0).margin(1e-15));
    // the paper's: r_i = 256 theta^(-2i/32) / (2 pi), keep = clamp((r_i - 1) / 31, 0, 1)
    double r = T0 * std::pow(theta, -2.0 * i / D) / (2 * M_PI);
    CHECK(paper[i] == Approx(std::clamp((r - 1) / 31, 0.0, 1.0)).margin(1e-15));
  }
  // the same at the ends, different between: pair 2 keeps .71 deployed, .38 in the paper
  CHECK(deployed[0] == 1);
  CHECK(paper[0] == 1);
  CHECK(deployed[15] == 0);
  CHECK(paper[15] == 0);
  CHECK(deployed[2] == Approx(5.0 / 7));
  CHECK(paper[2] == Approx(0.38).margin(0.005));
  CHECK(deployed[2] - paper[2] > 0.3);
  // where both ends round to the same pair, the reference code adds 0.001 to high
  std::vector<double> k = yarn_keep(4, 10000, 8);
  for (double v : k) CHECK((v >= 0 && v <= 1));
}

TEST_CASE("every scaling at s = 1 equals plain RoPE", "[posenc]") {
  int64_t D = 16, T0 = 64;
  auto plain = rope_base_frequencies(D, 10000);
  for (ScalingKind k : {ScalingKind::linear, ScalingKind::ntk, ScalingKind::yarn}) {
    RopeFrequencies f = rope_frequencies(D, 10000, {k, 0, T0}, 50);  // L <= T0: s = 1
    REQUIRE(f.mscale == 1);
    REQUIRE(f.pos_scale == 1);
    for (size_t i = 0; i < plain.size(); ++i) REQUIRE(f.freq[i] == Approx(plain[i]).epsilon(1e-15));
  }
}

TEST_CASE("ntk and yarn frequencies equal their closed forms", "[posenc]") {
  int64_t D = 32, T0 = 256;
  double s = 4, theta = 10000;
  RopeFrequencies ntk = rope_frequencies(D, theta, {ScalingKind::ntk, s, T0}, 1024);
  for (int64_t i = 0; i < D / 2; ++i)
    REQUIRE(ntk.freq[i] ==
            Approx(std::pow(theta * std::pow(s, 32.0 / 30), -2.0 * i / D)).epsilon(1e-13));
  // the lowest frequency is divided by exactly s
  REQUIRE(ntk.freq[D / 2 - 1] == Approx(std::pow(theta, -(D - 2.0) / D) / s).epsilon(1e-12));
  RopeFrequencies y = rope_frequencies(D, theta, {ScalingKind::yarn, s, T0}, 1024);
  REQUIRE(y.mscale == Approx(0.1 * std::log(4.0) + 1));
  // Worked by hand: d(n) = 32 ln(256 / (2 pi n)) / (2 ln 1e4); d(32) = 0.42 -> low 0,
  // d(1) = 6.44 -> high 7; so keep_i = 1 - i/7 for i <= 7, then 0.
  for (int64_t i = 0; i < D / 2; ++i) {
    double f = std::pow(theta, -2.0 * i / D), keep = i <= 7 ? 1 - i / 7.0 : 0;
    REQUIRE(y.freq[i] == Approx(keep * f + (1 - keep) * f / s).epsilon(1e-13));
  }
  REQUIRE(y.freq[0] == Approx(1.0));  // fast dims untouched
  REQUIRE(y.freq[D / 2 - 1] ==
          Approx(std::pow(theta, -(D - 2.0) / D) / s));  // slow dims interpolated
  RopeFrequencies lin = rope_frequencies(D, theta, {ScalingKind::linear, 0, T0}, 1024);
  REQUIRE(lin.pos_scale == 0.25);
}

TEST_CASE("unknown --pe and --rope-scaling list the valid names", "[posenc][errors]") {
  REQUIRE_THROWS_WITH(parse_pe("cope"),
                      Contains("--pe: expected one of") &&
                          Contains("none|learned|sinusoidal|rope|alibi|t5|kerple|fire|xpos") &&
                          Contains("but got 'cope'"));
  REQUIRE_THROWS_WITH(parse_scaling("su"), Contains("linear|ntk|dynamic|yarn|llama3|longrope"));
  ALiBi a(4);
  PositionContext at;
  at.Tq = at.Tk = 8, at.scaling = {ScalingKind::yarn, 0, 8};
  REQUIRE_THROWS_WITH(a.context(at, DType::f32, Device::cpu),
                      Contains("applies only to pe = rope"));
}

// The settings (PosencConfig) and what the model lends (PosencDims) meet in make_posenc: the
// tables take their sizes from both.
TEST_CASE("make_posenc: a scheme from its settings and the model's dims", "[posenc]") {
  REQUIRE(PosencConfig{}.kind == PeKind::rope);         // the default, as GPTConfig's
  const PosencDims dims{8, 2, true, DType::f64, 0.02};  // C = 8, H = 2 (D = 4)
  Generator g(3);
  PosencConfig learned;
  learned.kind = PeKind::learned, learned.max_len = 6;
  REQUIRE(make_posenc(learned, dims, g)->parameters()[0].second.shape() ==
          std::vector<int64_t>{6, 8});  // wpe: (max_len, C)
  PosencConfig t5;
  t5.kind = PeKind::t5, t5.t5_buckets = 4, t5.t5_max_distance = 8;
  REQUIRE(make_posenc(t5, dims, g)->parameters()[0].second.shape() ==
          std::vector<int64_t>{4, 2});  // rel_bias: (t5_buckets, H)
  PosencConfig rope;
  rope.rope_fraction = 0.25;  // r = 2 floor(0.25 * 4 / 2) = 0 of D = 4: no pair
  REQUIRE_THROWS_WITH(rope.validate(dims), Contains("--rope-fraction") && Contains("r >= 2"));
  t5.t5_max_distance = 2;  // causal: max_exact = 4 / 2 = 2
  REQUIRE_THROWS_WITH(t5.validate(dims), Contains("--t5-max-distance"));
}

// A scheme holds no state built by a forward (posenc.h, PositionContext): what it hands
// attention for given positions is the same whatever it was asked before, and the tables of a
// context are those of its own positions (the offset shifts RoPE's rows, not ALiBi's).
TEST_CASE("schemes are functions of their inputs: no call changes a later one", "[posenc]") {
  Generator g(9);
  Tensor q = Tensor::randn({1, 6, 2, 8}, g, 1, DType::f64),
         k = Tensor::randn({1, 6, 2, 8}, g, 1, DType::f64);
  RoPE rope(8, 10000);
  ALiBi alibi(2);
  for (const PositionalEncoding* pe : {static_cast<const PositionalEncoding*>(&rope),
                                       static_cast<const PositionalEncoding*>(&alibi)}) {
    INFO(pe_name(pe->kind()));
    AttentionTerms first = attention_terms_at(*pe, q, k, 0, true);
    // other positions, a longer window, a scaling: a cache would now hold these
    attention_terms_at(*pe, q.slice(1, 0, 2), k, 4, true);
    if (pe == &rope) attention_terms_at(*pe, q, k, 0, true, {ScalingKind::ntk, 4, 2});
    AttentionTerms again = attention_terms_at(*pe, q, k, 0, true);
    REQUIRE(again.q.to_vector() == first.q.to_vector());
    REQUIRE(again.k.to_vector() == first.k.to_vector());
    REQUIRE(again.rel_bias.defined() == first.rel_bias.defined());
    if (first.rel_bias.defined()) REQUIRE(again.rel_bias.to_vector() == first.rel_bias.to_vector());
  }
  // a context's RoPE rows are its own positions: offset 3 equals the rows 3.. of offset 0
  PositionContext a, b;
  a.Tq = a.Tk = 9, b.Tq = b.Tk = 6, b.offset = 3;
  a = rope.context(a, DType::f64, Device::cpu), b = rope.context(b, DType::f64, Device::cpu);
  const RopeTables &ta = tables_of<RopeTables>(a, "rope"), &tb = tables_of<RopeTables>(b, "rope");
  REQUIRE(tb.cos.to_vector() == ta.cos.slice(0, 3, 9).contiguous().to_vector());
  REQUIRE(tb.sin.to_vector() == ta.sin.slice(0, 3, 9).contiguous().to_vector());
}
