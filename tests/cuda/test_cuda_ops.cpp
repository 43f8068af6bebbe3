// Every kernel family on the GPU against the CPU on the same inputs, forward and backward.
//
// Tolerances (compare.h: rtol |cpu| + atol max|cpu|), in f32 (eps = 6e-8):
//   elementwise maps: the same formula per element; CUDA's exp/log/tanh/pow are within 2 ulp
//     and glibc's within 1, and nvcc may fuse a*b+c into one rounding: rtol 1e-6.
//   sums, products, softmax, LayerNorm: K-term sums in another order (blocked, tree, FMA): the
//     error grows like K eps times the size of the terms, hence an atol scaled by the largest
//     value: 1e-5 for K up to ~1000.
#include <catch2/catch.hpp>

#include "tensor/ops.h"
#include "tests/cuda/compare.h"

using namespace poslab;
using namespace poslab::testing;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// out = f(inputs) on both devices; then, for the inputs marked in `grad`, the gradients of
// sum(out * w) with a fixed random w. All compared with (rtol, atol).
void check_op(const std::string& name, const Fn& f, const std::vector<Tensor>& inputs,
              const std::vector<bool>& grad, double rtol, double atol) {
  INFO("op " << name);
  std::vector<Tensor> c, g;
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool gi = i < grad.size() && grad[i];
    any = any || gi;
    c.push_back(gi ? leaf(inputs[i], Device::cpu) : inputs[i]);
    g.push_back(gi ? leaf(inputs[i], Device::cuda) : on_gpu(inputs[i]));
  }
  Tensor oc = f(c), og = f(g);
  REQUIRE(og.device() == Device::cuda);
  REQUIRE_CLOSE(og, oc, rtol, atol);
  if (!any) return;
  Tensor w = randn(oc.shape(), 99);
  backward(sum(mul(oc, w)));
  backward(sum(mul(og, on_gpu(w))));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (i < grad.size() && grad[i]) {
      INFO("gradient of input " << i);
      REQUIRE_CLOSE(g[i].grad(), c[i].grad(), rtol, atol);
    }
}

Tensor positive(const Tensor& x) {  // |x| + 0.1: inputs for log, sqrt, fractional pow
  return kernel::affine(kernel::unary(kernel::UnaryOp::abs, x), 1, 0.1);
}

}  // namespace

TEST_CASE("cuda: binary ops broadcast like the CPU, forward and backward", "[cuda]") {
  Tensor a = randn({4, 5, 6}, 1), b = randn({5, 6}, 2), c = randn({4, 1, 6}, 3),
         d = randn({1, 5, 1}, 4);
  for (auto [name, op] :
       std::vector<std::pair<std::string, Tensor (*)(const Tensor&, const Tensor&)>>{
           {"add", add}, {"sub", sub}, {"mul", mul}}) {
    check_op(
        name + " (4,5,6),(5,6)", [op = op](auto& x) { return op(x[0], x[1]); }, {a, b},
        {true, true}, 1e-6, 1e-7);
    check_op(
        name + " (4,1,6),(1,5,1)", [op = op](auto& x) { return op(x[0], x[1]); }, {c, d},
        {true, true}, 1e-6, 1e-7);
  }
  // div: the divisor kept away from zero
  check_op(
      "div", [](auto& x) { return div(x[0], x[1]); }, {a, positive(b)}, {true, true}, 1e-6, 1e-7);
  // a transposed (non-contiguous) operand
  check_op(
      "add transposed", [](auto& x) { return add(transpose(x[0], 0, 2), x[1]); },
      {randn({6, 5, 4}, 5), randn({4, 5, 6}, 6)}, {true, true}, 1e-6, 1e-7);
  for (auto op : {kernel::BinaryOp::maximum, kernel::BinaryOp::gt, kernel::BinaryOp::lt,
                  kernel::BinaryOp::eq}) {
    Tensor same = a.slice(1, 0, 1);  // eq needs equal values somewhere
    check_op(
        "binary " + std::to_string(int(op)),
        [op](auto& x) { return kernel::binary(op, x[0], x[1]); }, {a, same}, {}, 0, 0);
  }
}

