// The RoPE scalings as deployed (posenc/rope_scaling.h): llama3, longrope, dynamic with HF's
// factor, and yarn's options, each against numbers worked by hand from its formula (the
// comments give the working). How flags and HF config files become these scalings:
// tests/train/test_rope_scaling_options.cpp.
#include <catch2/catch.hpp>
#include <cmath>

#include "posenc/rope.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using Catch::Contains;
using poslab::testing::named;
using poslab::testing::rand_leaf;

static RopeScaling scaling(ScalingKind kind, double factor, int64_t T0) {
  RopeScaling sc;
  sc.kind = kind, sc.factor = factor, sc.train_len = T0;
  return sc;
}

// Llama 3.1's config: factor 8, low_freq_factor 1, high_freq_factor 4, T0 8192, on theta
// 500000 and head dim 128 (freq_i = 500000^(-i/64)). The wavelength w_i = 2 pi 500000^(i/64):
//   kept below T0 / 4 = 2048:   500000^(i/64) < 2048 / (2 pi) = 325.95, i/64 < 0.44098: i <= 28
//   divided above T0 / 1 = 8192: 500000^(i/64) > 1303.8, i/64 > 0.54662: i >= 35
//   blended, i = 29..34, g = (8192 / w_i - 1) / 3, freq' = freq ((1 - g) / 8 + g). Pair 32:
//   freq = 500000^(-1/2) = 1.41421356e-3, w = 4442.883, g = (1.843846 - 1) / 3 = 0.2812826,
//   freq' / freq = 0.7187174 / 8 + 0.2812826 = 0.3711223.
TEST_CASE("llama3: Llama 3.1's frequencies, worked by hand", "[posenc][scaling]") {
  const int64_t D = 128, T0 = 8192;
  const double theta = 500000, s = 8;
  const std::vector<double> plain = rope_base_frequencies(D, theta),
                            f = llama3_frequencies(D, theta, s, T0, 1, 4);
  for (int64_t i = 0; i <= 28; ++i) CHECK(f[i] == plain[i]);
  for (int64_t i = 35; i < 64; ++i) CHECK(f[i] == Approx(plain[i] / 8).epsilon(1e-14));
  CHECK(f[32] / plain[32] == Approx(0.3711223).epsilon(1e-6));
  CHECK(f[32] == Approx(5.248462e-4).epsilon(1e-6));
  // pairs 29, 30, 34: g = 0.8036210, 0.5928493, 0.0745266 (the same working)
  CHECK(f[29] / plain[29] == Approx(0.8281684).epsilon(1e-6));
  CHECK(f[30] / plain[30] == Approx(0.6437431).epsilon(1e-6));
  CHECK(f[34] / plain[34] == Approx(0.1902107).epsilon(1e-6));
  // through rope_frequencies: no factor on cos and sin; at s = 1 (L <= T0) plain RoPE
  RopeFrequencies r = rope_frequencies(D, theta, scaling(ScalingKind::llama3, 8, T0), 100);
  CHECK(r.freq == f);
  CHECK(r.mscale == 1);
  CHECK(r.pos_scale == 1);
  r = rope_frequencies(D, theta, scaling(ScalingKind::llama3, 0, T0), T0);
  for (int64_t i = 0; i < D / 2; ++i) CHECK(r.freq[i] == Approx(plain[i]).epsilon(1e-15));
  REQUIRE_THROWS_WITH(llama3_frequencies(D, theta, s, T0, 4, 4),
                      Contains("--low-freq-factor") && Contains("--high-freq-factor"));
}

