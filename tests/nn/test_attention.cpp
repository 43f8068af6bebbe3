// The fused attention op against the loop reference (attention_reference.cpp: outputs and
// every gradient, the bias table's included), over several row blocks and decoding offsets;
// and the schemes' terms reaching it. Its finite-difference checks: gradcheck_nn.cpp; the
// window and the log scale: test_attention_interventions.cpp.
#include <omp.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "nn/attention_op.h"
#include "posenc/alibi.h"
#include "posenc/rope.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using Catch::Contains;
using poslab::testing::rand_leaf;

static void require_close(const Tensor& a, const Tensor& b, double tol) {
  REQUIRE(a.shape() == b.shape());
  auto x = a.to_vector(), y = b.to_vector();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  INFO("max abs difference " << worst);
  REQUIRE(worst <= tol);
}

// The fused op and the loop reference on the same leaves (queries Tq rows at q_pos0 =
// Tk - Tq, keys Tk): outputs, then dq, dk, dv (and dbias when learned) for the loss
// sum(out * w) with a fixed random w, all within tol.
static void require_matches_reference(int64_t Tq, int64_t Tk, int64_t H, AttentionOptions o,
                                      uint64_t seed, double tol) {
  Tensor q = rand_leaf({2, Tq, H, 4}, seed), k = rand_leaf({2, Tk, H, 4}, seed + 1),
         v = rand_leaf({2, Tk, H, 4}, seed + 2);
  o.q_pos0 = Tk - Tq;
  Tensor a = attention(q, k, v, o), r = attention_reference(q, k, v, o);
  require_close(a, r, tol);
  Generator g(seed + 3);
  Tensor w = Tensor::randn(a.shape(), g, 1, DType::f64);
  std::vector<Tensor> leaves{q, k, v};
  if (o.rel_bias.requires_grad()) leaves.push_back(o.rel_bias);
  backward(sum(mul(a, w)));
  std::vector<Tensor> fused;
  for (const Tensor& x : leaves) fused.push_back(x.grad().clone());
  zero_grad(leaves);
  backward(sum(mul(r, w)));
  for (size_t i = 0; i < leaves.size(); ++i) require_close(fused[i], leaves[i].grad(), tol);
}

TEST_CASE("fused attention equals the loop reference, forward and backward", "[attention][nn]") {
  for (bool causal : {true, false})
    for (int bias : {0, 1, 2}) {  // none, ALiBi's table, a learned table
      INFO("causal " << causal << " bias " << bias);
      AttentionOptions o;
      o.causal = causal;
      if (bias == 1) o.rel_bias = alibi_bias(alibi_slopes(3), 0, 7, 7);
      if (bias == 2) o.rel_bias = rand_leaf({3, 13}, 40);
      require_matches_reference(7, 7, 3, o, 1, 1e-12);
    }
}

TEST_CASE("q, k, v as views of one qkv: gradients land in its one buffer, the bits of leaves",
          "[attention][nn]") {
  // The module's q, k, v are slices of one (B,T,3C) projection; in the backward each slice
  // adds its gradient into its block of qkv's buffer (slice's backward). The result must equal,
  // bit for bit, attention on three separate leaves holding the same values. T = 100: three
  // row blocks (48, 48, 4), so dk and dv are summed over blocks.
  for (DType dt : {DType::f32, DType::f64})
    for (bool causal : {true, false}) {
      INFO("dtype " << dtype_name(dt) << " causal " << causal);
      const int64_t B = 2, T = 100, H = 2, D = 8, C = H * D;
      Generator g(61);
      Tensor qkv = Tensor::randn({B, T, 3 * C}, g, 1, dt),
             table = Tensor::randn({H, 2 * T - 1}, g, 1, dt);
      qkv.set_requires_grad(true), table.set_requires_grad(true);
      Tensor w = Tensor::randn({B, T, H, D}, g, 1, dt);
      AttentionOptions o;
      o.causal = causal;
      o.rel_bias = table;
      auto block = [&](int64_t i) {
        return reshape(slice(qkv, 2, i * C, (i + 1) * C), {B, T, H, D});
      };
      Tensor views = attention(block(0), block(1), block(2), o);
      backward(sum(mul(views, w)));
      const std::vector<double> dqkv = qkv.grad().to_vector();
      std::vector<Tensor> leaves;
      for (int64_t i = 0; i < 3; ++i) {
        leaves.push_back(
            qkv.detach().slice(2, i * C, (i + 1) * C).contiguous().reshape({B, T, H, D}));
        leaves.back().set_requires_grad(true);
      }
      Tensor separate = attention(leaves[0], leaves[1], leaves[2], o);
      backward(sum(mul(separate, w)));
      CHECK(views.to_vector() == separate.to_vector());
      for (int64_t i = 0; i < 3; ++i) {  // block i of qkv's gradient is leaf i's
        std::vector<double> got, want = leaves[i].grad().to_vector();
        for (int64_t r = 0; r < B * T; ++r)
          got.insert(got.end(), dqkv.begin() + r * 3 * C + i * C,
                     dqkv.begin() + r * 3 * C + (i + 1) * C);
        CHECK(got == want);
      }
    }
}

