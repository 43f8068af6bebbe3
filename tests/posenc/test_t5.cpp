// T5's relative position bias: the bucket function against hand-computed values, the bias
// table and its gradient (a scatter-add by bucket), the options' errors. The table's gradient
// check: tests/posenc/gradcheck_posenc.cpp.
#include <catch2/catch.hpp>
#include <cmath>

#include "posenc/t5.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using Catch::Contains;
using poslab::testing::rand_leaf;

// bucket(n) for each n of `offsets` under o
static std::vector<int64_t> buckets(const std::vector<int64_t>& offsets, const T5Options& o) {
  std::vector<int64_t> b;
  for (int64_t n : offsets) b.push_back(t5_bucket(n, o));
  return b;
}

TEST_CASE("T5 buckets: the defaults, by hand", "[posenc]") {
  // causal, nb = 32, max_exact = 16: 16 + floor(ln(n/16) / ln 8 * 16), at most 31
  //   n = 20: ln 1.25 / ln 8 * 16 = 1.72 -> 17;  n = 32: 5.33 -> 21;  n = 100: 14.10 -> 30;
  //   n = 127: 15.94 -> 31;  n = 128: 16 -> 32, capped at 31; n < 0 (the future): 0
  T5Options causal;
  REQUIRE(buckets({0, 1, 15, 16, 17, 20, 24, 32, 64, 100, 127, 128, 1000, -5}, causal) ==
          std::vector<int64_t>{0, 1, 15, 16, 16, 17, 19, 21, 26, 30, 31, 31, 31, 0});
  // bidirectional: 16 buckets a side, max_exact = 8: 8 + floor(ln(n/8) / ln 16 * 8), at most
  // 15; j > i (n < 0) adds 16. n = 16: ln 2 / ln 16 * 8 = 2 exactly -> 10 (not 9);
  //   n = 15: 1.81 -> 9;  n = 24: 3.17 -> 11;  n = 64: 6 -> 14;  n = 128: 8 -> 16, capped at 15
  T5Options bidir;
  bidir.causal = false;
  REQUIRE(buckets({0, 1, 7, 8, 15, 16, 24, 32, 64, 128, 5000}, bidir) ==
          std::vector<int64_t>{0, 1, 7, 8, 9, 10, 11, 12, 14, 15, 15});
  REQUIRE(buckets({-1, -7, -8, -16, -128, -5000}, bidir) ==
          std::vector<int64_t>{17, 23, 24, 26, 31, 31});
}

TEST_CASE("T5 buckets: a small table, exact and log-spaced, past max_distance", "[posenc]") {
  // causal nb = 8, max_distance = 12: max_exact = 4, then 4 + floor(ln(n/4) / ln 3 * 4):
  //   n = 5: 0.81 -> 4;  6: 1.48 -> 5;  7: 2.04 -> 6;  8: 2.52 -> 6;  10: 3.34 -> 7;
  //   12: 4 -> 8, capped at 7 (as is every n past max_distance)
  T5Options o{8, 12, true};
  REQUIRE(buckets({0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 19}, o) ==
          std::vector<int64_t>{0, 3, 4, 4, 5, 6, 6, 6, 7, 7, 7, 7});
  // bidirectional: 4 a side, max_exact = 2, then 2 + floor(ln(n/2) / ln 6 * 2), at most 3:
  //   n = 3: 0.45 -> 2;  4: 0.77 -> 2;  5: 1.02 -> 3;  12: 2 -> 4, capped at 3.  j > i: + 4
  o.causal = false;
  REQUIRE(buckets({0, 1, 2, 3, 4, 5, 12, 19}, o) == std::vector<int64_t>{0, 1, 2, 2, 2, 3, 3, 3});
  REQUIRE(buckets({-1, -2, -4, -5, -19}, o) == std::vector<int64_t>{5, 6, 6, 7, 7});
  // reversing the offset (rel = j - i, a plausible wrong reading) gives another table
  o.causal = true;
  REQUIRE(t5_bucket(-6, o) != t5_bucket(6, o));
}

TEST_CASE("the T5 table's gradient is the scatter-add by bucket", "[posenc]") {
  T5Options o{8, 12, false};
  Tensor rel_bias = rand_leaf({8, 2}, 13);
  Tensor table = t5_bias_table(rel_bias, 0, 20, 20, o);  // (2, 39): r = j - i = -19 .. 19
  REQUIRE(table.shape() == Shape{2, 39});
  Generator g(14);
  Tensor dbias = Tensor::randn({2, 39}, g, 1, DType::f64);
  backward(sum(mul(table, dbias)));
  std::vector<double> want(8 * 2, 0.0);
  for (int64_t c = 0; c < 39; ++c)
    for (int64_t h = 0; h < 2; ++h) {
      int64_t u = t5_bucket(19 - c, o);  // i - j = -r_c
      REQUIRE(table.at({h, c}) == rel_bias.at({u, h}));
      want[u * 2 + h] += dbias.at({h, c});
    }
  std::vector<double> got = rel_bias.grad().to_vector();
  for (size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == Approx(want[i]).margin(1e-12));
}

TEST_CASE("T5: the table's init and name, and bad options named by flag", "[posenc][errors]") {
  Generator g(15);
  T5Bias t5(8, T5Options{}, g, DType::f64);
  REQUIRE(t5.parameters()[0].first == "transformer.rel_bias.weight");
  std::vector<double> w = t5.weight().to_vector();
  REQUIRE(w.size() == 32 * 8);
  double ss = 0;
  for (double v : w) ss += v * v;
  REQUIRE(std::sqrt(ss / w.size()) == Approx(0.02).epsilon(0.15));  // 256 draws of N(0, 0.02^2)
  REQUIRE(t5.table(0, 5, 5).shape() == Shape{8, 9});
  // decoding: 1 query at position 6 over keys 0..6: r = -6 .. 0, offsets i - j = 6 .. 0
  Tensor step = t5.table(6, 1, 7);
  for (int64_t c = 0; c < 7; ++c)
    REQUIRE(step.at({3, c}) == t5.weight().at({t5_bucket(6 - c, t5.options()), 3}));
  REQUIRE_THROWS_WITH(validate_t5({1, 128, true}), Contains("--t5-buckets") && Contains("1"));
  REQUIRE_THROWS_WITH(validate_t5({2, 128, false}), Contains("--t5-buckets"));
  REQUIRE_THROWS_WITH(validate_t5({32, 16, true}),
                      Contains("--t5-max-distance") && Contains("max_exact = 16"));
  REQUIRE_THROWS_WITH(t5_bias_table(t5.weight(), 0, 3, 3, T5Options{16, 128, true}),
                      Contains("num_buckets = 16") && Contains("(32,8)"));
}
