// Gradient checks of the schemes' own ops (tests/support/gradcheck.h): RoPE's rotation with
// the tables of every scaling, the learned table and the sinusoidal one. Each op's name starts
// with its encoding, the table `make gradcheck` prints it in. Attention with each scheme and
// whole models: tests/nn/gradcheck_nn.cpp.
#include <catch2/catch.hpp>
#include <cmath>

#include "posenc/learned.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"
#include "posenc/t5.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using poslab::testing::named;
using poslab::testing::rand_leaf;

TEST_CASE("gradcheck: rope: the rotation op, also on a strided view", "[gradcheck][posenc]") {
  RopeFrequencies f{rope_base_frequencies(4, 10000), 1, 1};
  Tensor c, s;
  rope_tables(f, 3, 5, DType::f64, &c, &s);  // positions 3..7
  Tensor x = rand_leaf({2, 5, 3, 4}, 1);
  CHECK_GRADCHECK(
      "rope: rotate x (B,T,H,D)", [c, s](auto& v) { return rope_rotate(v[0], c, s); }, {x},
      named({"x"}));
  Tensor big = rand_leaf({2, 5, 3, 8}, 2);  // rotate a column block: strides (120, 24, 8, 1)
  CHECK_GRADCHECK(
      "rope: rotate a strided view of x",
      [c, s](auto& v) { return rope_rotate(slice(v[0], 3, 4, 8), c, s); }, {big}, named({"x"}));
}

// Every scaling's table path: RoPE::rotate with the scaling set (factor s = 4, T0 = 8) builds
// its frequencies, position scale and amplitude into the cos/sin tables it rotates with.
TEST_CASE("gradcheck: rope: the rotation with every scaling's tables", "[gradcheck][posenc]") {
  Tensor x = rand_leaf({2, 6, 2, 8}, 3);
  for (ScalingKind k :
       {ScalingKind::none, ScalingKind::linear, ScalingKind::ntk, ScalingKind::yarn}) {
    RoPE rope(8, 10000);
    const RopeScaling sc{k, 4, 8};
    std::string what = k == ScalingKind::none
                           ? "no scaling"
                           : std::string("scaling ") + scaling_name(k) + " (s = 4)";
    CHECK_GRADCHECK(
        "rope: rotate, " + what,
        [&rope, sc](auto& v) { return rope_rotate_at(rope, v[0], 26, 32, sc); }, {x}, named({"x"}));
  }
  // dynamic: each row's own frequencies (dynamic_row_frequencies, what attention receives),
  // as cos/sin tables of the row's position: row t is rotated as the query at t would be
  int64_t T = 6, half = 4, pos0 = 10;
  Tensor w = dynamic_row_frequencies(8, 8, 10000, 8, pos0, T);
  std::vector<double> cv(T * half), sv(T * half);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t p = 0; p < half; ++p) {
      double a = static_cast<double>(pos0 + t) * w.at({t, p});
      cv[t * half + p] = std::cos(a), sv[t * half + p] = std::sin(a);
    }
  Tensor c = Tensor::from_vector(cv, {T, half}, DType::f64),
         s = Tensor::from_vector(sv, {T, half}, DType::f64);
  CHECK_GRADCHECK(
      "rope: rotate, scaling dynamic (each row's own theta, T0 = 8)",
      [c, s](auto& v) { return rope_rotate(v[0], c, s); }, {x}, named({"x"}));
}

// The half layout and a partial rotation, with every scaling's tables. D = 12: f = 1 rotates
// all 12 dims (6 pairs), f = 0.5 rotates r = 6 (3 pairs: an odd count, so the half layout's
// (i, i + r/2) pairing matches no interleaved one), the other 6 dims pass through. s = 4.
TEST_CASE("gradcheck: rope: half layout and partial rotation, every scaling's tables",
          "[gradcheck][posenc]") {
  Tensor x = rand_leaf({2, 5, 3, 12}, 7);
  for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half})
    for (double f : {1.0, 0.5})
      for (ScalingKind k :
           {ScalingKind::none, ScalingKind::linear, ScalingKind::ntk, ScalingKind::yarn}) {
        if (layout == RopeLayout::interleaved && f == 1) continue;  // the case above
        RoPE rope(12, 10000, layout, f);
        const RopeScaling sc{k, 4, 8};
        char name[96];
        std::snprintf(name, sizeof name, "rope: rotate, %s, r = %lld of 12, scaling %s",
                      rope_layout_name(layout), static_cast<long long>(rope.rotated_dims()),
                      scaling_name(k));
        CHECK_GRADCHECK(
            name, [&rope, sc](auto& v) { return rope_rotate_at(rope, v[0], 2, 16, sc); }, {x},
            named({"x"}));
      }
}

TEST_CASE("gradcheck: learned: the position table added to the embeddings", "[gradcheck][posenc]") {
  Generator g(5);
  LearnedPE pe(6, 4, g, DType::f64);
  Tensor wpe = pe.parameters()[0].second;
  Tensor x = rand_leaf({2, 4, 4}, 6);
  CHECK_GRADCHECK(
      "learned: x + wpe[1..5)", [&pe](auto& v) { return add_to_embeddings_at(pe, v[0], 1); },
      {x, wpe}, named({"x", "wpe"}));
}

TEST_CASE("gradcheck: sinusoidal: the fixed table added to the embeddings", "[gradcheck][posenc]") {
  SinusoidalPE pe(16);
  Tensor x = rand_leaf({2, 5, 16}, 4);
  CHECK_GRADCHECK(
      "sinusoidal: x + PE[3..8)", [&pe](auto& v) { return add_to_embeddings_at(pe, v[0], 3); }, {x},
      named({"x"}));
}

// nb = 8, max_distance = 12, 20 queries over 20 keys: offsets past num_buckets/2 and past
// max_distance, so several offsets share a bucket (the scatter-add sums them).
TEST_CASE("gradcheck: t5: the bias table gathered from rel_bias", "[gradcheck][posenc]") {
  for (bool causal : {true, false}) {
    T5Options o{8, 12, causal};
    Tensor rel_bias = rand_leaf({8, 3}, causal ? 11 : 12);
    CHECK_GRADCHECK(
        std::string("t5: bias table (H, 39) from rel_bias, ") +
            (causal ? "causal" : "bidirectional"),
        [o](auto& v) { return t5_bias_table(v[0], 0, 20, 20, o); }, {rel_bias},
        named({"rel_bias"}));
  }
}