TEST_CASE("cuda: unary maps, pow, affine, where", "[cuda]") {
  Tensor x = randn({7, 33}, 11), p = positive(x);
  check_op(
      "neg", [](auto& v) { return neg(v[0]); }, {x}, {true}, 0, 0);
  check_op(
      "exp", [](auto& v) { return exp(v[0]); }, {x}, {true}, 1e-6, 1e-7);
  check_op(
      "log", [](auto& v) { return log(v[0]); }, {p}, {true}, 1e-6, 1e-7);
  check_op(
      "tanh", [](auto& v) { return tanh(v[0]); }, {x}, {true}, 1e-6, 1e-7);
  check_op(
      "sqrt", [](auto& v) { return sqrt(v[0]); }, {p}, {true}, 1e-6, 1e-7);
  check_op(
      "abs", [](auto& v) { return kernel::unary(kernel::UnaryOp::abs, v[0]); }, {x}, {}, 0, 0);
  check_op(
      "pow 3", [](auto& v) { return pow(v[0], 3); }, {x}, {true}, 1e-6, 1e-7);
  check_op(
      "pow 0.5", [](auto& v) { return pow(v[0], 0.5); }, {p}, {true}, 1e-6, 1e-7);
  check_op(
      "scale, shift", [](auto& v) { return shift(scale(v[0], -2.5), 0.75); }, {x}, {true}, 1e-6,
      1e-7);
  Tensor cond = kernel::binary(kernel::BinaryOp::gt, x, Tensor::zeros({33}));
  check_op(
      "where", [](auto& v) { return where(v[0], v[1], v[2]); },
      {cond, randn({7, 33}, 12), randn({33}, 13)}, {false, true, true}, 0, 0);
}

TEST_CASE("cuda: in-place add_, scale_, all_finite, first_non_finite and zero_", "[cuda]") {
  Tensor a = randn({3, 8}, 21), b = randn({8}, 22);
  Tensor ac = a.clone(), ag = on_gpu(a);
  kernel::add_(ac, b, -0.5);
  kernel::add_(ag, on_gpu(b), -0.5);
  REQUIRE_CLOSE(ag, ac, 1e-6, 1e-7);
  // into a strided view: a slice's gradient added into its block of one buffer (q, k, v of one
  // projection, autograd/shape.cpp); the elements outside the block untouched
  Tensor buf = randn({4, 5, 24}, 24), dq = randn({4, 5, 8}, 25);
  Tensor bc = buf.clone(), bg = on_gpu(buf);
  kernel::add_(bc.slice(2, 8, 16), dq, 1);
  kernel::add_(bg.slice(2, 8, 16), on_gpu(dq), 1);
  REQUIRE_CLOSE(bg, bc, 1e-6, 1e-7);
  REQUIRE(bg.slice(2, 0, 8).to_vector() == buf.slice(2, 0, 8).to_vector());
  kernel::scale_(ac, 3);
  kernel::scale_(ag, 3);
  REQUIRE_CLOSE(ag, ac, 1e-6, 1e-7);
  REQUIRE(kernel::all_finite(ag));
  Tensor bad = ag.clone();
  bad.slice(0, 2, 3).slice(1, 5, 6).fill_(std::numeric_limits<double>::infinity());
  REQUIRE_FALSE(kernel::all_finite(bad));
  REQUIRE_FALSE(kernel::all_finite(on_gpu(Tensor::full({4}, std::nan("")))));
  // the list form (one launch, one read-back): the index of the first bad tensor, views walked
  // with their strides
  std::vector<Tensor> xs{on_gpu(randn({40, 33}, 23)), ag.clone(), bad, bad.slice(0, 0, 2)};
  REQUIRE(kernel::first_non_finite(xs) == 2);
  REQUIRE(kernel::first_non_finite({xs[0], xs[1], xs[3]}) == -1);
  REQUIRE(kernel::first_non_finite({xs[0], bad.transpose(0, 1)}) == 1);
  // zero_: one launch for a list of contiguous tensors, one fill per tensor otherwise
  std::vector<Tensor> zs{xs[0].clone(), bad.clone(), on_gpu(Tensor::full({7}, 3.0))};
  kernel::zero_(zs);
  for (const Tensor& z : zs)
    for (double v : z.to_vector()) REQUIRE(v == 0);
  Tensor part = xs[0].clone();
  kernel::zero_({part.slice(0, 0, 2), zs[2]});
  REQUIRE(part.slice(0, 2, 40).to_vector() == xs[0].slice(0, 2, 40).to_vector());
  for (double v : part.slice(0, 0, 2).to_vector()) REQUIRE(v == 0);
}

