// The evaluation's interventions (nn/attention.h Interventions, docs/evaluation.md) at the
// level of the model: where the position offset enters each scheme, and the errors that name
// a bad value. The attention window and the log scale inside the op are checked against the
// loop reference in tests/nn/test_attention_interventions.cpp.
#include <catch2/catch.hpp>
#include <cmath>

#include "train/eval.h"

using namespace poslab;
using Catch::Contains;

namespace {

constexpr int64_t kToyVocab = 13, kT0 = 8;

GPTConfig toy_config(PeKind pe) {
  GPTConfig c;
  c.vocab_size = kToyVocab;
  c.n_embd = 16, c.n_layer = 2, c.n_head = 2, c.block_size = kT0;
  c.pe.kind = pe;
  if (pe == PeKind::learned) c.pe.max_len = 64;
  c.embedding = EmbeddingKind::scaled;
  return c;
}

Ids toy_ids(int64_t T) {
  Ids x{std::vector<int32_t>(T), {1, T}};
  for (int64_t i = 0; i < T; ++i) x.data[i] = static_cast<int32_t>((7 * i + 3) % kToyVocab);
  return x;
}

std::vector<double> logits_at(const GPT& m, const Ids& x, Interventions iv) {
  NoGrad no_grad;
  return m.logits(x, iv).to_vector();
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

}  // namespace

TEST_CASE("a position offset leaves the relative schemes unchanged, bit for bit", "[eval]") {
  for (PeKind pe : {PeKind::none, PeKind::alibi, PeKind::t5}) {
    INFO(pe_name(pe));
    GPT m(toy_config(pe), 3);
    const Ids x = toy_ids(12);
    Interventions far;
    far.position_offset = 40;
    CHECK(max_abs_diff(logits_at(m, x, {}), logits_at(m, x, far)) == 0);
  }
}

TEST_CASE("RoPE with a position offset: the same scores up to the rounding of the angles",
          "[eval]") {
  // q.k depends on the angle difference (m - n) theta_i only; shifting both positions by P
  // changes only the float rounding of the tables (cos, sin of larger angles).
  GPT m(toy_config(PeKind::rope), 3);
  const Ids x = toy_ids(12);
  Interventions far;
  far.position_offset = 40;
  const std::vector<double> a = logits_at(m, x, {}), b = logits_at(m, x, far);
  CHECK(max_abs_diff(a, b) < 1e-4);
}

TEST_CASE("learned and sinusoidal take the table's rows P..P+L-1 under an offset", "[eval]") {
  // learned: the model at offset P equals a model whose rows 0..L-1 are the first one's rows
  // P..P+L-1, at offset 0.
  const int64_t P = 21, T = 10;
  GPT a(toy_config(PeKind::learned), 3), b(toy_config(PeKind::learned), 3);
  Tensor wa, wb;
  for (const NamedParam& p : a.parameters())
    if (p.name == "transformer.wpe.weight") wa = p.tensor;
  for (const NamedParam& p : b.parameters())
    if (p.name == "transformer.wpe.weight") wb = p.tensor;
  REQUIRE(wa.defined());
  wb.slice(0, 0, T).copy_(wa.slice(0, P, P + T));
  Interventions at;
  at.position_offset = P;
  CHECK(max_abs_diff(logits_at(a, toy_ids(T), at), logits_at(b, toy_ids(T), {})) == 0);
  // sinusoidal: an offset changes the result (the table is absolute)
  GPT s(toy_config(PeKind::sinusoidal), 3);
  CHECK(max_abs_diff(logits_at(s, toy_ids(T), at), logits_at(s, toy_ids(T), {})) > 1e-3);
}

TEST_CASE("bad interventions are refused with the flag and the values named", "[eval]") {
  GPT learned(toy_config(PeKind::learned), 3);
  Interventions past;
  past.position_offset = 60;  // 60 + 10 > max_len = 64
  CHECK_THROWS_WITH(logits_at(learned, toy_ids(10), past),
                    Contains("--position-offset") && Contains("70") && Contains("64"));
  GPT rope(toy_config(PeKind::rope), 3);
  Interventions shifted;
  shifted.rope_scaling = {ScalingKind::yarn, 0, kT0};
  shifted.position_offset = 4;
  CHECK_THROWS_WITH(logits_at(rope, toy_ids(10), shifted),
                    Contains("--position-offset") && Contains("yarn"));
  Interventions negative;
  negative.position_offset = -1;
  CHECK_THROWS_WITH(logits_at(rope, toy_ids(4), negative), Contains("--position-offset"));
}

TEST_CASE("evaluate applies the interventions to every window", "[eval]") {
  GPT m(toy_config(PeKind::sinusoidal), 3);
  std::vector<uint16_t> tokens(200);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<uint16_t>((i * i) % kToyVocab);
  Interventions at;
  at.position_offset = 16;
  EvalResult plain = evaluate(m, tokens, 8, 0, 2, "val");
  EvalResult shifted = evaluate(m, tokens, 8, 0, 2, "val", nullptr, 0, at);
  CHECK(plain.windows == shifted.windows);
  CHECK(std::abs(plain.loss - shifted.loss) > 1e-6);
}
