// Overflow-prone kernels at extreme inputs: results stay finite and right.
#include <catch2/catch.hpp>
#include <cmath>

#include "nn/attention_op.h"
#include "posenc/alibi.h"
#include "posenc/rope.h"
#include "tests/support/gradcheck.h"

using namespace poslab;

TEST_CASE("log-sum-exp kernels survive huge logits", "[nn][extremes]") {
  Tensor x = Tensor::from_vector({1e30, -1e30, 0, 88.8f, 89.0f, -3.4e38}, {2, 3});
  REQUIRE(kernel::all_finite(kernel::softmax(x)));
  REQUIRE(kernel::all_finite(kernel::log_softmax(x.slice(0, 1, 2))));
  Tensor loss =
      kernel::cross_entropy(Tensor::from_vector({1e4, -1e4, 0}, {1, 3}), Ids{{1}, {1}}, nullptr);
  REQUIRE(loss.item() == Approx(2e4).epsilon(1e-6));  // -log softmax = lse - z_1 = 1e4 + 1e4
}

TEST_CASE("layer norm of a constant row (zero variance) is the bias, with finite gradients",
          "[nn][extremes]") {
  Tensor x = Tensor::full({2, 8}, 3.25);
  x.set_requires_grad(true);
  Tensor w = Tensor::ones({8}), b = Tensor::full({8}, 0.5);
  Tensor y = layer_norm(x, w, b);
  for (double v : y.to_vector()) REQUIRE(v == Approx(0.5));
  backward(sum(mul(y, Tensor::arange(8))));
  REQUIRE(kernel::all_finite(x.grad()));
}

TEST_CASE("ALiBi at positions in the millions: same attention as near the keys", "[nn][extremes]") {
  // queries at positions 1e6.., keys at 0..5: raw biases -m (P - j) near -6e4 for m = 1/16,
  // where f32 has a resolution of ~0.004. ALiBi's table shifts each head by a constant, which
  // changes nothing in softmax, so the output must equal that of queries at positions 5..
  // (all keys visible).
  Generator g(1);
  Tensor q = Tensor::randn({1, 3, 2, 4}, g), k = Tensor::randn({1, 6, 2, 4}, g),
         v = Tensor::randn({1, 6, 2, 4}, g);
  ALiBi alibi(2);
  AttentionOptions far, near;
  far.q_pos0 = 1000000;
  near.q_pos0 = 5;
  far.rel_bias = attention_terms_at(alibi, q, k, far.q_pos0, true).rel_bias;
  near.rel_bias = attention_terms_at(alibi, q, k, near.q_pos0, true).rel_bias;
  NoGrad ng;
  Tensor a = attention(q, k, v, far), b = attention(q, k, v, near);
  REQUIRE(kernel::all_finite(a));
  auto x = a.to_vector(), y = b.to_vector();
  for (size_t i = 0; i < x.size(); ++i) REQUIRE(x[i] == Approx(y[i]).margin(1e-6));
}

TEST_CASE("RoPE at positions in the millions keeps norms and relative angles",
          "[posenc][extremes]") {
  int64_t D = 8;
  RopeFrequencies f{rope_base_frequencies(D, 10000), 1, 1};
  Tensor c0, s0, c1, s1;
  rope_tables(f, 3, 1, DType::f64, &c0, &s0);
  rope_tables(f, 5000003, 1, DType::f64, &c1, &s1);
  Generator g(2);
  Tensor q = Tensor::randn({1, 1, 1, D}, g, 1, DType::f64),
         k = Tensor::randn({1, 1, 1, D}, g, 1, DType::f64);
  auto dot = [&](const Tensor& a, const Tensor& b) {
    double s = 0;
    for (int64_t d = 0; d < D; ++d) s += a.at({0, 0, 0, d}) * b.at({0, 0, 0, d});
    return s;
  };
  Tensor far = rope_rotate(q, c1, s1);
  REQUIRE(dot(far, far) == Approx(dot(q, q)).epsilon(1e-12));
  // both at 5e6+3 or both at 3: the same q.k (angles are computed in double)
  REQUIRE(dot(rope_rotate(q, c1, s1), rope_rotate(k, c1, s1)) ==
          Approx(dot(rope_rotate(q, c0, s0), rope_rotate(k, c0, s0))).epsilon(1e-8));
}