TEST_CASE("cuda: sums, means and maxima along any axes", "[cuda]") {
  Tensor x = randn({5, 6, 7}, 31);
  // sums of up to 210 terms of size ~1: float error ~1e-5 of the largest partial sum
  for (std::vector<int64_t> axes :
       std::vector<std::vector<int64_t>>{{}, {0}, {1}, {2}, {0, 2}, {0, 1}})
    for (bool keep : {false, true}) {
      INFO("axes " << shape_str(axes) << " keepdim " << keep);
      check_op(
          "sum", [&](auto& v) { return sum(v[0], axes, keep); }, {x}, {true}, 1e-5, 1e-6);
      check_op(
          "mean", [&](auto& v) { return mean(v[0], axes, keep); }, {x}, {true}, 1e-5, 1e-6);
    }
  check_op(
      "max axis 1", [](auto& v) { return max(v[0], 1, false); }, {x}, {true}, 0, 0);
  check_op(
      "max axis -1 keepdim", [](auto& v) { return max(v[0], -1, true); }, {x}, {true}, 0, 0);
  // one long row: the reduction splits it into chunks and combines them in a second pass
  Tensor big = randn({1, 200000}, 32);
  check_op(
      "sum of 200000", [](auto& v) { return sum(v[0]); }, {big}, {true}, 1e-5, 1e-5);
  double sc = kernel::sum_squares(big), sg = kernel::sum_squares(on_gpu(big));
  REQUIRE(sg == Approx(sc).epsilon(1e-9));  // both accumulate in double
  // undoing a broadcast: leading dims (the bias-gradient path) and inner ones
  check_op(
      "sum_to (6,7)",
      [](auto& v) {
        return kernel::sum_to(v[0], {6, 7});
      },
      {x}, {}, 1e-5, 1e-6);
  check_op(
      "sum_to (5,1,7)",
      [](auto& v) {
        return kernel::sum_to(v[0], {5, 1, 7});
      },
      {x}, {}, 1e-5, 1e-6);
}

TEST_CASE("cuda: matmul (cuBLAS) with batches, broadcasting and transposed views", "[cuda]") {
  // K = 33 terms per output: atol 1e-5 of the largest output
  auto mm = [](auto& v) { return matmul(v[0], v[1]); };
  check_op("2-D", mm, {randn({17, 33}, 41), randn({33, 9}, 42)}, {true, true}, 1e-5, 1e-5);
  check_op("batched", mm, {randn({3, 17, 33}, 43), randn({3, 33, 9}, 44)}, {true, true}, 1e-5,
           1e-5);
  check_op("2-D right operand folded", mm, {randn({2, 3, 17, 33}, 45), randn({33, 9}, 46)},
           {true, true}, 1e-5, 1e-5);
  check_op("broadcast batch", mm, {randn({4, 17, 33}, 47), randn({1, 33, 9}, 48)}, {true, true},
           1e-5, 1e-5);
  check_op(
      "transposed operands",
      [](auto& v) { return matmul(transpose(v[0], 1, 2), transpose(v[1], 1, 2)); },
      {randn({3, 33, 17}, 49), randn({3, 9, 33}, 50)}, {true, true}, 1e-5, 1e-5);
  // batch dims of a permuted view that do not merge (attention's (B,T,H,D) -> (B,H,T,D))
  check_op(
      "permuted 4-D",
      [](auto& v) {
        return matmul(permute(v[0], {0, 2, 1, 3}), transpose(permute(v[1], {0, 2, 1, 3}), 2, 3));
      },
      {randn({2, 11, 3, 8}, 51), randn({2, 13, 3, 8}, 52)}, {true, true}, 1e-5, 1e-5);
  check_op(
      "linear with bias", [](auto& v) { return linear(v[0], v[1], v[2]); },
      {randn({2, 5, 33}, 53), randn({12, 33}, 54), randn({12}, 55)}, {true, true, true}, 1e-5,
      1e-5);
  check_op(
      "linear without bias", [](auto& v) { return linear(v[0], v[1], Tensor()); },
      {randn({7, 33}, 56), randn({12, 33}, 57)}, {true, true}, 1e-5, 1e-5);
  // f64 through cublasDgemm
  Tensor a = randn({5, 6}, 58).to(DType::f64), b = randn({6, 4}, 59).to(DType::f64);
  REQUIRE_CLOSE(kernel::matmul(on_gpu(a), on_gpu(b)), kernel::matmul(a, b), 1e-12, 1e-13);
}

