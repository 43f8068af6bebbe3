// Forward values of every kernel against independently computed values: small hand-worked
// cases, closed forms, or a naive loop written here.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tensor/fast_exp.h"
#include "tensor/ops.h"

using namespace poslab;
using Catch::Contains;
using namespace poslab::kernel;

static Tensor vec(std::vector<double> v, Shape s, DType t = DType::f32) {
  return Tensor::from_vector(v, s, t);
}

TEST_CASE("binary ops broadcast like NumPy", "[kernels]") {
  Tensor a = vec({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = vec({10, 20, 30}, {3});
  REQUIRE(binary(BinaryOp::add, a, b).to_vector() == std::vector<double>{11, 22, 33, 14, 25, 36});
  Tensor c = vec({2, 3}, {2, 1});
  REQUIRE(binary(BinaryOp::mul, a, c).to_vector() == std::vector<double>{2, 4, 6, 12, 15, 18});
  REQUIRE(binary(BinaryOp::sub, b, c).shape() == Shape{2, 3});
  REQUIRE(binary(BinaryOp::div, a, Tensor::scalar(2)).to_vector() ==
          std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3});
  REQUIRE(binary(BinaryOp::gt, a, vec({3}, {1})).to_vector() ==
          std::vector<double>{0, 0, 0, 1, 1, 1});
}

TEST_CASE("elementwise ops read non-contiguous inputs", "[kernels]") {
  Tensor a = vec({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1);  // [[1,4],[2,5],[3,6]]
  Tensor b = vec({1, 1, 1, 1, 1, 1}, {3, 2});
  REQUIRE(binary(BinaryOp::add, a, b).to_vector() == std::vector<double>{2, 5, 3, 6, 4, 7});
  REQUIRE(unary(UnaryOp::neg, a).to_vector() == std::vector<double>{-1, -4, -2, -5, -3, -6});
  Tensor e = unary(UnaryOp::exp, vec({0, 1}, {2}, DType::f64));
  REQUIRE(e.to_vector()[1] == Approx(std::exp(1.0)));
  REQUIRE(pow_scalar(vec({2, 3}, {2}), 3).to_vector() == std::vector<double>{8, 27});
  REQUIRE(affine(vec({1, 2}, {2}), 3, 1).to_vector() == std::vector<double>{4, 7});
  REQUIRE(where(vec({1, 0}, {2}), vec({5, 6}, {2}), vec({7, 8}, {2})).to_vector() ==
          std::vector<double>{5, 8});
}

TEST_CASE("sum, mean and max along axes", "[kernels]") {
  Tensor a = Tensor::arange(24).reshape({2, 3, 4});
  // sum over axis 1: out[i,k] = sum_j (12 i + 4 j + k) = 36 i + 12 + 3k
  Tensor s = sum(a, {1}, false);
  REQUIRE(s.shape() == Shape{2, 4});
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) REQUIRE(s.at({i, k}) == 36 * i + 12 + 3 * k);
  REQUIRE(sum(a, {}, false).item() == 276);  // 0+...+23
  REQUIRE(sum(a, {0, 1}, true).shape() == Shape{1, 1, 4});
  REQUIRE(sum(a, {0, 1}, false).to_vector() == std::vector<double>{60, 66, 72, 78});
  REQUIRE(sum(a.transpose(0, 2), {0}, false).shape() == Shape{3, 2});
  REQUIRE(sum_to(a, {3, 1}).to_vector() == std::vector<double>{60, 92, 124});
  Tensor m = max(vec({1, 7, 3, 9, 2, 4}, {2, 3}), 1, false);
  REQUIRE(m.to_vector() == std::vector<double>{7, 9});
  REQUIRE(max(vec({1, 7, 3, 9, 2, 4}, {2, 3}), 0, true).to_vector() ==
          std::vector<double>{9, 7, 4});
}

static std::vector<double> naive_matmul(const Tensor& a, const Tensor& b) {
  int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  std::vector<double> c(M * N, 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) c[m * N + n] += a.at({m, k}) * b.at({k, n});
  return c;
}

TEST_CASE("matmul equals a naive loop, also for transposed and batched operands", "[kernels]") {
  Generator g(1);
  Tensor a = Tensor::randn({5, 7}, g, 1, DType::f64), b = Tensor::randn({7, 3}, g, 1, DType::f64);
  auto ref = naive_matmul(a, b);
  auto got = matmul(a, b).to_vector();
  for (size_t i = 0; i < ref.size(); ++i) REQUIRE(got[i] == Approx(ref[i]).epsilon(1e-12));
  // transposed operands are read through strides
  Tensor at = Tensor::randn({7, 5}, g, 1, DType::f64), bt = Tensor::randn({3, 7}, g, 1, DType::f64);
  auto ref2 = naive_matmul(at.transpose(0, 1), bt.transpose(0, 1));
  auto got2 = matmul(at.transpose(0, 1), bt.transpose(0, 1)).to_vector();
  for (size_t i = 0; i < ref2.size(); ++i) REQUIRE(got2[i] == Approx(ref2[i]).epsilon(1e-12));
  // batch (2,1) x (3): broadcast to (2,3) batches
  Tensor A = Tensor::randn({2, 1, 4, 5}, g, 1, DType::f64),
         B = Tensor::randn({3, 5, 2}, g, 1, DType::f64);
  Tensor C = matmul(A, B);
  REQUIRE(C.shape() == Shape{2, 3, 4, 2});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      auto r =
          naive_matmul(A.slice(0, i, i + 1).reshape({4, 5}), B.slice(0, j, j + 1).reshape({5, 2}));
      auto c = C.slice(0, i, i + 1).slice(1, j, j + 1).reshape({8}).to_vector();
      for (int k = 0; k < 8; ++k) REQUIRE(c[k] == Approx(r[k]).epsilon(1e-12));
    }
  // 3-D by 2-D folds the batch into M
  Tensor X = Tensor::randn({2, 3, 5}, g, 1, DType::f64);
  Tensor Y = matmul(X, B.slice(0, 0, 1).reshape({5, 2}));
  REQUIRE(Y.shape() == Shape{2, 3, 2});
  REQUIRE_THROWS_WITH(matmul(a, a),
                      Contains("matmul: expected (...,M,K) @ (...,K,N), but got (5,7) @ (5,7)"));
}

