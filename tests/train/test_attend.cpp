// `poslab attend`: its files, the permutation check, and every refusal.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "tests/support/temp_dir.h"
#include "tests/train/tiny_model.h"
#include "train/attend.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

using namespace poslab;
using Catch::Contains;
namespace fs = std::filesystem;

// Runs `poslab attend` in this process with the given flags.
static int attend(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return cmd_attend(static_cast<int>(argv.size()), argv.data());
}

static std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f;
    std::istringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) f.push_back(cell);
    rows.push_back(f);
  }
  return rows;
}

TEST_CASE("attend writes every layer and head; rows sum to 1; causal zeros above the diagonal",
          "[train][attend]") {
  test::TempDir dir;
  std::string ckpt = test::tiny_zh_model(dir, PeKind::rope, true);
  std::string out = dir.file("att");
  REQUIRE(attend({"--ckpt", ckpt, "--text", "我送君", "--compare", "君送我。", "--out", out}) == 0);
  auto rows = csv_rows(out + "/attention.csv");
  REQUIRE(rows.at(0) == std::vector<std::string>{"text", "layer", "head", "query", "query_token",
                                                 "key", "key_token", "weight"});
  // 2 layers x 2 heads x (3 x 3 + 4 x 4) weights
  REQUIRE(rows.size() == 1 + 2 * 2 * (9 + 16));
  std::map<std::string, double> row_sum;  // (text, layer, head, query) -> sum over keys
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& f = rows[r];
    REQUIRE(f.size() == 8);
    double w = std::stod(f[7]);
    REQUIRE(w >= 0);
    if (std::stoi(f[5]) > std::stoi(f[3])) REQUIRE(w == 0);  // a key after its query: masked
    row_sum[f[0] + "/" + f[1] + "/" + f[2] + "/" + f[3]] += w;
  }
  REQUIRE(row_sum.size() == 2 * 2 * (3 + 4));
  for (const auto& [key, sum] : row_sum) {
    INFO(key);
    REQUIRE(sum == Approx(1).margin(1e-6));
  }
  std::string svg = read_file(out + "/attention.svg");
  REQUIRE(svg.rfind("<?xml", 0) == 0);
  REQUIRE(svg.find("</svg>") != std::string::npos);
  for (const char* panel : {"A layer 0 head 0", "A layer 1 head 1", "B layer 0 head 1",
                            "B layer 1 head 1", ">送<", ">。<"})
    REQUIRE(svg.find(panel) != std::string::npos);
}

TEST_CASE("attend: without mask and PE a permuted text gets the permuted attention",
          "[train][attend]") {
  test::TempDir dir;
  std::string none = test::tiny_zh_model(dir, PeKind::none, false);
  std::string rope = test::tiny_zh_model(dir, PeKind::rope, false);
  std::vector<std::string> vocab = load_vocab(dir.file("data/vocab.json"));
  const std::string a = "春风又绿江南岸", b = "岸南江绿又风春", c = "春风又绿江南我";
  std::vector<double> diff;
  for (const std::string& ckpt : {none, rope}) {
    Checkpoint ck = load_checkpoint(ckpt);
    auto map = [&](const std::string& t) {
      return attention_maps(*ck.model, encode_text(vocab, t, "--text", "vocab.json"), vocab, t);
    };
    AttentionMaps ma = map(a), mb = map(b);
    REQUIRE_FALSE(permuted_difference(ma, map(c)).has_value());  // not a permutation of a
    diff.push_back(permuted_difference(ma, mb).value());
  }
  REQUIRE(diff[0] < 1e-6);  // NoPE without a mask: permutation-equivariant, float rounding
  REQUIRE(diff[1] > 1e-3);  // RoPE: the order changes the weights
}

