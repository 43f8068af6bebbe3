// Every differentiable op of autograd/ against central finite differences in f64
// (tests/support/gradcheck.h), including broadcast operands and non-contiguous views; and the
// checker's own refusals. The [gradcheck] cases also run in `make gradcheck` (table "ops").
#include <catch2/catch.hpp>

#include "tests/support/gradcheck.h"

using namespace poslab;
using Catch::Contains;
using poslab::testing::gradcheck;
using poslab::testing::named;
using poslab::testing::rand_leaf;

TEST_CASE("gradcheck refuses what it cannot perturb safely, and an empty check", "[autograd]") {
  auto twice = [](auto& v) { return scale(v[0], 2.0); };
  Tensor x = rand_leaf({3, 4}, 1);
  REQUIRE(gradcheck("ok", twice, {x}).ok);
  Tensor f32 = Tensor::ones({3});
  f32.set_requires_grad(true);
  auto r = gradcheck("f32", twice, {f32}, named({"f32"}));
  REQUIRE(!r.ok);
  REQUIRE_THAT(r.message, Contains("not f64"));
  Tensor t = rand_leaf({4, 3}, 2);
  Tensor view = t.transpose(0, 1);  // a leaf's non-contiguous view
  REQUIRE_THAT(gradcheck("view", twice, {view}).message, Contains("not contiguous"));
  Tensor nonleaf = scale(rand_leaf({3}, 3), 2.0);
  REQUIRE_THAT(gradcheck("nonleaf", twice, {nonleaf}).message, Contains("not a leaf"));
  Tensor half = rand_leaf({6}, 4);
  Tensor a = half.slice(0, 0, 4), b = half.slice(0, 2, 6);  // overlapping views
  auto both = [](auto& v) { return add(v[0], v[1]); };
  REQUIRE_THAT(gradcheck("shared", both, {a, b}).message, Contains("shares memory"));
  Tensor frozen = Tensor::ones({3}, DType::f64);  // requires no grad: nothing to compare
  REQUIRE_THAT(gradcheck("nothing", twice, {frozen}).message, Contains("no element was checked"));
  // a wrong backward is caught, with the input's name and the index
  auto wrong = [](auto& v) { return add(v[0], v[0].detach()); };  // d/dx = 2, recorded as 1
  auto w = gradcheck("wrong", wrong, {x}, {.names = {"x"}});
  REQUIRE(!w.ok);
  REQUIRE_THAT(w.message, Contains("x (3,4)") && Contains("at index"));
  REQUIRE(w.inputs.at(0).checked == 12);
  REQUIRE(w.inputs.at(0).max_rel == Approx(0.5).epsilon(1e-4));  // |R - 2R| / |2R|
}

TEST_CASE("gradcheck: ops: broadcasting binary ops", "[gradcheck]") {
  Tensor a = rand_leaf({2, 3, 4}, 1), b = rand_leaf({3, 1}, 2), c = rand_leaf({4}, 3);
  CHECK_GRADCHECK(
      "ops: add", [](auto& x) { return add(x[0], x[1]); }, {a, b}, named({"a", "b"}));
  CHECK_GRADCHECK(
      "ops: sub", [](auto& x) { return sub(x[0], x[1]); }, {a, c}, named({"a", "c"}));
  CHECK_GRADCHECK(
      "ops: mul", [](auto& x) { return mul(x[0], x[1]); }, {a, b}, named({"a", "b"}));
  // a denominator kept away from 0, where 1/b would dominate the finite differences
  Tensor den = Tensor::from_vector({1.5, -2.0, 0.7}, {3, 1}, DType::f64);
  den.set_requires_grad(true);
  CHECK_GRADCHECK(
      "ops: div", [](auto& x) { return div(x[0], x[1]); }, {a, den}, named({"a", "den"}));
}