TEST_CASE("linear is x W^T + b", "[kernels]") {
  Tensor x = vec({1, 2, 3, 4}, {2, 2}), w = vec({1, 0, 1, 1, 2, -1}, {3, 2}),
         b = vec({1, 2, 3}, {3});
  // row (1,2): W rows (1,0)->1, (1,1)->3, (2,-1)->0 ; plus bias
  REQUIRE(linear(x, w, b).to_vector() == std::vector<double>{2, 5, 3, 4, 9, 5});
  REQUIRE_THROWS_WITH(linear(x, w.transpose(0, 1), b),
                      Contains("linear: expected x (...,in) and W (out,in)"));
}

TEST_CASE("softmax and log-softmax are stable and match the closed form", "[kernels]") {
  Tensor x = vec({1, 2, 3, 1000, 1001, 1002}, {2, 3}, DType::f64);
  Tensor y = softmax(x);
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 3; ++j) REQUIRE(y.at({r, j}) == Approx(std::exp(1.0 + j) / z));
  Tensor ly = log_softmax(x);
  REQUIRE(ly.at({1, 2}) == Approx(3 - std::log(z)));
  REQUIRE(all_finite(softmax(vec({-1e30, 0, 1e30}, {3}))));
}

TEST_CASE("first_non_finite names the first tensor of a list holding NaN or inf", "[kernels]") {
  std::vector<Tensor> xs{Tensor::zeros({3, 4}), Tensor::full({5}, 1.0), Tensor::zeros({2, 2})};
  REQUIRE(first_non_finite(xs) == -1);
  REQUIRE(first_non_finite({}) == -1);
  xs[2].slice(0, 1, 2).fill_(std::nan(""));
  REQUIRE(first_non_finite(xs) == 2);
  xs[1].slice(0, 4, 5).fill_(-std::numeric_limits<double>::infinity());
  REQUIRE(first_non_finite(xs) == 1);
  // a strided view sees only its own elements
  REQUIRE(first_non_finite({xs[1].slice(0, 0, 4)}) == -1);
}

TEST_CASE("zero_ sets every tensor of a list to 0, views only where they look", "[kernels]") {
  Tensor a = Tensor::full({3, 4}, 2.0), b = Tensor::full({5}, std::nan("")),
         c = Tensor::full({4, 2}, 1.0);
  zero_({a, b, c.slice(0, 1, 3)});
  for (const Tensor& t : {a, b})
    for (double v : t.to_vector()) REQUIRE(v == 0);
  REQUIRE(c.to_vector() == std::vector<double>{1, 1, 0, 0, 0, 0, 1, 1});
}

TEST_CASE("cross-entropy of uniform logits is log V", "[kernels]") {
  Tensor logits = Tensor::zeros({4, 10}, DType::f64);
  Ids t{{0, 3, 9, 5}, {4}};
  Tensor probs, rows;
  REQUIRE(cross_entropy(logits, t, &probs, &rows).item() == Approx(std::log(10.0)));
  REQUIRE(rows.to_vector()[2] == Approx(std::log(10.0)));
  // a hand-worked row: logits (0, ln 3), target 1 -> -log(3/4)
  REQUIRE(
      cross_entropy(vec({0, std::log(3.0)}, {1, 2}, DType::f64), Ids{{1}, {1}}, nullptr).item() ==
      Approx(-std::log(0.75)));
  REQUIRE_THROWS_WITH(cross_entropy(logits, Ids{{0, 3, 10, 5}, {4}}, nullptr),
                      Contains("target 10 at row 2 is outside [0, 10)"));
}

