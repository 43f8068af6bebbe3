// Every differentiable op against central finite differences in f64 (tests/support/gradcheck.h),
// including broadcast operands and non-contiguous inputs.
#include <catch2/catch.hpp>

#include "tests/support/gradcheck.h"

using namespace poslab;
using poslab::testing::rand_leaf;

TEST_CASE("gradcheck: broadcasting binary ops", "[gradcheck]") {
  Tensor a = rand_leaf({2, 3, 4}, 1), b = rand_leaf({3, 1}, 2), c = rand_leaf({4}, 3);
  REQUIRE_GRADCHECK("add", [](auto& x) { return add(x[0], x[1]); }, {a, b});
  REQUIRE_GRADCHECK("sub", [](auto& x) { return sub(x[0], x[1]); }, {a, c});
  REQUIRE_GRADCHECK("mul", [](auto& x) { return mul(x[0], x[1]); }, {a, b});
  // a denominator kept away from 0, where 1/b would dominate the finite differences
  Tensor den = Tensor::from_vector({1.5, -2.0, 0.7}, {3, 1}, DType::f64);
  den.set_requires_grad(true);
  REQUIRE_GRADCHECK("div", [](auto& x) { return div(x[0], x[1]); }, {a, den});
}

TEST_CASE("gradcheck: unary ops", "[gradcheck]") {
  Tensor x = rand_leaf({3, 4}, 5);
  Tensor p = Tensor::from_vector({0.5, 1.3, 2.0, 0.9, 3.1, 1.7}, {2, 3}, DType::f64);
  p.set_requires_grad(true);
  REQUIRE_GRADCHECK("neg", [](auto& v) { return neg(v[0]); }, {x});
  REQUIRE_GRADCHECK("exp", [](auto& v) { return exp(v[0]); }, {x});
  REQUIRE_GRADCHECK("tanh", [](auto& v) { return tanh(v[0]); }, {x});
  REQUIRE_GRADCHECK("scale", [](auto& v) { return scale(v[0], -2.5); }, {x});
  REQUIRE_GRADCHECK("shift", [](auto& v) { return shift(v[0], 4.0); }, {x});
  REQUIRE_GRADCHECK("log", [](auto& v) { return log(v[0]); }, {p});
  REQUIRE_GRADCHECK("sqrt", [](auto& v) { return sqrt(v[0]); }, {p});
  REQUIRE_GRADCHECK("pow", [](auto& v) { return pow(v[0], 2.5); }, {p});
  Tensor cond = Tensor::from_vector({1, 0, 0, 1}, {4}, DType::f64);
  REQUIRE_GRADCHECK("where", [cond](auto& v) { return where(cond, v[0], v[1]); },
                    {x, rand_leaf({4}, 6)});
}

TEST_CASE("gradcheck: reductions", "[gradcheck]") {
  Tensor x = rand_leaf({2, 3, 4}, 7);
  REQUIRE_GRADCHECK("sum all", [](auto& v) { return sum(v[0]); }, {x});
  REQUIRE_GRADCHECK("sum axis", [](auto& v) { return sum(v[0], {1}); }, {x});
  REQUIRE_GRADCHECK("sum axes keepdim", [](auto& v) { return sum(v[0], {0, 2}, true); }, {x});
  REQUIRE_GRADCHECK("mean", [](auto& v) { return mean(v[0], {-1}); }, {x});
  REQUIRE_GRADCHECK("max", [](auto& v) { return max(v[0], 1); }, {x});
}

TEST_CASE("gradcheck: views and non-contiguous inputs", "[gradcheck]") {
  Tensor x = rand_leaf({2, 3, 4}, 8);
  REQUIRE_GRADCHECK("reshape", [](auto& v) { return reshape(v[0], {6, 4}); }, {x});
  REQUIRE_GRADCHECK("transpose",
                    [](auto& v) { return mul(transpose(v[0], 0, 2), transpose(v[0], 0, 2)); }, {x});
  REQUIRE_GRADCHECK("permute", [](auto& v) { return contiguous(permute(v[0], {2, 0, 1})); }, {x});
  REQUIRE_GRADCHECK("slice", [](auto& v) { return slice(v[0], 2, 1, 4, 2); }, {x});
  REQUIRE_GRADCHECK("expand", [](auto& v) { return expand(v[0], {5, 2, 3, 4}); }, {x});
  // a transposed (non-contiguous) input into a kernel with a contiguous fast path
  REQUIRE_GRADCHECK("exp of transpose", [](auto& v) { return exp(transpose(v[0], 1, 2)); }, {x});
}

TEST_CASE("gradcheck: matmul and linear", "[gradcheck]") {
  Tensor a = rand_leaf({2, 3, 4}, 9), b = rand_leaf({4, 5}, 10), bb = rand_leaf({2, 4, 5}, 11);
  REQUIRE_GRADCHECK("matmul 3d@2d", [](auto& v) { return matmul(v[0], v[1]); }, {a, b});
  REQUIRE_GRADCHECK("matmul batched", [](auto& v) { return matmul(v[0], v[1]); }, {a, bb});
  Tensor c = rand_leaf({1, 3, 4}, 12);
  REQUIRE_GRADCHECK("matmul broadcast batch", [](auto& v) { return matmul(v[0], v[1]); }, {c, bb});
  REQUIRE_GRADCHECK("matmul transposed operand",
                    [](auto& v) { return matmul(v[0], transpose(v[1], 0, 1)); },
                    {a, rand_leaf({5, 4}, 13)});
  Tensor x = rand_leaf({2, 3, 4}, 14), w = rand_leaf({5, 4}, 15), bias = rand_leaf({5}, 16);
  REQUIRE_GRADCHECK("linear", [](auto& v) { return linear(v[0], v[1], v[2]); }, {x, w, bias});
  REQUIRE_GRADCHECK("linear no bias", [](auto& v) { return linear(v[0], v[1], Tensor()); }, {x, w});
}

TEST_CASE("gradcheck: nn ops", "[gradcheck]") {
  Tensor x = rand_leaf({3, 5}, 17);
  REQUIRE_GRADCHECK("softmax", [](auto& v) { return softmax(v[0]); }, {x});
  REQUIRE_GRADCHECK("log_softmax", [](auto& v) { return log_softmax(v[0]); }, {x});
  REQUIRE_GRADCHECK("gelu", [](auto& v) { return gelu(v[0]); }, {x});
  Tensor h = rand_leaf({2, 3, 6}, 18), w = rand_leaf({6}, 19), b = rand_leaf({6}, 20);
  REQUIRE_GRADCHECK("layer_norm", [](auto& v) { return layer_norm(v[0], v[1], v[2]); }, {h, w, b});
  Tensor table = rand_leaf({7, 4}, 21);
  Ids ids{{3, 0, 3, 6, 1, 3}, {2, 3}};
  REQUIRE_GRADCHECK("embedding", [ids](auto& v) { return embedding(v[0], ids); }, {table});
  Ids targets{{1, 4, 0}, {3}};
  REQUIRE_GRADCHECK("cross_entropy", [targets](auto& v) { return cross_entropy(v[0], targets); },
                    {x});
  Ids some{{1, -1, 0}, {3}};  // row 1 ignored (masked-LM)
  REQUIRE_GRADCHECK("cross_entropy ignore", [some](auto& v) { return cross_entropy(v[0], some); },
                    {x});
  // the same through a non-contiguous input
  REQUIRE_GRADCHECK("softmax of transpose", [](auto& v) { return softmax(transpose(v[0], 0, 1)); },
                    {x});
}