TEST_CASE("attend: unknown characters, an empty text and missing files are named errors",
          "[train][attend][errors]") {
  test::TempDir dir;
  std::string ckpt = test::tiny_zh_model(dir, PeKind::rope, true);
  std::string out = dir.file("att");
  REQUIRE_THROWS_WITH(attend({"--ckpt", ckpt, "--text", "我打你，你打他", "--out", out}),
                      Contains("--text: 3 characters are not in the vocabulary") &&
                          Contains("'打' (U+6253) at position 1") &&
                          Contains("'你' (U+4F60) at position 2") &&
                          Contains("'他' (U+4ED6) at position 6"));
  REQUIRE_THROWS_WITH(attend({"--ckpt", ckpt, "--text", "我", "--compare", "x"}),
                      Contains("--compare: 1 character is not in the vocabulary") &&
                          Contains("'x' (U+0078) at position 0"));
  REQUIRE_THROWS_WITH(attend({"--ckpt", ckpt, "--text", ""}),
                      Contains("--text: expected a non-empty text"));
  REQUIRE_THROWS_WITH(attend({"--ckpt", ckpt}), Contains("--text: required"));
  REQUIRE_THROWS_WITH(attend({"--text", "我"}), Contains("--ckpt: required"));
  REQUIRE_THROWS_WITH(attend({"--ckpt", dir.file("nothing/model.safetensors"), "--text", "我"}),
                      Contains("nothing/model.safetensors"));
  write_file_atomic(dir.file("small.json"), "[\"a\", \"b\"]");
  REQUIRE_THROWS_WITH(
      attend({"--ckpt", ckpt, "--text", "我", "--vocab", dir.file("small.json")}),
      Contains("small.json: holds 2 entries") && Contains("does not belong to this checkpoint"));
  REQUIRE_FALSE(fs::exists(out));  // nothing written on an error
}

// The fills of each panel's cells, in the order the panels are drawn.
static std::vector<std::vector<std::string>> panel_fills(const std::string& svg) {
  std::vector<std::vector<std::string>> panels;
  for (size_t at = svg.find("<g class=\"cells\">"); at != std::string::npos;
       at = svg.find("<g class=\"cells\">", at + 1)) {
    const size_t end = svg.find("</g>", at);
    panels.emplace_back();
    for (size_t f = svg.find("fill=\"", at); f < end; f = svg.find("fill=\"", f + 1))
      panels.back().push_back(svg.substr(f + 6, 7));
  }
  return panels;
}

TEST_CASE("attend --compare draws a permuted B in A's order, with |A-B| below", "[train][attend]") {
  test::TempDir dir;
  std::vector<std::string> vocab;
  auto svg_of = [&](const std::string& ckpt, const std::string& a, const std::string& b) {
    Checkpoint ck = load_checkpoint(ckpt);
    vocab = load_vocab(dir.file("data/vocab.json"));
    auto map = [&](const std::string& t) {
      return attention_maps(*ck.model, encode_text(vocab, t, "--text", "vocab.json"), vocab, t);
    };
    std::vector<std::string> heads;
    for (int64_t h = 0; h < ck.model->config().n_head; ++h)
      heads.push_back(head_label(ck.model->config(), h));
    return attention_svg({map(a), map(b)}, "t", heads);
  };
  // 2 layers x (A, B, |A-B|) x 2 heads: in layer l, panel 6 l + h is A's head h, 6 l + 2 + h B's
  auto same_panels = [](const std::vector<std::vector<std::string>>& p) {
    REQUIRE(p.size() == 2 * 3 * 2);
    bool same = true;
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h) same = same && p[6 * l + h] == p[6 * l + 2 + h];
    return same;
  };
  const std::string a = "春风又绿江南岸", b = "岸南江绿又风春";
  const std::string none = svg_of(test::tiny_zh_model(dir, PeKind::none, false), a, b);
  REQUIRE(none.find("|A-B| layer 1 head 1") != std::string::npos);
  REQUIRE(same_panels(panel_fills(none)));  // blind to order: B in A's order is A
  const std::string rope = svg_of(test::tiny_zh_model(dir, PeKind::rope, false), a, b);
  REQUIRE_FALSE(same_panels(panel_fills(rope)));
  // Causal: B's visible keys, in A's order, lie above the diagonal when B reverses A; |A-B|
  // is drawn wherever either is visible, which for a reversal is every cell.
  const std::string causal = test::tiny_zh_model(dir, PeKind::rope, true);
  auto p = panel_fills(svg_of(causal, "我送君", "君送我"));
  REQUIRE(p.at(0).size() == 6);
  REQUIRE(p.at(2).size() == 6);
  REQUIRE(p.at(4).size() == 9);
  // Not a permutation: B in its own order, no difference row
  auto q = panel_fills(svg_of(causal, "我送君", "君送我。"));
  REQUIRE(q.size() == 2 * 2 * 2);
}

TEST_CASE("attend names ALiBi heads by their slope and T5's as T5 heads", "[train][attend]") {
  GPTConfig c;
  c.n_head = 4, c.pe.kind = PeKind::alibi;
  REQUIRE(head_label(c, 0) == "head 0, m = 1/4");
  REQUIRE(head_label(c, 3) == "head 3, m = 1/256");
  c.pe.kind = PeKind::t5;
  REQUIRE(head_label(c, 1) == "T5 head 1");
  c.pe.kind = PeKind::rope;
  REQUIRE(head_label(c, 2) == "head 2");
}
