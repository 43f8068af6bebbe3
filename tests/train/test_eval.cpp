// The evaluation of train/eval.h beyond the protocol checks of test_train.cpp: per-target
// losses, batching, and the sliding window checked against a forward pass on the context the
// design gives each target (computed here, target by target, without the code under test).
#include <catch2/catch.hpp>
#include <cmath>

#include "train/eval.h"

using namespace poslab;
using Catch::Contains;

namespace {

constexpr int64_t kVocab = 11;

GPT toy_model(PeKind pe, int64_t T0) {
  GPTConfig c;
  c.vocab_size = kVocab;
  c.n_embd = 16, c.n_layer = 2, c.n_head = 2, c.block_size = T0;
  c.pe.kind = pe;
  c.embedding = EmbeddingKind::scaled;
  return GPT(c, 5);
}

std::vector<uint16_t> toy_tokens(int64_t n) {
  std::vector<uint16_t> t(n);
  uint32_t x = 12345;
  for (auto& v : t) x = x * 1103515245u + 12345u, v = static_cast<uint16_t>((x >> 16) % kVocab);
  return t;
}

// The loss of target t (predicting tokens[t]) by one forward pass over tokens[o .. t-1].
double direct_loss(const GPT& model, const std::vector<uint16_t>& tokens, int64_t o, int64_t t) {
  NoGrad no_grad;
  int64_t T = t - o;
  Ids x{std::vector<int32_t>(T), {1, T}}, y{std::vector<int32_t>(T), {1, T}};
  for (int64_t i = 0; i < T; ++i) x.data[i] = tokens[o + i], y.data[i] = tokens[o + i + 1];
  Tensor rows;
  model.loss(x, y, &rows);
  return rows.to_vector().back();
}

// The window start the design gives target t, for T0 = 8 (stride 2) on 30 tokens (targets
// 1..29), written out by hand: targets 1-8 from the window at 0 (all of its targets); then
// the window at 2k scores its last two targets 2k+7, 2k+8: targets 9,10 -> 2; 11,12 -> 4;
// ...; 27,28 -> 20. The window at 22 would need token 30: the last window ends at token 29
// instead (offset 21) and scores what is left, target 29.
int64_t hand_offset(int64_t t) {
  if (t <= 8) return 0;
  if (t == 29) return 21;
  return t % 2 == 1 ? t - 7 : t - 8;
}

}  // namespace

TEST_CASE("sliding window: each target's loss is that of a forward pass on its design context",
          "[eval]") {
  const int64_t T0 = 8, n = 30;
  std::vector<uint16_t> tokens = toy_tokens(n);
  // the hand table itself: contexts of 3T0/4 + 1 = 7 .. T0 = 8 tokens past the first window
  CHECK(hand_offset(9) == 2);
  CHECK(hand_offset(10) == 2);
  CHECK(hand_offset(28) == 20);
  for (int64_t t = 9; t <= 29; ++t) {
    CHECK(t - hand_offset(t) >= 7);
    CHECK(t - hand_offset(t) <= 8);
  }
  for (PeKind pe : {PeKind::none, PeKind::learned, PeKind::sinusoidal, PeKind::rope, PeKind::alibi,
                    PeKind::t5}) {
    INFO("pe " << pe_name(pe));
    GPT model = toy_model(pe, T0);
    std::vector<double> s = sliding_losses(model, tokens, T0);
    REQUIRE(s.size() == static_cast<size_t>(n - 1));
    for (int64_t t = 1; t < n; ++t) {
      INFO("target " << t);
      CHECK(s[t - 1] == Approx(direct_loss(model, tokens, hand_offset(t), t)).margin(1e-5));
    }
  }
}

TEST_CASE(
    "sliding window: a split whose length is a whole number of strides needs no extra "
    "window, and a too-short split is refused",
    "[eval]") {
  const int64_t T0 = 8;
  GPT model = toy_model(PeKind::rope, T0);
  std::vector<uint16_t> tokens = toy_tokens(29);  // targets 1..28: the window at 20 ends it
  std::vector<double> s = sliding_losses(model, tokens, T0);
  REQUIRE(s.size() == 28);
  CHECK(s[27] == Approx(direct_loss(model, tokens, 20, 28)).margin(1e-5));
  CHECK(s[26] == Approx(direct_loss(model, tokens, 20, 27)).margin(1e-5));
  REQUIRE_THROWS_WITH(sliding_losses(model, toy_tokens(8), T0),
                      Contains("holds 8 tokens, fewer than the window + 1 = 9"));
}

TEST_CASE(
    "sliding window: asked for the first targets only, it computes fewer windows and gives "
    "those targets the losses of the whole pass",
    "[eval]") {
  const int64_t T0 = 8, n = 30;
  std::vector<uint16_t> tokens = toy_tokens(n);
  GPT model = toy_model(PeKind::alibi, T0);
  std::vector<double> all = sliding_losses(model, tokens, T0, 1);
  // the hand table above: windows at 0, 2, ..., 20 and the end window at 21
  CHECK(sliding_window_count(n, T0) == 12);
  CHECK(sliding_window_count(n, T0, 8) == 1);    // targets 1-8: the window at 0
  CHECK(sliding_window_count(n, T0, 12) == 3);   // 11, 12 from the window at 4
  CHECK(sliding_window_count(n, T0, 13) == 4);   // 13 from the window at 6
  CHECK(sliding_window_count(n, T0, 29) == 12);  // all: the end window too
  CHECK(sliding_window_count(n, T0, 99) == 12);  // more than the split holds: all
  for (int64_t k : {1, 8, 12, 13, 28, 29}) {
    INFO("targets 1.." << k);
    std::vector<double> some = sliding_losses(model, tokens, T0, 1, k);
    REQUIRE(some.size() == static_cast<size_t>(k));
    for (int64_t t = 1; t <= k; ++t) CHECK(some[t - 1] == all[t - 1]);  // batch 1: same bits
    CHECK(some.back() == Approx(direct_loss(model, tokens, hand_offset(k), k)).margin(1e-5));
  }
}

