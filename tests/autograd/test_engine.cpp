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

TEST_CASE("linear and layer_norm add their parameters' gradients into the parameters' buffers",
          "[autograd]") {
  // y = LN(x W^T + b; g, c), W used by two linears: L = sum(y * r) + sum(x W^T * 2)
  Tensor x = Tensor::from_vector({0.3, -1.2, 0.7, 2.0, -0.4, 0.9}, {3, 2}, DType::f64);
  Tensor W = leaf({0.5, -0.3, 1.1, 0.2, -0.7, 0.4}, {3, 2}), b = leaf({0.1, -0.2, 0.3}, {3});
  Tensor g = leaf({1.0, 0.8, 1.3}, {3}), c = leaf({0.0, 0.1, -0.1}, {3});
  Tensor r = Tensor::from_vector({1, -2, 3, 0.5, 0.25, -1, 2, 1, -3}, {3, 3}, DType::f64);
  auto loss = [&] {
    Tensor y = layer_norm(linear(x, W, b), g, c);
    return add(sum(mul(y, r)), sum(scale(linear(x, W, Tensor()), 2)));
  };
  // the same gradients computed apart, with fresh outputs (no buffer to add into)
  Tensor h = kernel::linear(x, W.detach(), b.detach()), mean, rstd;
  Tensor y = kernel::layer_norm(h, g.detach(), c.detach(), 1e-5, &mean, &rstd);
  Tensor dh, dg, dc, dW1, db, dW2;
  kernel::layer_norm_backward(h, g.detach(), mean, rstd, r, &dh, &dg, &dc);
  kernel::linear_backward(x, W.detach(), dh, nullptr, &dW1, &db);
  kernel::linear_backward(x, W.detach(), Tensor::full({3, 3}, 2.0, DType::f64), nullptr, &dW2,
                          nullptr);
  std::vector<double> dW = kernel::binary(kernel::BinaryOp::add, dW1, dW2).to_vector();

  backward(loss());
  const void* buffer = W.grad().storage()->data();
  for (size_t i = 0; i < dW.size(); ++i) REQUIRE(W.grad().to_vector()[i] == Approx(dW[i]));
  REQUIRE(b.grad().to_vector() == db.to_vector());
  REQUIRE(g.grad().to_vector() == dg.to_vector());
  REQUIRE(c.grad().to_vector() == dc.to_vector());
  backward(loss());  // a second backward adds into the same buffers
  for (size_t i = 0; i < dW.size(); ++i) REQUIRE(W.grad().to_vector()[i] == Approx(2 * dW[i]));
  REQUIRE(g.grad().to_vector()[1] == Approx(2 * dg.to_vector()[1]));
  zero_grad({W, b, g, c});
  backward(loss());  // after zero_grad: the first step's values, in the same buffer
  REQUIRE(W.grad().storage()->data() == buffer);
  for (size_t i = 0; i < dW.size(); ++i) REQUIRE(W.grad().to_vector()[i] == Approx(dW[i]));
  REQUIRE(c.grad().to_vector() == dc.to_vector());
}

// The aliasing rule (node.h): an intermediate's gradient buffer may be added into in place only
// while it is contiguous and no other tensor holds its storage; a leaf's always.
TEST_CASE("the aliasing rule: a gradient buffer is added into only when nothing else holds it",
          "[autograd]") {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor h = exp(x);  // an intermediate
  AutogradMeta& m = *h.meta();
  REQUIRE(grad_buffer_is_own(*x.meta()));  // a leaf: its buffer is the engine's own
  REQUIRE_FALSE(grad_buffer_is_own(m));    // no buffer yet
  Tensor returned = Tensor::ones({2, 3}, DType::f64);
  m.grad = std::make_shared<Tensor>(returned);  // a first gradient, kept as an op returned it
  REQUIRE_FALSE(grad_buffer_is_own(m));         // `returned` still holds its storage
  returned = Tensor();
  REQUIRE(grad_buffer_is_own(m));  // now nothing else does
  Tensor view = *m.grad;
  REQUIRE_FALSE(grad_buffer_is_own(m));  // a view shares the storage too
  view = Tensor();
  m.grad = std::make_shared<Tensor>(Tensor::ones({3, 2}, DType::f64).transpose(0, 1));
  REQUIRE_FALSE(grad_buffer_is_own(m));  // alone, but not contiguous
  m.grad.reset();
  // through the engine: h's first gradient aliases x's (add hands dy to both inputs); the
  // later contributions must not change x's through it
  Tensor L = add(sum(add(h, x)), sum(scale(h, 2)));
  backward(L);
  for (int i = 0; i < 6; ++i) REQUIRE(x.grad().to_vector()[i] == Approx(1 + 3 * std::exp(i + 1.0)));
}

TEST_CASE("a gradient buffer of the wrong shape is an error naming the op", "[autograd][errors]") {
  Tensor x = Tensor::ones({2, 3}, DType::f64), w = Tensor::ones({4, 3}, DType::f64);
  Tensor dy = Tensor::ones({2, 4}, DType::f64), dw = Tensor::zeros({3, 4}, DType::f64);
  REQUIRE_THROWS_WITH(kernel::linear_backward(x, w, dy, nullptr, &dw, nullptr),
                      Contains("linear_backward: the dW to add into must be contiguous with "
                               "shape (4,3), but got (3,4)"));
}