TEST_CASE("attention shares its heads out whole: the same bits on 1, 2, 3 and 7 threads",
          "[attention][nn]") {
  // 30 heads (B 6 x H 5), at least 4 per thread for every team here, so each thread first takes
  // its own range of heads and then the others' leftovers (WorkRanges, tensor/parallel.h): a
  // head computed twice or not at all would change the output or the gradients. T = 60: two
  // row blocks.
  for (DType dt : {DType::f32, DType::f64}) {
    INFO("dtype " << dtype_name(dt));
    const int64_t B = 6, T = 60, H = 5, D = 8;
    Generator g(71);
    Tensor q = Tensor::randn({B, T, H, D}, g, 1, dt), k = Tensor::randn({B, T, H, D}, g, 1, dt),
           v = Tensor::randn({B, T, H, D}, g, 1, dt),
           table = Tensor::randn({H, 2 * T - 1}, g, 1, dt),
           w = Tensor::randn({B, T, H, D}, g, 1, dt);
    for (Tensor* x : {&q, &k, &v, &table}) x->set_requires_grad(true);
    AttentionOptions o;
    o.causal = true;
    o.rel_bias = table;
    auto run = [&](int threads) {
      const int before = omp_get_max_threads();
      omp_set_num_threads(threads);
      zero_grad({q, k, v, table});
      Tensor out = attention(q, k, v, o);
      backward(sum(mul(out, w)));
      std::vector<std::vector<double>> r{out.to_vector()};
      for (const Tensor& x : {q, k, v, table}) r.push_back(x.grad().to_vector());
      omp_set_num_threads(before);
      return r;
    };
    const auto one = run(1);
    for (int threads : {2, 3, 7}) {
      INFO("threads " << threads);
      CHECK(run(threads) == one);
    }
    // and one thread's answer is attention's: the loop reference, within rounding
    zero_grad({q, k, v, table});
    Tensor r = attention_reference(q, k, v, o);
    backward(sum(mul(r, w)));
    const double tol = dt == DType::f32 ? 1e-4 : 1e-12;
    auto close = [&](const std::vector<double>& a, const Tensor& b) {
      auto y = b.to_vector();
      double worst = 0;
      for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - y[i]));
      return worst;
    };
    CHECK(close(one[0], r) <= tol);
    CHECK(close(one[1], q.grad()) <= tol);
    CHECK(close(one[2], k.grad()) <= tol);
    CHECK(close(one[3], v.grad()) <= tol);
    CHECK(close(one[4], table.grad()) <= tol);
  }
}

TEST_CASE("fused attention over several row blocks and decoding offsets equals the reference",
          "[attention][nn]") {
  // T = 150: four row blocks of 48, the last partial; then 70 queries at 80.. over 150 keys
  for (bool causal : {true, false}) {
    AttentionOptions o;
    o.causal = causal;
    o.rel_bias = rand_leaf({2, 299}, 41);
    require_matches_reference(150, 150, 2, o, 21, 1e-11);
    o.rel_bias = rand_leaf({2, 219}, 42);
    require_matches_reference(70, 150, 2, o, 22, 1e-11);
  }
}