TEST_CASE("batched windows give the losses of one window at a time", "[eval]") {
  std::vector<uint16_t> tokens = toy_tokens(200);
  for (PeKind pe : {PeKind::rope, PeKind::alibi, PeKind::learned}) {
    INFO("pe " << pe_name(pe));
    GPT model = toy_model(pe, 16);
    std::vector<double> one, many;
    EvalResult a = evaluate(model, tokens, 16, 0, 4, "val", &one, 1);
    EvalResult b = evaluate(model, tokens, 16, 0, 4, "val", &many, 5);  // 12 windows: 5, 5, 2
    REQUIRE(one.size() == static_cast<size_t>(a.windows * 16));
    REQUIRE(many.size() == one.size());
    for (size_t i = 0; i < one.size(); ++i) CHECK(many[i] == Approx(one[i]).margin(1e-5));
    CHECK(b.loss == Approx(a.loss).margin(1e-6));
    std::vector<double> s1 = sliding_losses(model, tokens, 16, 1),
                        s7 = sliding_losses(model, tokens, 16, 7);
    for (size_t i = 0; i < s1.size(); ++i) CHECK(s7[i] == Approx(s1[i]).margin(1e-5));
  }
}

TEST_CASE("per-target losses are in token order and average to the reported loss", "[eval]") {
  GPT model = toy_model(PeKind::alibi, 16);
  std::vector<uint16_t> tokens = toy_tokens(100);
  std::vector<double> v;
  EvalResult r = evaluate(model, tokens, 8, 0, 2, "val", &v);
  REQUIRE(v.size() == static_cast<size_t>(r.windows * 8));
  double mean = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  CHECK(mean == Approx(r.loss).epsilon(1e-12));
  // window 3's position 0 is target 25: a forward pass on tokens[24] alone
  CHECK(v[3 * 8] == Approx(direct_loss(model, tokens, 24, 25)).margin(1e-5));
  CHECK(v[3 * 8 + 5] == Approx(direct_loss(model, tokens, 24, 30)).margin(1e-5));
}

TEST_CASE("add_sliding_loss averages exactly the targets of the L-windows", "[eval]") {
  EvalResult r;
  r.windows = 2, r.len = 4;
  r.buckets = {{0, 2, 0.0}, {2, 4, 0.0}};
  std::vector<double> sliding{1, 2, 3, 4, 5, 6, 7, 8, 9};  // targets 1..9; 9 is not used
  add_sliding_loss(r, sliding);
  CHECK(r.sliding_loss == Approx(4.5));  // targets 1..8
  // position t of window w is target 4w + t + 1: positions 0,1 -> (1+5, 2+6) / 2 -> 3.5
  CHECK(r.buckets[0].sliding_loss == Approx(3.5));
  CHECK(r.buckets[1].sliding_loss == Approx(5.5));
  r.windows = 3;
  REQUIRE_THROWS_WITH(add_sliding_loss(r, sliding),
                      Contains("needs the losses of 12 targets, but the sliding pass has 9"));
}

TEST_CASE("a model that ignores its context has the same sliding and long-window loss", "[eval]") {
  // No PE and the attention outputs' projection zeroed: each prediction depends on its own
  // input token only, so the length of the context cannot matter.
  GPT model = toy_model(PeKind::none, 8);
  for (const NamedParam& p : model.parameters())
    if (p.name.find("attn.c_proj.weight") != std::string::npos) {
      float* w = p.tensor.data<float>();
      std::fill(w, w + p.tensor.numel(), 0.0f);
    }
  std::vector<uint16_t> tokens = toy_tokens(300);
  std::vector<double> sliding = sliding_losses(model, tokens, 8);
  for (int64_t L : {8, 32, 64}) {
    EvalResult r = evaluate(model, tokens, L, 0, 4, "val");
    add_sliding_loss(r, sliding);
    CHECK(r.sliding_loss == Approx(r.loss).margin(1e-6));
    for (const EvalBucket& b : r.buckets) CHECK(b.sliding_loss == Approx(b.loss).margin(1e-6));
  }
}

TEST_CASE("the JSON of an evaluation carries the sliding loss only when computed", "[eval]") {
  EvalResult r;
  r.loss = 1.5, r.ppl = std::exp(1.5), r.tokens = 8, r.len = 4, r.windows = 2;
  r.buckets = {{0, 4, 1.5}};
  CHECK(r.json() ==
        "{\"loss\":1.5,\"ppl\":4.4816890703380645,\"tokens\":8,\"len\":4,\"windows\":2,"
        "\"buckets\":[{\"start\":0,\"end\":4,\"loss\":1.5}]}");
  r.sliding_loss = 1.25, r.buckets[0].sliding_loss = 1.25;
  CHECK(r.json() ==
        "{\"loss\":1.5,\"ppl\":4.4816890703380645,\"tokens\":8,\"len\":4,\"windows\":2,"
        "\"buckets\":[{\"start\":0,\"end\":4,\"loss\":1.5,\"sliding_loss\":1.25}],"
        "\"sliding_loss\":1.25}");
}