// Head dim 8 (4 pairs, freq = 1, 0.1, 0.01, 0.001 at theta 1e4), T0 = 16, long factors
// e = 1, 2, 4, 8, short 1, 1, 1.5, 2. A window of L = 64 > 16: the long ones, s = 4 and the
// factor sqrt(1 + ln 4 / ln 16) = sqrt(1 + 1/2) = 1.2247449. L = 16: the short ones, s = 1,
// factor 1. L = 17 > T0 already takes the long ones (strict), s = 17/16.
TEST_CASE("longrope: short factors up to T0, long past it, and the factor on cos and sin",
          "[posenc][scaling]") {
  RopeScaling sc = scaling(ScalingKind::longrope, 0, 16);
  sc.long_factor = {1, 2, 4, 8}, sc.short_factor = {1, 1, 1.5, 2};
  RopeFrequencies r = rope_frequencies(8, 1e4, sc, 64);
  const std::vector<double> want_long{1, 0.05, 0.0025, 0.000125};
  for (int i = 0; i < 4; ++i) CHECK(r.freq[i] == Approx(want_long[i]).epsilon(1e-14));
  CHECK(r.mscale == Approx(std::sqrt(1.5)).epsilon(1e-15));
  CHECK(r.mscale == Approx(1.2247449).epsilon(1e-7));
  r = rope_frequencies(8, 1e4, sc, 16);
  const std::vector<double> want_short{1, 0.1, 0.01 / 1.5, 0.0005};
  for (int i = 0; i < 4; ++i) CHECK(r.freq[i] == Approx(want_short[i]).epsilon(1e-14));
  CHECK(r.mscale == 1);
  r = rope_frequencies(8, 1e4, sc, 17);
  CHECK(r.freq[3] == Approx(0.000125).epsilon(1e-14));
  CHECK(r.mscale == Approx(std::sqrt(1 + std::log(17.0 / 16) / std::log(16.0))).epsilon(1e-15));
  // --factor fixes s (Phi-3's 131072 / 4096 = 32 at T0 4096: sqrt(1 + 5/12) = 1.1902381);
  // --attention-factor replaces the computed factor at any s
  CHECK(longrope_attention_factor(scaling(ScalingKind::longrope, 32, 4096), 32) ==
        Approx(1.1902381).epsilon(1e-7));
  sc.attention_factor = 1.5;
  CHECK(rope_frequencies(8, 1e4, sc, 16).mscale == 1.5);
  CHECK(rope_frequencies(8, 1e4, sc, 64).mscale == 1.5);
  // short omitted: all 1, so a window of L <= T0 is plain RoPE
  sc.short_factor.clear(), sc.attention_factor.reset();
  r = rope_frequencies(8, 1e4, sc, 16);
  CHECK(r.freq == rope_base_frequencies(8, 1e4));
  CHECK(r.mscale == 1);
  sc.long_factor = {1, 2, 4};  // r/2 = 4 needed
  REQUIRE_THROWS_WITH(rope_frequencies(8, 1e4, sc, 64), Contains("D/2 = 4") && Contains("got 3"));
  sc.long_factor.clear();
  REQUIRE_THROWS_WITH(rope_frequencies(8, 1e4, sc, 64), Contains("--long-factor"));
}

// HF's dynamic NTK with factor f at T0 = 8, f = 2: s = max(1, 2 (P+1) / 8 - 1), so rows
// P <= 7 are plain (P = 3: 0 -> 1; P = 7: exactly 1), P = 9: 1.5, P = 11: 2; with f = 1 the
// rule max(1, (P+1)/8): P = 11 gives 1.5.
TEST_CASE("dynamic: HF's factor f sets each row's s", "[posenc][scaling]") {
  CHECK(dynamic_scale(2, 3, 8) == 1);
  CHECK(dynamic_scale(2, 7, 8) == 1);
  CHECK(dynamic_scale(2, 9, 8) == 1.5);
  CHECK(dynamic_scale(2, 11, 8) == 2);
  CHECK(dynamic_scale(1, 11, 8) == 1.5);
  // row i of positions 6..11 holds theta' = 1e4 s^(8/6) frequencies; f = 0 means f = 1
  Tensor w2 = dynamic_row_frequencies(8, 8, 1e4, 8, 6, 6, 2),
         w1 = dynamic_row_frequencies(8, 8, 1e4, 8, 6, 6, 1),
         w0 = dynamic_row_frequencies(8, 8, 1e4, 8, 6, 6);
  CHECK(w0.to_vector() == w1.to_vector());
  for (int64_t p = 0; p < 4; ++p) {
    CHECK(w2.at({1, p}) == Approx(std::pow(1e4, -2.0 * p / 8)).epsilon(1e-14));  // P = 7
    CHECK(w2.at({5, p}) ==                                                       // P = 11
          Approx(std::pow(1e4 * std::pow(2.0, 8.0 / 6), -2.0 * p / 8)).epsilon(1e-14));
    CHECK(w1.at({5, p}) ==
          Approx(std::pow(1e4 * std::pow(1.5, 8.0 / 6), -2.0 * p / 8)).epsilon(1e-14));
  }
}