TEST_CASE("layer norm normalises each row", "[kernels]") {
  Tensor x = vec({1, 2, 3, 4, -1, -1, -1, 5}, {2, 4}, DType::f64);
  Tensor w = vec({1, 1, 1, 1}, {4}, DType::f64), b = vec({0, 0, 0, 10}, {4}, DType::f64);
  Tensor y = layer_norm(x, w, b, 1e-5, nullptr, nullptr);
  // row 0: mean 2.5, var 1.25
  double rs = 1 / std::sqrt(1.25 + 1e-5);
  REQUIRE(y.at({0, 0}) == Approx(-1.5 * rs));
  REQUIRE(y.at({0, 3}) == Approx(1.5 * rs + 10));
  // row 1: mean 0.5, var 6.75
  REQUIRE(y.at({1, 3}) == Approx(4.5 / std::sqrt(6.75 + 1e-5) + 10));
}

TEST_CASE("gelu matches the tanh formula", "[kernels]") {
  for (double v : {-3.0, -0.5, 0.0, 0.7, 2.0}) {
    double ref = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    REQUIRE(gelu(vec({v}, {1})).item() == Approx(ref).margin(1e-6));
  }
}

TEST_CASE("embedding gathers rows and scatter-adds repeated ids", "[kernels]") {
  Tensor table = Tensor::arange(6).reshape({3, 2});
  Ids ids{{2, 0, 2}, {3}};
  REQUIRE(embedding(table, ids).to_vector() == std::vector<double>{4, 5, 0, 1, 4, 5});
  Tensor d = embedding_backward(Tensor::ones({3, 2}), ids, 3);
  REQUIRE(d.to_vector() == std::vector<double>{1, 1, 0, 0, 2, 2});
  REQUIRE_THROWS_WITH(
      embedding(table, Ids{{0, 3}, {2}}),
      Contains("embedding: index 3 at position 1 is out of range for a table of 3 rows"));
}

TEST_CASE("exp_fast is within 3e-7 of exp over the whole float range, limits included",
          "[tensor][exp]") {
  double worst = 0;
  // every 97th float between -86.5 and 88.72 (about 10 million values)
  for (float x = -86.5f; x < 88.72f;) {
    double want = std::exp(double(x));
    worst = std::max(worst, std::abs(double(exp_fast(x)) - want) / want);
    uint32_t bits = std::bit_cast<uint32_t>(x);
    bits = x < 0 ? (bits > 97 + 0x80000000u ? bits - 97 : 0) : bits + 97;
    x = std::bit_cast<float>(bits);
  }
  INFO("worst relative error " << worst);
  REQUIRE(worst < 3e-7);
  REQUIRE(exp_fast(0.f) == 1.f);
  REQUIRE(exp_fast(-100.f) == 0.f);
  REQUIRE(exp_fast(-INFINITY) == 0.f);
  REQUIRE(std::isinf(exp_fast(89.f)));
  REQUIRE(std::isinf(exp_fast(INFINITY)));
  REQUIRE(std::isfinite(exp_fast(88.7f)));
  REQUIRE(std::isnan(exp_fast(NAN)));
}

// The kernels call exp_fast inside `omp simd` loops, where the compiler turns its selects into
// vector blends or masks: that code, not the scalar calls above, is what runs. Each lane must
// give what a scalar call gives, out-of-range and NaN lanes next to ordinary ones.
TEST_CASE("exp_fast vectorised gives, lane by lane, what it gives one call at a time",
          "[tensor][exp]") {
  std::vector<float> x;
  for (float v = -120.f; v < 120.f; v += 0.0137f) x.push_back(v);
  for (float v : {NAN, INFINITY, -INFINITY, -86.5f, std::nextafter(-86.5f, -INFINITY), 88.7228f,
                  std::nextafter(88.7228f, INFINITY), 1e30f, -1e30f, 0.f, -0.f, 1e-30f})
    x.insert(x.begin() + static_cast<long>(x.size() / 2), v);  // amid ordinary lanes
  std::vector<float> y(x.size());
  const float* px = x.data();
  float* py = y.data();
  const int64_t n = static_cast<int64_t>(x.size());
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) py[i] = exp_fast(px[i]);
  for (size_t i = 0; i < x.size(); ++i) {
    volatile float xi = x[i];  // a scalar call, not folded into the loop above
    float want = exp_fast(xi);
    INFO("x = " << x[i] << ": vector " << y[i] << ", scalar " << want);
    if (std::isnan(want))
      REQUIRE(std::isnan(y[i]));
    else
      REQUIRE(std::bit_cast<uint32_t>(y[i]) == std::bit_cast<uint32_t>(want));
  }
}
