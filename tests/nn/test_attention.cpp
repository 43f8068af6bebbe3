// The fused attention op against the same attention composed from primitive ops, and
// against finite differences.
#include <catch2/catch.hpp>

#include "nn/attention_op.h"
#include "posenc/alibi.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using poslab::testing::rand_leaf;

static void require_close(const Tensor& a, const Tensor& b, double tol) {
  REQUIRE(a.shape() == b.shape());
  auto x = a.to_vector(), y = b.to_vector();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  INFO("max abs difference " << worst);
  REQUIRE(worst <= tol);
}

// The fused op and the composed reference on the same leaves: outputs, then dq, dk, dv for
// the loss sum(out * w) with a fixed random w, all within tol.
static void require_matches_reference(const Shape& shape, const AttentionOptions& o, uint64_t seed,
                                      double tol) {
  Tensor q = rand_leaf(shape, seed), k = rand_leaf(shape, seed + 1), v = rand_leaf(shape, seed + 2);
  Tensor a = attention(q, k, v, o), r = attention_reference(q, k, v, o);
  require_close(a, r, tol);
  Generator g(seed + 3);
  Tensor w = Tensor::randn(a.shape(), g, 1, DType::f64);
  backward(sum(mul(a, w)));
  Tensor dq = q.grad().clone(), dk = k.grad().clone(), dv = v.grad().clone();
  zero_grad({q, k, v});
  backward(sum(mul(r, w)));
  require_close(dq, q.grad(), tol);
  require_close(dk, k.grad(), tol);
  require_close(dv, v.grad(), tol);
}

TEST_CASE("fused attention equals the composed reference, forward and backward", "[nn]") {
  for (bool causal : {true, false})
    for (bool alibi : {false, true}) {
      AttentionOptions o;
      o.causal = causal;
      if (alibi) o.alibi_slopes = alibi_slopes(3);
      require_matches_reference({2, 7, 3, 4}, o, 1, 1e-12);
    }
}

TEST_CASE("fused attention over several row blocks equals the reference, with gradients", "[nn]") {
  // T = 150: three row blocks of 64, the last partial; causal and not, ALiBi on
  for (bool causal : {true, false}) {
    AttentionOptions o;
    o.causal = causal;
    o.alibi_slopes = alibi_slopes(2);
    require_matches_reference({1, 150, 2, 4}, o, 21, 1e-11);
  }
}

TEST_CASE("gradcheck: fused attention with and without mask, with ALiBi", "[gradcheck][nn]") {
  Tensor q = rand_leaf({1, 5, 2, 4}, 5), k = rand_leaf({1, 5, 2, 4}, 6),
         v = rand_leaf({1, 5, 2, 4}, 7);
  AttentionOptions causal, open, alibi;
  open.causal = false;
  alibi.alibi_slopes = alibi_slopes(2);
  REQUIRE_GRADCHECK("attention causal",
                    [causal](auto& x) { return attention(x[0], x[1], x[2], causal); }, {q, k, v});
  REQUIRE_GRADCHECK("attention no mask",
                    [open](auto& x) { return attention(x[0], x[1], x[2], open); }, {q, k, v});
  REQUIRE_GRADCHECK("attention with ALiBi",
                    [alibi](auto& x) { return attention(x[0], x[1], x[2], alibi); }, {q, k, v});
  // strided inputs: q, k, v as column blocks of one (B,T,3,H,D) projection
  Tensor qkv = rand_leaf({1, 5, 3 * 8}, 8);
  REQUIRE_GRADCHECK("attention on strided q/k/v",
                    [](auto& x) {
                      Tensor q = reshape(slice(x[0], 2, 0, 8), {1, 5, 2, 4}),
                             k = reshape(slice(x[0], 2, 8, 16), {1, 5, 2, 4}),
                             v = reshape(slice(x[0], 2, 16, 24), {1, 5, 2, 4});
                      return attention(q, k, v, AttentionOptions{});
                    },
                    {qkv});
}

TEST_CASE("the row-blocked inference path equals the training path", "[nn]") {
  // T = 150 > the 64-row block; q_pos0 > 0 (a decoding step over a cache of 150 keys)
  Generator g(9);
  Tensor q = Tensor::randn({1, 150, 2, 8}, g), k = Tensor::randn({1, 150, 2, 8}, g),
         v = Tensor::randn({1, 150, 2, 8}, g);
  AttentionOptions o;
  o.alibi_slopes = alibi_slopes(2);
  Tensor with_grad;
  {
    Tensor ql = q.clone();
    ql.set_requires_grad(true);
    with_grad = attention(ql, k, v, o);
  }
  Tensor no_grad;
  {
    NoGrad ng;
    no_grad = attention(q, k, v, o);
  }
  require_close(with_grad, no_grad, 1e-5);
  // the last 10 rows on their own, at positions 140..149
  NoGrad ng;
  AttentionOptions tail = o;
  tail.q_pos0 = 140;
  require_close(attention(q.slice(1, 140, 150), k, v, tail), no_grad.slice(1, 140, 150), 1e-5);
}