// gpt-oss (theta 150000, head dim 64, T0 4096, factor 32, truncate false): d(n) =
// 64 ln(4096 / (2 pi n)) / (2 ln 150000), d(32) = 8.0927791, d(1) = 17.3980245. Truncated
// (the default): low 8, high 18, keep_i = 1 - (i - 8) / 10 (pair 13: 0.5); not truncated:
// keep_i = 1 - (i - 8.0927791) / 9.3052454 (pair 13: 0.4726393, pair 17: 0.0427742).
TEST_CASE("yarn: truncate false keeps the ramp's ends real (gpt-oss)", "[posenc][scaling]") {
  const std::vector<double> cut = yarn_keep(64, 150000, 4096),
                            real = yarn_keep(64, 150000, 4096, {32, 1, false});
  CHECK(cut[8] == 1);
  CHECK(cut[13] == Approx(0.5).epsilon(1e-14));
  CHECK(cut[18] == 0);
  CHECK(real[8] == 1);
  CHECK(real[9] == Approx(0.9025044).epsilon(1e-6));
  CHECK(real[13] == Approx(0.4726393).epsilon(1e-6));
  CHECK(real[17] == Approx(0.0427742).epsilon(1e-5));
  CHECK(real[18] == 0);
  RopeScaling sc = scaling(ScalingKind::yarn, 32, 4096);
  sc.ramp.truncate = false;
  const RopeFrequencies r = rope_frequencies(64, 150000, sc, 100);
  const double f13 = std::pow(150000, -26.0 / 64);
  CHECK(r.freq[13] == Approx(real[13] * f13 + (1 - real[13]) * f13 / 32).epsilon(1e-14));
  CHECK(r.mscale == Approx(0.1 * std::log(32.0) + 1).epsilon(1e-15));  // 1.3465736
}

// Head dim 16, theta 1e4, T0 64: d(n) = 16 ln(64 / (2 pi n)) / (2 ln 1e4) = 2.0160002 -
// 0.8685890 ln n. Default betas (32, 1): d(32) < 0 -> low 0, high ceil(2.016) = 3. With
// beta_fast 4, beta_slow 0.25: d(4) = 0.8118913 -> low 0, d(0.25) = 3.2201090 -> high 4.
TEST_CASE("yarn: beta_fast and beta_slow move the ramp's ends", "[posenc][scaling]") {
  const std::vector<double> base = yarn_keep(16, 1e4, 64),
                            moved = yarn_keep(16, 1e4, 64, {4, 0.25});
  CHECK(base[1] == Approx(2.0 / 3).epsilon(1e-14));  // 1 - 1/3
  CHECK(base[3] == 0);
  CHECK(moved[1] == Approx(0.75).epsilon(1e-14));  // 1 - 1/4
  CHECK(moved[3] == Approx(0.25).epsilon(1e-14));
  CHECK(moved[4] == 0);
}

