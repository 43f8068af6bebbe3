// Checkpoint metadata (docs/formats.md) for the embedding convention: written, read back, absent in
// older files (= gpt2), refused when unknown with the key and the file named; so is an
// unknown pe.
#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"
#include "train/checkpoint.h"

using namespace poslab;
using Catch::Contains;

static GPTConfig small(EmbeddingKind embedding) {
  GPTConfig c;
  c.vocab_size = 5, c.n_layer = 1, c.n_head = 2, c.n_embd = 4, c.block_size = 8;
  c.pe.kind = PeKind::learned;
  c.embedding = embedding;
  return c;
}

// The file at path with its __metadata__ changed by edit, written to out.
template <class Edit>
static void rewrite_metadata(const std::string& path, const std::string& out, Edit edit) {
  StFile f = load_safetensors(path);
  edit(f.metadata);
  save_safetensors(out, f.tensors, f.metadata);
}

static std::string meta_value(const std::string& path, const std::string& key) {
  for (const auto& [k, v] : load_safetensors(path).metadata)
    if (k == key) return v;
  return "(absent)";
}

TEST_CASE("checkpoint: the embedding convention round-trips, absent reads as gpt2",
          "[train][checkpoint]") {
  test::TempDir dir;
  const std::string scaled_path = dir.file("scaled.safetensors");
  GPT scaled(small(EmbeddingKind::scaled), 1);
  save_checkpoint(scaled, 7, scaled_path);
  CHECK(meta_value(scaled_path, "embedding") == "scaled");
  Checkpoint ck = load_checkpoint(scaled_path);
  CHECK(ck.model->config().embedding == EmbeddingKind::scaled);
  Ids ids{{1, 2, 3, 4}, {1, 4}};
  NoGrad ng;
  CHECK(ck.model->logits(ids).to_vector() == scaled.logits(ids).to_vector());

  const std::string gpt2_path = dir.file("gpt2.safetensors");
  save_checkpoint(GPT(small(EmbeddingKind::gpt2), 1), 7, gpt2_path);
  CHECK(meta_value(gpt2_path, "embedding") == "gpt2");
  // A file written before the key existed: the same weights, read as gpt2.
  const std::string old_path = dir.file("old.safetensors");
  rewrite_metadata(scaled_path, old_path, [](StMetadata& m) {
    std::erase_if(m, [](const auto& kv) { return kv.first == "embedding"; });
  });
  CHECK(meta_value(old_path, "embedding") == "(absent)");
  CHECK(load_checkpoint(old_path).model->config().embedding == EmbeddingKind::gpt2);
}

TEST_CASE("checkpoint: an unknown embedding is refused naming the key and the file",
          "[train][checkpoint][errors]") {
  test::TempDir dir;
  save_checkpoint(GPT(small(EmbeddingKind::gpt2), 1), 0, dir.file("ok.safetensors"));
  const std::string bad = dir.file("bad.safetensors");
  for (const std::string value : {"fairseq", "", "Scaled"}) {
    rewrite_metadata(dir.file("ok.safetensors"), bad, [&](StMetadata& m) {
      for (auto& [k, v] : m)
        if (k == "embedding") v = value;
    });
    REQUIRE_THROWS_WITH(load_checkpoint(bad), Contains(bad + ": __metadata__ 'embedding' = '" +
                                                       value + "' is not one of gpt2|scaled"));
  }
}

TEST_CASE("checkpoint: an unknown pe is refused naming the key and the file",
          "[train][checkpoint][errors]") {
  test::TempDir dir;
  save_checkpoint(GPT(small(EmbeddingKind::gpt2), 1), 0, dir.file("ok.safetensors"));
  const std::string bad = dir.file("bad.safetensors");
  rewrite_metadata(dir.file("ok.safetensors"), bad, [](StMetadata& m) {
    for (auto& [k, v] : m)
      if (k == "pe") v = "cope";
  });
  REQUIRE_THROWS_WITH(load_checkpoint(bad),
                      Contains(bad + ": __metadata__ 'pe' = 'cope' is not one of none|learned"));
  rewrite_metadata(dir.file("ok.safetensors"), bad, [](StMetadata& m) {
    std::erase_if(m, [](const auto& kv) { return kv.first == "pe"; });
  });
  REQUIRE_THROWS_WITH(load_checkpoint(bad), Contains(bad + ": __metadata__ lacks 'pe'"));
}
