// Checkpoint metadata of the positional options: written, read back, defaults when absent,
// and bad values refused naming the key and the file.
#include <catch2/catch.hpp>

#include "data/safetensors.h"
#include "tests/support/temp_dir.h"
#include "tests/train/checkpoint_meta.h"
#include "train/checkpoint.h"

using namespace poslab;
using Catch::Contains;
using poslab::test::meta_value;

static GPTConfig small(PeKind pe) {
  GPTConfig c;
  c.vocab_size = 5, c.n_layer = 1, c.n_head = 2, c.n_embd = 8, c.block_size = 4, c.pe.kind = pe;
  return c;
}

// Rewrites `path` with metadata key set to value ("" removes it).
static void set_meta(const std::string& path, const std::string& key, const std::string& value) {
  StFile f = load_safetensors(path);
  StMetadata meta;
  for (const auto& kv : f.metadata)
    if (kv.first != key) meta.push_back(kv);
  if (!value.empty()) meta.push_back({key, value});
  save_safetensors(path, f.tensors, meta);
}

TEST_CASE("checkpoints keep rope_layout and rope_fraction; absent means interleaved and 1",
          "[train]") {
  test::TempDir dir;
  std::string path = dir.file("m.safetensors");
  GPTConfig c = small(PeKind::rope);
  c.pe.rope_layout = RopeLayout::half;
  c.pe.rope_fraction = 0.5;
  save_checkpoint(GPT(c, 1), 3, path);
  StFile f = load_safetensors(path);
  REQUIRE(meta_value(f, "rope_layout") == "half");
  REQUIRE(meta_value(f, "rope_fraction") == "0.5");
  Checkpoint ck = load_checkpoint(path);
  REQUIRE(ck.model->config().pe.rope_layout == RopeLayout::half);
  REQUIRE(ck.model->config().pe.rope_fraction == 0.5);
  set_meta(path, "rope_layout", "");
  set_meta(path, "rope_fraction", "");
  ck = load_checkpoint(path);
  REQUIRE(ck.model->config().pe.rope_layout == RopeLayout::interleaved);
  REQUIRE(ck.model->config().pe.rope_fraction == 1);
  // other schemes do not carry the keys
  save_checkpoint(GPT(small(PeKind::alibi), 1), 0, dir.file("a.safetensors"));
  REQUIRE(meta_value(load_safetensors(dir.file("a.safetensors")), "rope_layout") == "(absent)");
}

TEST_CASE("bad rope_layout and rope_fraction are refused naming the key and the file",
          "[train][errors]") {
  test::TempDir dir;
  std::string path = dir.file("m.safetensors");
  save_checkpoint(GPT(small(PeKind::rope), 1), 0, path);
  set_meta(path, "rope_layout", "diagonal");
  REQUIRE_THROWS_WITH(load_checkpoint(path), Contains("m.safetensors") &&
                                                 Contains("'rope_layout' = 'diagonal'") &&
                                                 Contains("interleaved|half"));
  set_meta(path, "rope_layout", "half");
  for (const char* bad : {"0", "1.5", "-0.5", "abc", "nan", "0.5x"}) {
    set_meta(path, "rope_fraction", bad);
    REQUIRE_THROWS_WITH(load_checkpoint(path),
                        Contains("m.safetensors") && Contains("'rope_fraction'") &&
                            Contains(std::string("'") + bad + "'") && Contains("(0, 1]"));
  }
  set_meta(path, "rope_fraction", "0.1");  // r = 2 floor(0.1 * 4 / 2) = 0: no rotated pair
  REQUIRE_THROWS_WITH(load_checkpoint(path), Contains("--rope-fraction") && Contains("r >= 2"));
}

// The parts of a t5 checkpoint that read_t5_options looks at.
static StFile t5_file(const std::string& buckets, const std::string& max_distance,
                      std::vector<int64_t> table_shape) {
  StFile f;
  if (!buckets.empty()) f.metadata.push_back({"t5_buckets", buckets});
  if (!max_distance.empty()) f.metadata.push_back({"t5_max_distance", max_distance});
  if (!table_shape.empty())
    f.tensors.push_back({"transformer.rel_bias.weight", "F32", table_shape,
                         std::vector<float>(table_shape[0] * table_shape[1])});
  return f;
}