// The factor on cos and sin at s = 40 (DeepSeek-V3's factor): ln 40 = 3.6888795.
//   attention_factor given:           that value, also at s = 1
//   mscale 1, mscale_all_dim 1:        (0.1 ln 40 + 1) / (0.1 ln 40 + 1) = 1 (DeepSeek-V3)
//   mscale 0.707, mscale_all_dim 1:    1.2608038 / 1.3688879 = 0.9210424
//   one of them 0 or absent:           0.1 ln 40 + 1 = 1.3688879 (HF tests them for truth)
//   s <= 1: every computed factor is 1
TEST_CASE("yarn: the factor on cos and sin, in HF's order", "[posenc][scaling]") {
  RopeScaling sc = scaling(ScalingKind::yarn, 40, 4096);
  CHECK(yarn_attention_factor(sc, 40) == Approx(1.3688879).epsilon(1e-7));
  sc.mscale = 1, sc.mscale_all_dim = 1;
  CHECK(yarn_attention_factor(sc, 40) == 1);
  sc.mscale = 0.707;
  CHECK(yarn_attention_factor(sc, 40) == Approx(0.9210424).epsilon(1e-7));
  CHECK(yarn_attention_factor(sc, 1) == 1);
  sc.mscale = 0;
  CHECK(yarn_attention_factor(sc, 40) == Approx(1.3688879).epsilon(1e-7));
  sc.mscale = 1, sc.mscale_all_dim.reset();
  CHECK(yarn_attention_factor(sc, 40) == Approx(1.3688879).epsilon(1e-7));
  sc.attention_factor = 0.5;
  CHECK(yarn_attention_factor(sc, 40) == 0.5);
  CHECK(yarn_attention_factor(sc, 1) == 0.5);
  CHECK(yarn_get_mscale(0.5, 1) == 1);
  // rope_frequencies carries it to the tables
  CHECK(rope_frequencies(64, 1e4, sc, 10).mscale == 0.5);
}

TEST_CASE("the deployed scalings at s = 1 equal plain RoPE", "[posenc][scaling]") {
  const int64_t D = 16, T0 = 64;
  RopeScaling llama3 = scaling(ScalingKind::llama3, 0, T0),
              longrope = scaling(ScalingKind::longrope, 0, T0),
              yarn = scaling(ScalingKind::yarn, 0, T0);
  longrope.long_factor.assign(D / 2, 3.0);  // not read at L <= T0
  yarn.ramp = {16, 2, false}, yarn.mscale = 2, yarn.mscale_all_dim = 1;
  for (const RopeScaling& sc : {llama3, longrope, yarn}) {
    INFO(scaling_name(sc.kind));
    const RopeFrequencies f = rope_frequencies(D, 1e4, sc, 50);  // L <= T0: s = 1
    CHECK(f.mscale == 1);
    for (int64_t i = 0; i < D / 2; ++i)
      CHECK(f.freq[i] == Approx(rope_base_frequencies(D, 1e4)[i]).epsilon(1e-15));
  }
  REQUIRE_THROWS_WITH(parse_scaling("su"),
                      Contains("none|linear|ntk|dynamic|yarn|llama3|longrope") && Contains("'su'"));
  CHECK(parse_scaling("llama3") == ScalingKind::llama3);
  CHECK(std::string(scaling_name(ScalingKind::longrope)) == "longrope");
}

// The new tables through RoPE::rotate (s = 4, T0 = 8, at L = 32): their frequencies and
// amplitudes enter the backward as any table's (rope.h: dx = R^T dy).
TEST_CASE("gradcheck: rope: the rotation with the deployed scalings' tables",
          "[gradcheck][posenc][scaling]") {
  Tensor x = rand_leaf({2, 6, 2, 8}, 5);
  RoPE rope(8, 10000);
  RopeScaling llama3 = scaling(ScalingKind::llama3, 4, 8), longrope = llama3, yarn = llama3;
  longrope.kind = ScalingKind::longrope, longrope.long_factor = {1, 1.5, 3, 5};
  yarn.kind = ScalingKind::yarn, yarn.ramp.truncate = false, yarn.attention_factor = 1.3;
  for (const RopeScaling& sc : {llama3, longrope, yarn})
    CHECK_GRADCHECK(
        std::string("rope: rotate, scaling ") + scaling_name(sc.kind) + " (s = 4, options)",
        [&rope, sc](auto& v) { return rope_rotate_at(rope, v[0], 26, 32, sc); }, {x}, named({"x"}));
}
