// The evaluation-time interventions of the attention op (attention_op.h: window, log scale):
// the fused kernels against the loop reference (attention_reference.cpp) on every scheme's
// terms, finite-difference checks, and the identities that tie each option to "off".
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "nn/attention_op.h"
#include "posenc/alibi.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using Catch::Contains;
using poslab::testing::max_diff;
using poslab::testing::named;
using poslab::testing::rand_leaf;

namespace {

// The scheme's terms a test hands the op: none, ALiBi's table (a fixed bias), a learned table
// (T5's kind, with a gradient).
enum class Terms { plain, alibi, learned };

Tensor table_for(Terms t, int64_t H, int64_t q_pos0, int64_t Tq, int64_t Tk, uint64_t seed) {
  if (t == Terms::alibi) return alibi_bias(alibi_slopes(H), q_pos0, Tq, Tk, DType::f64);
  if (t == Terms::learned) return rand_leaf({H, Tq + Tk - 1}, seed, 0.5);
  return Tensor();
}

// The fused op and the loop reference on the same f64 leaves (Tq queries at q_pos0 = Tk - Tq),
// outputs and the gradients of sum(out * w) of q, k, v (and a learned table), within 1e-11:
// both compute in double, in different orders.
void require_matches_reference(int64_t Tq, int64_t Tk, AttentionOptions o, Terms terms,
                               uint64_t seed) {
  const int64_t H = 2;
  Tensor q = rand_leaf({2, Tq, H, 8}, seed), k = rand_leaf({2, Tk, H, 8}, seed + 1),
         v = rand_leaf({2, Tk, H, 8}, seed + 2);
  o.q_pos0 = Tk - Tq;
  o.rel_bias = table_for(terms, H, o.q_pos0, Tq, Tk, seed + 3);
  Tensor a = attention(q, k, v, o), r = attention_reference(q, k, v, o);
  CHECK(max_diff(a, r) <= 1e-11);
  Generator g(seed + 4);
  Tensor w = Tensor::randn(a.shape(), g, 1, DType::f64);
  std::vector<Tensor> leaves{q, k, v};
  if (terms == Terms::learned) leaves.push_back(o.rel_bias);
  backward(sum(mul(a, w)));
  std::vector<Tensor> fused;
  for (const Tensor& x : leaves) fused.push_back(x.grad().clone());
  zero_grad(leaves);
  backward(sum(mul(r, w)));
  for (size_t i = 0; i < leaves.size(); ++i) {
    INFO("gradient of input " << i << " (q, k, v, table)");
    CHECK(max_diff(fused[i], leaves[i].grad()) <= 1e-11);
  }
}

}  // namespace

TEST_CASE("fused attention equals the loop reference with a window and a log scale",
          "[attention][nn]") {
  // Tq = 100: three row blocks of 48 (the last partial), so a window of 20 leaves each block
  // only its own keys; q_pos0 = 30 with Tq = 70 over 100 keys (a decoding offset)
  for (bool causal : {true, false})
    for (Terms terms : {Terms::plain, Terms::alibi, Terms::learned})
      for (int64_t window : {0, 1, 20, 200})
        for (int64_t T0 : {0, 2, 16}) {
          INFO("causal " << causal << " terms " << int(terms) << " window " << window << " T0 "
                         << T0);
          AttentionOptions o;
          o.causal = causal, o.window = window, o.log_scale_len = T0;
          require_matches_reference(100, 100, o, terms, 10);
          require_matches_reference(70, 100, o, terms, 20);
        }
}

TEST_CASE("fused attention with per-row frequencies equals the loop reference under options",
          "[attention][nn]") {
  // RoPE with per-row frequencies (dynamic scaling): forward only, f64 and f32
  NoGrad ng;
  const int64_t Tq = 60, Tk = 100, H = 2, D = 8;
  Generator g(31);
  Tensor freqs = Tensor::uniform({Tq, D / 2}, g, 0.001, 1.0, DType::f64);
  Tensor q = Tensor::randn({1, Tq, H, D}, g, 1, DType::f64),
         k = Tensor::randn({1, Tk, H, D}, g, 1, DType::f64),
         v = Tensor::randn({1, Tk, H, D}, g, 1, DType::f64);
  for (bool causal : {true, false})
    for (int64_t window : {0, 7, 50})
      for (int64_t T0 : {0, 4}) {
        INFO("causal " << causal << " window " << window << " T0 " << T0);
        AttentionOptions o;
        o.causal = causal, o.window = window, o.log_scale_len = T0, o.q_pos0 = Tk - Tq;
        o.row_freqs = freqs;
        Tensor r = attention_reference(q, k, v, o);
        CHECK(max_diff(attention(q, k, v, o), r) <= 1e-11);
        Tensor a32 = attention(q.to(DType::f32), k.to(DType::f32), v.to(DType::f32), o);
        CHECK(max_diff(a32.to(DType::f64), r) <= 1e-5);  // float scores and softmax
      }
}