TEST_CASE("gradcheck: ops: unary ops", "[gradcheck]") {
  Tensor x = rand_leaf({3, 4}, 5);
  Tensor p = Tensor::from_vector({0.5, 1.3, 2.0, 0.9, 3.1, 1.7}, {2, 3}, DType::f64);
  p.set_requires_grad(true);
  CHECK_GRADCHECK(
      "ops: neg", [](auto& v) { return neg(v[0]); }, {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: exp", [](auto& v) { return exp(v[0]); }, {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: tanh", [](auto& v) { return tanh(v[0]); }, {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: scale", [](auto& v) { return scale(v[0], -2.5); }, {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: shift", [](auto& v) { return shift(v[0], 4.0); }, {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: log", [](auto& v) { return log(v[0]); }, {p}, named({"p"}));
  CHECK_GRADCHECK(
      "ops: sqrt", [](auto& v) { return sqrt(v[0]); }, {p}, named({"p"}));
  CHECK_GRADCHECK(
      "ops: pow", [](auto& v) { return pow(v[0], 2.5); }, {p}, named({"p"}));
  Tensor cond = Tensor::from_vector({1, 0, 0, 1}, {4}, DType::f64);
  CHECK_GRADCHECK("ops: where", [cond](auto& v) { return where(cond, v[0], v[1]); },
                  {x, rand_leaf({4}, 6)});
}

TEST_CASE("gradcheck: ops: reductions", "[gradcheck]") {
  Tensor x = rand_leaf({2, 3, 4}, 7);
  CHECK_GRADCHECK(
      "ops: sum all", [](auto& v) { return sum(v[0]); }, {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: sum axis", [](auto& v) { return sum(v[0], {1}); }, {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: sum axes keepdim",
      [](auto& v) {
        return sum(v[0], {0, 2}, true);
      },
      {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: mean", [](auto& v) { return mean(v[0], {-1}); }, {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: max", [](auto& v) { return max(v[0], 1); }, {x}, named({"x"}));
}

TEST_CASE("gradcheck: ops: views and non-contiguous inputs", "[gradcheck]") {
  Tensor x = rand_leaf({2, 3, 4}, 8);
  CHECK_GRADCHECK(
      "ops: reshape",
      [](auto& v) {
        return reshape(v[0], {6, 4});
      },
      {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: transpose", [](auto& v) { return mul(transpose(v[0], 0, 2), transpose(v[0], 0, 2)); },
      {x}, named({"x"}));
  CHECK_GRADCHECK("ops: permute",
                  [](auto& v) {
                    return contiguous(permute(v[0], {2, 0, 1}));
                  },
                  {x});
  CHECK_GRADCHECK(
      "ops: slice", [](auto& v) { return slice(v[0], 2, 1, 4, 2); }, {x}, named({"x"}));
  // Slices add their gradient into the input's buffer (autograd/shape.cpp): side by side and
  // overlapping slices of a leaf and of an intermediate, with full-size uses of both, one of
  // which reaches the intermediate as an aliased gradient and one as an expanded scalar.
  CHECK_GRADCHECK(
      "ops: slices into one gradient",
      [](auto& v) {
        Tensor h = mul(v[0], v[0]);
        Tensor full = add(h, scale(v[0], 2.0));  // h's first gradient aliases v[0]'s
        Tensor part = add(mul(slice(h, 2, 1, 3), slice(v[0], 2, 0, 2)),
                          mul(slice(h, 2, 2, 4), slice(v[0], 2, 1, 4, 2)));
        return add(add(sum(full), sum(part)), sum(slice(mul(h, h), 1, 0, 3, 2)));
      },
      {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: expand",
      [](auto& v) {
        return expand(v[0], {5, 2, 3, 4});
      },
      {x}, named({"x"}));
  // a transposed (non-contiguous) input into a kernel with a contiguous fast path
  CHECK_GRADCHECK(
      "ops: exp of transpose", [](auto& v) { return exp(transpose(v[0], 1, 2)); }, {x},
      named({"x"}));
}

TEST_CASE("gradcheck: ops: matmul and linear", "[gradcheck]") {
  Tensor a = rand_leaf({2, 3, 4}, 9), b = rand_leaf({4, 5}, 10), bb = rand_leaf({2, 4, 5}, 11);
  CHECK_GRADCHECK(
      "ops: matmul 3d@2d", [](auto& v) { return matmul(v[0], v[1]); }, {a, b}, named({"a", "b"}));
  CHECK_GRADCHECK(
      "ops: matmul batched", [](auto& v) { return matmul(v[0], v[1]); }, {a, bb},
      named({"a", "bb"}));
  Tensor c = rand_leaf({1, 3, 4}, 12);
  CHECK_GRADCHECK("ops: matmul broadcast batch", [](auto& v) { return matmul(v[0], v[1]); },
                  {c, bb});
  CHECK_GRADCHECK("ops: matmul transposed operand",
                  [](auto& v) { return matmul(v[0], transpose(v[1], 0, 1)); },
                  {a, rand_leaf({5, 4}, 13)});
  Tensor x = rand_leaf({2, 3, 4}, 14), w = rand_leaf({5, 4}, 15), bias = rand_leaf({5}, 16);
  CHECK_GRADCHECK(
      "ops: linear", [](auto& v) { return linear(v[0], v[1], v[2]); }, {x, w, bias},
      named({"x", "w", "bias"}));
  CHECK_GRADCHECK("ops: linear no bias", [](auto& v) { return linear(v[0], v[1], Tensor()); },
                  {x, w});
}

TEST_CASE("gradcheck: ops: nn ops", "[gradcheck]") {
  Tensor x = rand_leaf({3, 5}, 17);
  CHECK_GRADCHECK(
      "ops: softmax", [](auto& v) { return softmax(v[0]); }, {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: log_softmax", [](auto& v) { return log_softmax(v[0]); }, {x}, named({"x"}));
  CHECK_GRADCHECK(
      "ops: gelu", [](auto& v) { return gelu(v[0]); }, {x}, named({"x"}));
  Tensor h = rand_leaf({2, 3, 6}, 18), w = rand_leaf({6}, 19), b = rand_leaf({6}, 20);
  CHECK_GRADCHECK("ops: layer_norm", [](auto& v) { return layer_norm(v[0], v[1], v[2]); },
                  {h, w, b});
  Tensor table = rand_leaf({7, 4}, 21);
  Ids ids{{3, 0, 3, 6, 1, 3}, {2, 3}};
  CHECK_GRADCHECK(
      "ops: embedding", [ids](auto& v) { return embedding(v[0], ids); }, {table}, named({"table"}));
  Ids targets{{1, 4, 0}, {3}};
  CHECK_GRADCHECK("ops: cross_entropy", [targets](auto& v) { return cross_entropy(v[0], targets); },
                  {x});
  Ids some{{1, -1, 0}, {3}};  // row 1 ignored (masked-LM)
  CHECK_GRADCHECK(
      "ops: cross_entropy ignore", [some](auto& v) { return cross_entropy(v[0], some); }, {x},
      named({"x"}));
  // the same through a non-contiguous input
  CHECK_GRADCHECK(
      "ops: softmax of transpose", [](auto& v) { return softmax(transpose(v[0], 0, 1)); }, {x},
      named({"x"}));
}