TEST_CASE("t5 checkpoints: options read, table checked, errors name the key and the file",
          "[train][errors]") {
  T5Options o = read_t5_options(t5_file("8", "12", {8, 2}), "m.safetensors", 2, true);
  REQUIRE(o.num_buckets == 8);
  REQUIRE(o.max_distance == 12);
  REQUIRE(o.causal);
  REQUIRE_THROWS_WITH(read_t5_options(t5_file("8", "12", {}), "m.safetensors", 2, true),
                      Contains("m.safetensors") && Contains("'transformer.rel_bias.weight'") &&
                          Contains("missing"));
  REQUIRE_THROWS_WITH(
      read_t5_options(t5_file("16", "12", {8, 2}), "m.safetensors", 2, true),
      Contains("m.safetensors") && Contains("'t5_buckets' = '16'") && Contains("(8,2)"));
  REQUIRE_THROWS_WITH(read_t5_options(t5_file("8", "12", {8, 3}), "m.safetensors", 2, true),
                      Contains("n_head = 2") && Contains("(8,3)"));
  REQUIRE_THROWS_WITH(read_t5_options(t5_file("", "12", {8, 2}), "m.safetensors", 2, true),
                      Contains("m.safetensors") && Contains("lacks 't5_buckets'"));
  REQUIRE_THROWS_WITH(read_t5_options(t5_file("8", "4", {8, 2}), "m.safetensors", 2, true),
                      Contains("'t5_max_distance' = '4'"));  // max_exact = 4
  REQUIRE_THROWS_WITH(read_t5_options(t5_file("2", "12", {2, 2}), "m.safetensors", 2, false),
                      Contains("'t5_buckets' = '2'"));  // bidirectional needs 4
}

TEST_CASE("t5 checkpoints round-trip; a missing or mismatched table is refused", "[train]") {
  test::TempDir dir;
  std::string path = dir.file("m.safetensors");
  GPTConfig c = small(PeKind::t5);
  c.pe.t5_buckets = 8, c.pe.t5_max_distance = 12;
  GPT m(c, 1);
  bool decayed = true;
  for (const NamedParam& p : m.parameters())
    if (p.name == "transformer.rel_bias.weight") decayed = p.decay;
  REQUIRE_FALSE(decayed);  // the table, like the embeddings, gets no weight decay
  save_checkpoint(m, 2, path);
  StFile f = load_safetensors(path);
  REQUIRE(meta_value(f, "t5_buckets") == "8");
  REQUIRE(meta_value(f, "t5_max_distance") == "12");
  Checkpoint ck = load_checkpoint(path);
  REQUIRE(ck.model->config().pe.t5_buckets == 8);
  REQUIRE(ck.model->config().pe.t5_max_distance == 12);
  std::vector<double> want = m.parameters()[1].tensor.to_vector(),
                      got = ck.model->parameters()[1].tensor.to_vector();
  REQUIRE(ck.model->parameters()[1].name == "transformer.rel_bias.weight");
  for (size_t i = 0; i < want.size(); ++i) REQUIRE(got[i] == static_cast<float>(want[i]));
  set_meta(path, "t5_buckets", "16");
  REQUIRE_THROWS_WITH(load_checkpoint(path),
                      Contains("m.safetensors") && Contains("'t5_buckets' = '16'"));
  std::vector<StTensor> without;
  for (const StTensor& t : f.tensors)
    if (t.name != "transformer.rel_bias.weight") without.push_back(t);
  save_safetensors(path, without, f.metadata);
  REQUIRE_THROWS_WITH(load_checkpoint(path), Contains("m.safetensors") &&
                                                 Contains("'transformer.rel_bias.weight'") &&
                                                 Contains("missing"));
}