TEST_CASE("f32 attention with a window and a log scale stays near the f64 reference",
          "[attention][nn]") {
  // f32 runs our sgemm with the causal band shifted to each block's first key
  Generator g(41);
  const int64_t T = 150, H = 2, D = 32;
  Tensor q = Tensor::randn({2, T, H, D}, g), k = Tensor::randn({2, T, H, D}, g),
         v = Tensor::randn({2, T, H, D}, g), w = Tensor::randn({2, T, H, D}, g);
  for (Tensor* x : {&q, &k, &v}) x->set_requires_grad(true);
  for (bool causal : {true, false}) {
    INFO("causal " << causal);
    AttentionOptions o;
    o.causal = causal, o.window = 37, o.log_scale_len = 8;
    o.rel_bias = alibi_bias(alibi_slopes(H), 0, T, T, DType::f32);
    zero_grad({q, k, v});
    Tensor a = attention(q, k, v, o);
    backward(sum(mul(a, w)));
    auto f64 = [](const Tensor& x) { return x.detach().to(DType::f64).set_requires_grad(true); };
    Tensor q64 = f64(q), k64 = f64(k), v64 = f64(v);
    AttentionOptions o64 = o;
    o64.rel_bias = o.rel_bias.to(DType::f64);
    Tensor r = attention_reference(q64, k64, v64, o64);
    backward(sum(mul(r, w.to(DType::f64))));
    // float rounding of scores (D = 32 terms), exp and sums over up to 73 keys
    CHECK(max_diff(a.to(DType::f64), r) <= 1e-5);
    CHECK(max_diff(q.grad().to(DType::f64), q64.grad()) <= 1e-4);
    CHECK(max_diff(k.grad().to(DType::f64), k64.grad()) <= 1e-4);
    CHECK(max_diff(v.grad().to(DType::f64), v64.grad()) <= 1e-4);
  }
}

TEST_CASE("gradcheck: ops: attention with a window and with a log scale",
          "[gradcheck][attention]") {
  // Tk = 9 keys, Tq = 7 queries at q_pos0 = 2; window 3 (a row sees at most 3 keys causal, 5
  // not); log scale T0 = 2, so every row that sees 3 or more keys has lambda > 1
  for (bool causal : {true, false})
    for (int mode : {0, 1, 2}) {  // window, log scale, both
      AttentionOptions o;
      o.causal = causal, o.q_pos0 = 2;
      o.window = mode != 1 ? 3 : 0;
      o.log_scale_len = mode != 0 ? 2 : 0;
      Tensor q = rand_leaf({1, 7, 2, 4}, 51), k = rand_leaf({1, 9, 2, 4}, 52),
             v = rand_leaf({1, 9, 2, 4}, 53), table = rand_leaf({2, 15}, 54, 0.5);
      const char* what[] = {"window 3", "log scale T0 2", "window 3, log scale T0 2"};
      CHECK_GRADCHECK(
          std::string("ops: attention ") + what[mode] + (causal ? " causal" : " no mask"),
          [o](auto& x) {
            AttentionOptions oo = o;
            oo.rel_bias = x[3];
            return attention(x[0], x[1], x[2], oo);
          },
          {q, k, v, table}, named({"q", "k", "v", "rel_bias"}));
    }
}

TEST_CASE("a window that covers every key, or a log scale past every row, changes no bit",
          "[attention][nn]") {
  Generator g(61);
  const int64_t T = 100, H = 2, D = 32;
  for (DType dt : {DType::f32, DType::f64})
    for (bool causal : {true, false}) {
      INFO(dtype_name(dt) << " causal " << causal);
      Tensor q = Tensor::randn({1, T, H, D}, g, 1, dt), k = Tensor::randn({1, T, H, D}, g, 1, dt),
             v = Tensor::randn({1, T, H, D}, g, 1, dt);
      NoGrad ng;
      AttentionOptions off;
      off.causal = causal;
      off.rel_bias = alibi_bias(alibi_slopes(H), 0, T, T, dt);
      const Tensor base = attention(q, k, v, off);
      // W >= L: no key is cut, but the kernels take the window's path (per-block operands);
      // the same products over the same keys, so the same values up to the sums' order
      AttentionOptions wide = off;
      wide.window = T;
      CHECK(max_diff(attention(q, k, v, wide), base) <= (dt == DType::f32 ? 1e-6 : 1e-14));
      // T0 >= L: every lambda is 1, and a row with lambda 1 is not multiplied: the same bits
      AttentionOptions long_t0 = off;
      long_t0.log_scale_len = T;
      CHECK(attention(q, k, v, long_t0).to_vector() == base.to_vector());
      // W <= T0: n_i <= W <= T0 (causal; without the mask n_i <= 2W - 1), so log scale on a
      // short window changes nothing either
      AttentionOptions short_w = off;
      short_w.window = 10;
      const Tensor windowed = attention(q, k, v, short_w);
      short_w.log_scale_len = causal ? 10 : 19;
      CHECK(attention(q, k, v, short_w).to_vector() == windowed.to_vector());
      // and the log scale does change a row that sees more than T0 keys
      long_t0.log_scale_len = 16;
      CHECK(max_diff(attention(q, k, v, long_t0), base) > 1e-3);
    }
}

TEST_CASE("the attention op names a window or a log scale it cannot take", "[attention][errors]") {
  Tensor q = Tensor::zeros({1, 4, 2, 8}, DType::f64);
  AttentionOptions o;
  o.window = -2;
  REQUIRE_THROWS_WITH(attention(q, q, q, o),
                      Contains("expected window >= 0") && Contains("but got window = -2"));
  o.window = 0, o.log_scale_len = -1;
  REQUIRE_THROWS_WITH(attention(q, q, q, o), Contains("log_scale_len = 0 (off) or >= 2") &&
                                                 Contains("but got log_scale_len = -1"));
  o.log_scale_len = 1;
  REQUIRE_THROWS_WITH(attention(q, q, q, o), Contains("but got log_scale_len = 1"));
}