TEST_CASE("a decoding step's rows equal the same rows of the whole window", "[attention][nn]") {
  // f32, T = 150 > the 48-row block: the last 10 rows on their own, at positions 140..149,
  // against the whole window's rows 140..149 (whose scores hold the same values)
  Generator g(9);
  Tensor q = Tensor::randn({1, 150, 2, 8}, g), k = Tensor::randn({1, 150, 2, 8}, g),
         v = Tensor::randn({1, 150, 2, 8}, g);
  NoGrad ng;
  std::vector<double> slopes = alibi_slopes(2);
  AttentionOptions all;
  all.rel_bias = alibi_bias(slopes, 0, 150, 150, DType::f32);
  AttentionOptions tail = all;
  tail.q_pos0 = 140;
  tail.rel_bias = alibi_bias(slopes, 140, 10, 150, DType::f32);
  Tensor whole = attention(q, k, v, all);
  require_close(attention(q.slice(1, 140, 150), k, v, tail), whole.slice(1, 140, 150), 1e-5);
  // and the whole window agrees with the loop reference in f64
  auto f64 = [](const Tensor& x) { return x.to(DType::f64); };
  AttentionOptions ref = all;
  ref.rel_bias = f64(all.rel_bias);
  require_close(whole, attention_reference(f64(q), f64(k), f64(v), ref).to(DType::f32), 1e-5);
}

TEST_CASE("ALiBi's table holds -m |j - P| shifted per head, for any query offset", "[nn][posenc]") {
  std::vector<double> m = alibi_slopes(3);
  for (int64_t q_pos0 : {0, 5, 1000000}) {
    Tensor t = alibi_bias(m, q_pos0, 4, 6);  // (3, 9): relative positions -(3 + q_pos0) ..
    REQUIRE(t.shape() == Shape{3, 9});
    int64_t r_lo = -3 - q_pos0, r_hi = 5 - q_pos0;
    int64_t r_near = r_lo > 0 ? r_lo : r_hi < 0 ? -r_hi : 0;
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t c = 0; c < 9; ++c)
        REQUIRE(t.at({h, c}) == -m[h] * (std::abs(r_lo + c) - r_near));
  }
}

TEST_CASE("the attention op names what is wrong with its options", "[attention][nn][errors]") {
  Tensor q = Tensor::zeros({1, 4, 2, 8}, DType::f64);
  AttentionOptions o;
  o.rel_bias = Tensor::zeros({2, 6}, DType::f64);
  REQUIRE_THROWS_WITH(attention(q, q, q, o),
                      Contains("rel_bias (H, Tq+Tk-1) = (2,7)") && Contains("but got (2,6)"));
  o.rel_bias = Tensor();
  o.row_freqs = Tensor::zeros({4, 4}, DType::f64);
  Tensor leaf = rand_leaf({1, 4, 2, 8}, 1);
  REQUIRE_THROWS_WITH(attention(leaf, q, q, o), Contains("evaluation only"));
}

TEST_CASE("keys after every query get zero gradients, the others the reference's",
          "[attention][nn]") {
  // Causal, queries at 0..99 (three row blocks) over 130 keys: no query sees keys 100..129.
  // The backward sums dK and dV over the row blocks, the first block it runs writing them; the
  // rows no block reaches must still be written (zeros), in f64 and in f32 (our sgemm).
  for (DType dt : {DType::f64, DType::f32}) {
    INFO(dtype_name(dt));
    Tensor q = rand_leaf({2, 100, 2, 32}, 61), k = rand_leaf({2, 130, 2, 32}, 62),
           v = rand_leaf({2, 130, 2, 32}, 63);
    if (dt == DType::f32)
      for (Tensor* x : {&q, &k, &v}) *x = x->detach().to(dt).set_requires_grad(true);
    AttentionOptions o;  // q_pos0 = 0
    Tensor a = attention(q, k, v, o);
    {  // NaN in the blocks the allocator hands out next, where the backward puts dK and dV
      std::vector<Tensor> poison;
      for (int i = 0; i < 8; ++i) poison.push_back(Tensor::full(k.shape(), NAN, dt));
    }
    backward(sum(a));
    Tensor dk = k.grad().clone(), dv = v.grad().clone();
    for (const Tensor& unseen : {dk.slice(1, 100, 130), dv.slice(1, 100, 130)})
      for (double x : unseen.to_vector()) REQUIRE(x == 0);
    zero_grad({q, k, v});
    auto f64 = [](const Tensor& x) { return x.detach().to(DType::f64).set_requires_grad(true); };
    Tensor q64 = f64(q), k64 = f64(k), v64 = f64(v);
    backward(sum(attention_reference(q64, k64, v64, o)));
    const double tol = dt == DType::f32 ? 1e-4 : 1e-12;
    require_close(dk.to(DType::f64), k64.grad(), tol);
    require_close(dv.to(DType::f64), v64.grad(), tol);
  }
}
