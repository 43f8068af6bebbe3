// Checkpoints of the v5 schemes and options: every option written and read back, the tensors
// of KERPLE and FIRE checked by name and shape, no positional parameter decayed, and the bad
// settings of the flags refused naming the flag.
#include <catch2/catch.hpp>

#include "data/safetensors.h"
#include "tests/support/temp_dir.h"
#include "tests/train/checkpoint_meta.h"
#include "train/checkpoint.h"

using namespace poslab;
using Catch::Contains;
using poslab::test::meta_value;

static GPTConfig two_layer_config(PeKind pe) {
  GPTConfig c;
  c.vocab_size = 5, c.n_layer = 2, c.n_head = 2, c.n_embd = 8, c.block_size = 4, c.pe.kind = pe;
  return c;
}

// The model's weights against the checkpoint's, name by name, as f32.
static void require_same_weights(const GPT& a, const GPT& b) {
  std::vector<NamedParam> pa = a.parameters(), pb = b.parameters();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    REQUIRE(pa[i].name == pb[i].name);
    REQUIRE(pa[i].tensor.to_vector() == pb[i].tensor.to_vector());
  }
}

TEST_CASE("v5 checkpoints round-trip every scheme and option; absent keys mean off", "[train]") {
  test::TempDir dir;
  struct Case {
    PeKind pe;
    const char* key;
    const char* value;
  };
  for (const Case& k : std::vector<Case>{{PeKind::kerple, "nope_every", "2"},
                                         {PeKind::fire, "fire_width", "6"},
                                         {PeKind::xpos, "xpos_scale_base", "64"},
                                         {PeKind::rope, "rope_proportion", "0.4375"},
                                         {PeKind::learned, "random_positions", "16"}}) {
    GPTConfig c = two_layer_config(k.pe);
    c.pe.fire_width = 6, c.pe.xpos_scale_base = 64, c.pe.rope_proportion = 0.4375;
    if (k.pe != PeKind::rope) c.pe.rope_proportion = 1;
    if (k.pe == PeKind::kerple) c.pe.nope_every = 2;
    if (k.pe == PeKind::learned) c.pe.random_positions = 16;
    GPT m(c, 3);
    for (const NamedParam& p : m.parameters())
      if (p.name.find("kerple") != std::string::npos || p.name.find(".fire.") != std::string::npos)
        REQUIRE_FALSE(p.decay);
    const std::string path = dir.file(std::string(pe_name(k.pe)) + ".safetensors");
    save_checkpoint(m, 7, path);
    StFile f = load_safetensors(path);
    INFO(pe_name(k.pe) << " " << k.key);
    REQUIRE(meta_value(f, k.key) == k.value);
    Checkpoint ck = load_checkpoint(path);
    require_same_weights(m, *ck.model);
    const PosencConfig& got = ck.model->config().pe;
    CHECK(got.nope_every == c.pe.nope_every);
    CHECK(got.random_positions == c.pe.random_positions);
    CHECK(got.rope_proportion == c.pe.rope_proportion);
    if (k.pe == PeKind::learned) CHECK(got.max_len == 16);  // rows for every drawn position
  }
  save_checkpoint(GPT(two_layer_config(PeKind::rope), 1), 0, dir.file("plain.safetensors"));
  StFile plain = load_safetensors(dir.file("plain.safetensors"));
  for (const char* key : {"rope_proportion", "nope_every", "random_positions", "fire_width"})
    CHECK(meta_value(plain, key) == "(absent)");
}

TEST_CASE("a fire or kerple checkpoint with a missing or misshapen tensor names it",
          "[train][errors]") {
  test::TempDir dir;
  for (PeKind pe : {PeKind::fire, PeKind::kerple}) {
    const std::string path = dir.file("m.safetensors");
    save_checkpoint(GPT(two_layer_config(pe), 1), 0, path);
    StFile f = load_safetensors(path);
    const std::string victim =
        pe == PeKind::fire ? "transformer.h.1.attn.fire.mlp.2.weight" : "transformer.kerple.bias_a";
    std::vector<StTensor> without, misshapen;
    for (StTensor t : f.tensors) {
      if (t.name != victim) without.push_back(t);
      if (t.name == victim) t.shape = {static_cast<int64_t>(t.data.size()), 1};  // same values
      misshapen.push_back(t);
    }
    save_safetensors(path, without, f.metadata);
    REQUIRE_THROWS_WITH(load_checkpoint(path), Contains("m.safetensors") &&
                                                   Contains("'" + victim + "'") &&
                                                   Contains("is missing"));
    save_safetensors(path, misshapen, f.metadata);
    REQUIRE_THROWS_WITH(load_checkpoint(path), Contains("'" + victim + "' has shape"));
  }
}

TEST_CASE("bad v5 settings are refused naming the flag and its valid range", "[train][errors]") {
  auto refuses = [](auto set, const std::string& what) {
    GPTConfig c = two_layer_config(PeKind::rope);
    set(c);
    REQUIRE_THROWS_WITH(GPT(c, 1), Contains(what));
  };
  refuses([](GPTConfig& c) { c.pe.rope_proportion = 1.5; },
          "--rope-proportion: expected p in [0, 1]");
  refuses([](GPTConfig& c) { c.pe.rope_proportion = -0.1; },
          "--rope-proportion: expected p in [0, 1]");
  refuses([](GPTConfig& c) { c.pe.rope_proportion = 0.5, c.pe.rope_fraction = 0.5; },
          "--rope-proportion p < 1 with --rope-fraction f < 1");
  refuses([](GPTConfig& c) { c.pe.nope_every = -1; }, "--nope-every: expected k >= 1");
  refuses([](GPTConfig& c) { c.pe.kind = PeKind::sinusoidal, c.pe.nope_every = 2; },
          "--nope-every applies to schemes that act inside attention");
  refuses([](GPTConfig& c) { c.pe.random_positions = 3; },
          "--random-positions: expected Lmax >= --ctx = 4");
  refuses([](GPTConfig& c) { c.pe.kind = PeKind::none, c.pe.random_positions = 8; },
          "--random-positions: --pe none has no positions");
  refuses(
      [](GPTConfig& c) {
        c.pe.kind = PeKind::learned, c.pe.max_len = 8, c.pe.random_positions = 16;
      },
      "--max-len: expected at least --random-positions = 16");
  refuses([](GPTConfig& c) { c.pe.kind = PeKind::fire, c.pe.fire_width = 0; },
          "--fire-width: expected W >= 1");
  refuses([](GPTConfig& c) { c.pe.kind = PeKind::xpos, c.pe.xpos_scale_base = 0; },
          "--xpos-scale-base: expected B > 0");
}
