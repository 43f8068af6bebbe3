// The engine: accumulation, no_grad, zero_grad, detach, freeing, errors.
#include <catch2/catch.hpp>

#include "autograd/ops.h"

using namespace poslab;
using Catch::Contains;

static Tensor leaf(std::vector<double> v, Shape s) {
  Tensor t = Tensor::from_vector(v, s, DType::f64);
  t.set_requires_grad(true);
  return t;
}

TEST_CASE("a tensor used twice gets the sum of both gradients", "[autograd]") {
  // L = sum(x * x) + sum(3 x)  =>  dL/dx = 2x + 3
  Tensor x = leaf({1, -2, 5}, {3});
  Tensor L = add(sum(mul(x, x)), sum(scale(x, 3)));
  backward(L);
  REQUIRE(x.grad().to_vector() == std::vector<double>{5, -1, 13});
  // a second backward on a new graph accumulates (+=) into the leaf
  backward(sum(x));
  REQUIRE(x.grad().to_vector() == std::vector<double>{6, 0, 14});
  zero_grad({x});
  REQUIRE(x.grad().to_vector() == std::vector<double>{0, 0, 0});
}

TEST_CASE("no_grad records nothing and detach cuts the graph", "[autograd]") {
  Tensor x = leaf({1, 2}, {2});
  {
    NoGrad ng;
    Tensor y = mul(x, x);
    REQUIRE_FALSE(y.requires_grad());
  }
  Tensor y = mul(x.detach(), x);  // only the second factor carries gradient: dy/dx = x
  backward(sum(y));
  REQUIRE(x.grad().to_vector() == std::vector<double>{1, 2});
}

TEST_CASE("intermediate gradients and saved tensors are freed after backward", "[autograd]") {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor h = exp(x);
  Tensor L = sum(h);
  backward(L);
  REQUIRE_FALSE(h.grad().defined());      // intermediate: freed
  REQUIRE(h.meta()->grad_fn == nullptr);  // node (and what it saved) released
  REQUIRE(x.grad().defined());            // leaf: kept
  REQUIRE_THROWS_WITH(backward(L), Contains("graph was already freed"));
}

TEST_CASE("backward on a non-scalar needs a gradient", "[autograd][errors]") {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = mul(x, x);
  REQUIRE_THROWS_WITH(
      backward(y),
      Contains("expected a scalar (one-element) loss or an explicit gradient, but got shape (2)"));
  backward(y, Tensor::from_vector({1, 10}, {2}, DType::f64));
  REQUIRE(x.grad().to_vector() == std::vector<double>{2, 40});
  REQUIRE_THROWS_WITH(backward(sum(Tensor::zeros({2}))), Contains("does not require grad"));
}

TEST_CASE("detect_anomaly names the op that produced a non-finite gradient", "[autograd][errors]") {
  Tensor x = leaf({0, 1}, {2});
  set_detect_anomaly(true);
  REQUIRE_THROWS_WITH(backward(sum(sqrt(x))), Contains("sqrt produced a non-finite gradient"));
  set_detect_anomaly(false);
}
