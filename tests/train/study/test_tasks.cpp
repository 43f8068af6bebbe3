// The synthetic tasks of the study (train/study/tasks.h): well-formed lines, chance accuracy.
#include "train/study/tasks.h"

#include <catch2/catch.hpp>

#include "data/corpus.h"

using namespace poslab;
using Catch::Contains;

TEST_CASE("task accuracy: an untrained model scores near chance per character", "[study]") {
  std::string text = task_text("reverse", 50, 0, 3);
  Corpus c = build_corpus(text);
  GPTConfig cfg;
  cfg.vocab_size = static_cast<int64_t>(c.vocab.size()), cfg.n_layer = 1, cfg.n_head = 2,
  cfg.n_embd = 16, cfg.block_size = 32;
  GPT m(cfg, 1);
  TaskScore s = task_accuracy(m, c.vocab, "reverse", 22, 40, 9);
  REQUIRE(s.exact == 0);
  REQUIRE(s.per_char < 0.2);
}

TEST_CASE("task lines are well formed", "[study]") {
  std::string r = task_text("reverse", 3, 0, 1);
  auto nl = r.find('\n');
  std::string line = r.substr(0, nl), a = line.substr(0, 10), b = line.substr(11);
  REQUIRE(line[10] == '=');
  REQUIRE(std::string(a.rbegin(), a.rend()) == b);
  std::string p = task_text("passkey", 2, 100, 1);
  std::string first = p.substr(0, p.find('\n') + 1);
  REQUIRE(first.size() == 100);
  std::string key = first.substr(first.size() - 6, 5);
  REQUIRE(first.find("k=" + key + ";") != std::string::npos);
  REQUIRE_THROWS_WITH(task_text("sort", 1, 10, 1), Contains("valid: reverse|passkey"));
}
