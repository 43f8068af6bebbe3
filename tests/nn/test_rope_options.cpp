// RoPE's layout and fraction in a whole model: the half layout is the interleaved one with
// permuted q/k rows, and cached decoding equals the full forward for every combination of
// layout, fraction and scaling.
#include <catch2/catch.hpp>

#include "nn/gpt.h"
#include "tests/support/gradcheck.h"

using namespace poslab;
using poslab::testing::max_diff;

// H = 2 heads of D = 12 dims, T0 = 4: windows past T0 make every scaling act.
static GPTConfig rope_model(RopeLayout layout, double fraction) {
  GPTConfig c;
  c.vocab_size = 7, c.n_layer = 2, c.n_head = 2, c.n_embd = 24, c.block_size = 4;
  c.pe.kind = PeKind::rope, c.pe.rope_layout = layout, c.pe.rope_fraction = fraction,
  c.dtype = DType::f64;
  return c;
}

// Larger weights than the 0.02 init, so that attention is far from uniform.
static void randomize(GPT& m, uint64_t seed) {
  NoGrad ng;
  Generator g(seed);
  for (auto& p : m.parameters())
    p.tensor.copy_(Tensor::randn(p.tensor.shape(), g, 0.5, DType::f64));
}

// pi(d): the interleaved dim that plays the role of dim d of a half-layout head (rope.h):
// pi(i) = 2i and pi(i + r/2) = 2i + 1 for i < r/2; dims from r on stay where they are.
static int64_t interleaved_dim(int64_t d, int64_t r) {
  if (d >= r) return d;
  return d < r / 2 ? 2 * d : 2 * (d - r / 2) + 1;
}

// Copies `from` (interleaved) into `to` (half layout), with the q and k rows of every c_attn
// weight and bias permuted head by head: to row hD + d = from row hD + pi(d).
static void copy_permuted(const GPT& from, GPT& to) {
  NoGrad ng;
  const GPTConfig& c = from.config();
  int64_t C = c.n_embd, H = c.n_head, D = C / H, r = rope_rotated_dims(D, c.pe.rope_fraction);
  auto src = from.parameters(), dst = to.parameters();
  for (size_t p = 0; p < src.size(); ++p) {
    std::vector<double> v = src[p].tensor.to_vector();
    if (src[p].name.find("c_attn") != std::string::npos) {
      std::vector<double> w = v;
      int64_t cols = src[p].tensor.dim() == 2 ? src[p].tensor.size(1) : 1;
      for (int64_t row = 0; row < 2 * C; ++row) {  // q rows [0, C), k rows [C, 2C)
        int64_t base = row - row % D, d = row % D;
        int64_t from_row = base + interleaved_dim(d, r);
        for (int64_t j = 0; j < cols; ++j) w[row * cols + j] = v[from_row * cols + j];
      }
      v = w;
    }
    dst[p].tensor.copy_(Tensor::from_vector(v, src[p].tensor.shape(), DType::f64));
  }
}

static const std::vector<ScalingKind> kScalings{ScalingKind::none, ScalingKind::linear,
                                                ScalingKind::ntk, ScalingKind::dynamic,
                                                ScalingKind::yarn};

TEST_CASE("RoPE half layout is interleaved with permuted q/k rows", "[nn][posenc]") {
  Ids ids{{1, 4, 2, 6, 0, 3, 3, 5, 1, 2, 6, 4, 0, 5, 2, 1}, {2, 8}};
  for (double f : {1.0, 0.5, 1.0 / 3}) {  // r = 12, 6, 4
    GPT inter(rope_model(RopeLayout::interleaved, f), 3), half(rope_model(RopeLayout::half, f), 3),
        unpermuted(rope_model(RopeLayout::half, f), 3);
    randomize(inter, 4);
    copy_permuted(inter, half);
    {
      NoGrad ng;  // the same weights unpermuted: a different model (the test can fail)
      std::vector<NamedParam> a = inter.parameters(), b = unpermuted.parameters();
      for (size_t p = 0; p < a.size(); ++p) b[p].tensor.copy_(a[p].tensor);
    }
    for (ScalingKind sk : kScalings) {
      Interventions iv;
      iv.rope_scaling = {sk, 0, 4};
      NoGrad ng;
      Tensor want = inter.logits(ids, iv);
      double gap = max_diff(half.logits(ids, iv), want),
             wrong = max_diff(unpermuted.logits(ids, iv), want);
      INFO("f = " << f << ", scaling " << scaling_name(sk) << ": max logit difference " << gap
                  << ", unpermuted " << wrong);
      REQUIRE(gap < 1e-11);  // f64; only the order of the q.k sums differs
      REQUIRE(wrong > 1e-3);
    }
  }
}

TEST_CASE("cached decoding equals the full forward, every RoPE layout x fraction x scaling",
          "[nn][posenc]") {
  std::vector<int32_t> toks{3, 1, 4, 1, 5, 2, 6, 5, 3, 5};
  for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half})
    for (double f : {1.0, 0.5})
      for (ScalingKind sk : kScalings) {
        GPT m(rope_model(layout, f), 5);
        randomize(m, 6);
        // a fixed s = 2.5 for the methods whose s would otherwise follow the window length
        // (the full forward and each decoding step see different lengths); dynamic follows
        // each row's own length by definition
        Interventions iv;
        iv.rope_scaling = {sk, sk == ScalingKind::dynamic ? 0 : 2.5, 4};
        KVCache cache = m.new_cache(16);
        double worst = 0;
        Tensor full;
        {
          NoGrad ng;
          full = m.logits(Ids{toks, {1, int64_t(toks.size())}}, iv);
        }
        for (size_t t = 0; t < toks.size(); ++t) {
          Tensor step = m.decode(Ids{{toks[t]}, {1, 1}}, cache, iv.rope_scaling);  // (1,1,V)
          for (int v = 0; v < 7; ++v)
            worst = std::max(worst, std::abs(step.at({0, 0, v}) - full.at({0, int64_t(t), v})));
        }
        INFO(rope_layout_name(layout)
             << " f = " << f << " scaling " << scaling_name(sk) << ": max difference " << worst);
        REQUIRE(worst < 1e-10);
      }
}