TEST_CASE("cuda: softmax, log-softmax and cross-entropy", "[cuda]") {
  // rows of 1000: sums of 1000 terms, atol 1e-5 of the largest value
  for (int64_t n : {1, 7, 1000}) {
    Tensor x = randn({3, 4, n}, 60 + n, 3.0);
    check_op(
        "softmax n=" + std::to_string(n), [](auto& v) { return softmax(v[0]); }, {x}, {true}, 1e-5,
        1e-6);
    check_op(
        "log_softmax n=" + std::to_string(n), [](auto& v) { return log_softmax(v[0]); }, {x},
        {true}, 1e-5, 1e-6);
  }
  // targets with ignored rows (-1), as the masked-LM objective makes them
  Tensor z = randn({37, 105}, 70, 2.0);
  Ids t{std::vector<int32_t>(37), {37}};
  for (int i = 0; i < 37; ++i) t.data[i] = i % 5 == 0 ? -1 : (i * 31) % 105;
  Tensor rc, rg;
  check_op(
      "cross_entropy", [&](auto& v) { return cross_entropy(v[0], t); }, {z}, {true}, 1e-5, 1e-6);
  Tensor lc = cross_entropy(z, t, &rc), lg = cross_entropy(on_gpu(z), t, &rg);
  REQUIRE_CLOSE(rg, rc, 1e-5, 1e-6);
  REQUIRE(rg.to_vector()[0] == 0);  // an ignored row adds nothing
}

TEST_CASE("cuda: LayerNorm, GELU and embedding", "[cuda]") {
  for (int64_t C : {128, 1000}) {
    check_op(
        "layer_norm C=" + std::to_string(C), [](auto& v) { return layer_norm(v[0], v[1], v[2]); },
        {randn({3, 17, C}, 80, 2.0), randn({C}, 81), randn({C}, 82)}, {true, true, true}, 1e-5,
        1e-5);
  }
  // GELU over ordinary and extreme inputs (exp(-2u) overflowing to inf for very negative x)
  Tensor x = kernel::binary(kernel::BinaryOp::mul, randn({5, 64}, 83), Tensor::full({64}, 6.0));
  check_op(
      "gelu", [](auto& v) { return gelu(v[0]); }, {x}, {true}, 1e-6, 1e-7);
  // repeated ids: the scatter-add sums several rows into one
  Ids ids{std::vector<int32_t>(4 * 30), {4, 30}};
  for (size_t i = 0; i < ids.data.size(); ++i) ids.data[i] = static_cast<int32_t>((i * 7) % 50);
  check_op(
      "embedding", [&](auto& v) { return embedding(v[0], ids); }, {randn({50, 16}, 84)}, {true},
      1e-6, 1e-7);
}

TEST_CASE("cuda: strided copies, slices and device transfers", "[cuda]") {
  Tensor x = randn({4, 6, 5}, 90);
  Tensor g = on_gpu(x);
  REQUIRE(g.to(Device::cpu).to_vector() == x.to_vector());  // a round trip is exact
  REQUIRE(g.permute({2, 0, 1}).contiguous().to_vector() ==
          x.permute({2, 0, 1}).contiguous().to_vector());
  REQUIRE(g.slice(1, 1, 6, 2).clone().to_vector() == x.slice(1, 1, 6, 2).clone().to_vector());
  REQUIRE(g.slice(2, 0, 1).expand({4, 6, 3}).contiguous().to_vector() ==
          x.slice(2, 0, 1).expand({4, 6, 3}).contiguous().to_vector());
  // slice's backward writes dy into a zero tensor's slice (a strided copy on the device)
  check_op(
      "slice", [](auto& v) { return slice(v[0], 2, 1, 4); }, {x}, {true}, 0, 0);
  check_op(
      "reshape of a transpose",
      [](auto& v) {
        return reshape(transpose(v[0], 0, 1), {6, 20});
      },
      {x}, {true}, 0, 0);
  Tensor dst = Tensor::zeros({4, 6, 5}, DType::f32, Device::cuda);
  dst.slice(1, 2, 4).copy_(x.slice(1, 0, 2));  // from the host into a strided device view
  Tensor want = Tensor::zeros({4, 6, 5});
  want.slice(1, 2, 4).copy_(x.slice(1, 0, 2));
  REQUIRE(dst.to_vector() == want.to_vector());
  dst.fill_(2.5);
  REQUIRE(dst.to_vector() == std::vector<double>(120, 2.5));
  REQUIRE(on_gpu(x).to(DType::f64).to_vector() == x.to(DType::f64).to_vector());
}

TEST_CASE("cuda: mixing devices in one op is an error naming both devices", "[cuda]") {
  Tensor a = randn({3}, 1), b = on_gpu(randn({3}, 2));
  REQUIRE_THROWS_WITH(add(a, b), Catch::Contains("same device") && Catch::Contains("cuda"));
}
