// The synthetic tasks of the study (train/study/tasks.h): each generator's invariants, the task
// corpus and its mask, exact-match scoring, Wilson's interval.
#include "train/study/tasks.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

#include "data/answer_mask.h"
#include "data/corpus.h"
#include "tests/support/temp_dir.h"
#include "train/study/study.h"

using namespace poslab;
using Catch::Contains;

namespace {

std::vector<std::string> words_of(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

}  // namespace

TEST_CASE("unscramble: the answer is the prompt's words, in the one order their slots allow",
          "[study]") {
  // the slots' word lists are disjoint: a word names its slot
  std::map<std::string, size_t> slot_of;
  const auto& slots = unscramble_slots();
  for (size_t s = 0; s < slots.size(); ++s)
    for (const std::string& w : slots[s]) REQUIRE(slot_of.emplace(w, s).second);
  Generator g(11);
  size_t longest = 0, identity = 0;
  for (int k = 0; k < 500; ++k) {
    TaskExample ex = unscramble_example(g);
    longest = std::max(longest, ex.text.size());
    REQUIRE(ex.text[ex.answer_start - 1] == '=');
    REQUIRE(ex.text.back() == '\n');
    std::vector<std::string> bag = words_of(ex.text.substr(0, ex.answer_start - 1));
    std::vector<std::string> answer = words_of(ex.text.substr(ex.answer_start));
    std::vector<std::string> a = bag, b = answer;
    std::sort(a.begin(), a.end()), std::sort(b.begin(), b.end());
    REQUIRE(a == b);  // a permutation of the shuffled words
    // recovered from the bag alone: each word put in its slot
    std::vector<std::string> solved(slots.size());
    for (const std::string& w : bag) solved[slot_of.at(w)] = w;
    REQUIRE(solved == answer);
    identity += bag == answer;
  }
  REQUIRE(longest <= 68);  // fits the study's window of 72
  REQUIRE(identity < 10);  // the prompt is shuffled (1 in 720 keeps the order)
}

TEST_CASE("reverse: the letters, '=', the letters reversed, '\\n'", "[study]") {
  Generator g(2);
  for (int64_t n : {1, 7, 40}) {
    TaskExample ex = reverse_example(g, n);
    REQUIRE(static_cast<int64_t>(ex.text.size()) == 2 * n + 2);
    REQUIRE(ex.answer_start == static_cast<size_t>(n + 1));
    std::string s = ex.text.substr(0, n), r = ex.text.substr(n + 1, n);
    REQUIRE(ex.text[n] == '=');
    REQUIRE(std::string(s.rbegin(), s.rend()) == r);
    REQUIRE(std::all_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; }));
  }
  REQUIRE(test_example("reverse", {96, NAN}, g).text.size() == 96);
  REQUIRE_THROWS_WITH(test_example("reverse", {33, NAN}, g), Contains("even test length"));
  REQUIRE_THROWS_WITH(reverse_example(g, 0), Contains("at least 1 letter"));
}

TEST_CASE("passkey: exact length, the needle where the depth puts it, the key asked at the end",
          "[study]") {
  Generator g(4);
  for (int64_t len : {40, 64, 129, 512})
    for (double depth : {0.0, 0.25, 0.5, 0.75, 1.0}) {
      TaskExample ex = passkey_example(g, len, depth);
      REQUIRE(static_cast<int64_t>(ex.text.size()) == len);
      const size_t at = ex.text.find("the pass key is ");
      const int64_t F = len - 39;  // the filler: all but needle (23), question (10), answer (6)
      REQUIRE(at == static_cast<size_t>(std::llround(depth * F)));
      const std::string key = ex.text.substr(at + 16, 5);
      REQUIRE(ex.text.substr(at + 21, 2) == ". ");
      REQUIRE(std::all_of(key.begin(), key.end(), ::isdigit));
      REQUIRE(key[0] != '0');  // a five-digit number
      REQUIRE(ex.text.substr(ex.answer_start - 10) == "pass key? " + key + "\n");
      REQUIRE(ex.text.find("the pass key is ", at + 1) == std::string::npos);
    }
  REQUIRE_THROWS_WITH(passkey_example(g, 39, 0.5), Contains("length above 39"));
  REQUIRE_THROWS_WITH(passkey_example(g, 100, 1.5), Contains("depth in [0, 1]"));
}

TEST_CASE("training examples fit the window and span the training distribution", "[study]") {
  Generator g(8);
  int64_t shortest = 1 << 20, longest = 0;
  for (int k = 0; k < 400; ++k) {
    int64_t n = static_cast<int64_t>(training_example("reverse", 32, g).text.size());
    shortest = std::min(shortest, n), longest = std::max(longest, n);
  }
  REQUIRE(shortest == 4);  // 1 letter
  REQUIRE(longest == 32);  // 15 letters: (32 - 2) / 2
  shortest = 1 << 20, longest = 0;
  for (int k = 0; k < 400; ++k) {
    int64_t n = static_cast<int64_t>(training_example("passkey", 128, g).text.size());
    shortest = std::min(shortest, n), longest = std::max(longest, n);
  }
  REQUIRE(shortest >= 64);
  REQUIRE(shortest < 70);
  REQUIRE(longest == 128);
  REQUIRE_THROWS_WITH(training_example("sort", 32, g),
                      Contains("unknown task 'sort'; valid: unscramble|reverse|passkey"));
}

TEST_CASE("a task corpus: one example per window, padded, marks 1 exactly on the answer",
          "[study]") {
  test::TempDir dir;
  write_task_corpus("reverse", 32, 50, 10, 7, dir.file("rev"));
  std::vector<std::string> vocab = load_vocab(dir.file("rev/vocab.json"));
  REQUIRE(vocab == task_vocab("reverse"));
  std::vector<uint16_t> ids = load_tokens(dir.file("rev/train.bin"), vocab.size());
  REQUIRE(ids.size() == 50 * 33);
  AnswerMask m = load_answer_mask(dir.file("rev/train.mask"), ids.size());
  REQUIRE(m.example_len == 33);
  REQUIRE(load_answer_mask(dir.file("rev/val.mask"), 10 * 33).example_len == 33);
  for (int64_t k = 0; k < 50; ++k) {
    std::vector<uint16_t> ex(ids.begin() + k * 33, ids.begin() + (k + 1) * 33);
    std::string text = decode(vocab, ex);
    const size_t eq = text.find('='), end = text.find('\n');
    REQUIRE(end == 2 * eq + 1);                                   // "s=r\n"
    REQUIRE(text.substr(end + 1) == std::string(32 - end, '_'));  // then padding
    for (size_t t = 0; t < 33; ++t) {
      const uint8_t want = t == 0 ? 2 : (t > eq && t <= end) ? 1 : 0;
      REQUIRE(int(m.marks[k * 33 + t]) == int(want));
    }
  }
}

TEST_CASE("exact match: greedy decoding's answers count, one wrong character does not", "[study]") {
  std::vector<std::string> vocab = task_vocab("reverse");
  GPTConfig cfg;
  cfg.vocab_size = static_cast<int64_t>(vocab.size()), cfg.n_layer = 1, cfg.n_head = 2,
  cfg.n_embd = 16, cfg.block_size = 32;
  GPT m(cfg, 1);
  // prompts of two lengths (so the batch is padded); answers written by greedy decoding
  std::vector<TaskExample> greedy;
  for (std::string prompt : {std::string("abc="), std::string("qwertyu=")}) {
    std::vector<uint16_t> ids = encode(vocab, prompt);
    for (int step = 0; step < 4; ++step) {
      Ids x{std::vector<int32_t>(ids.begin(), ids.end()), {1, int64_t(ids.size())}};
      std::vector<double> last = m.logits(x).slice(1, ids.size() - 1, ids.size()).to_vector();
      ids.push_back(std::max_element(last.begin(), last.end()) - last.begin());
    }
    greedy.push_back({decode(vocab, ids), prompt.size()});
  }
  REQUIRE(exact_answers(m, vocab, greedy) == 2);
  std::vector<TaskExample> wrong = greedy;
  char& c = wrong[1].text[wrong[1].answer_start + 2];
  c = c == 'a' ? 'b' : 'a';
  REQUIRE(exact_answers(m, vocab, wrong) == 1);
  // an untrained model reverses nothing
  TaskScore s = task_accuracy(m, vocab, "reverse", {12, NAN}, 30, 9);
  REQUIRE(s.n == 30);
  REQUIRE(s.correct == 0);
}

TEST_CASE("Wilson's 95% interval: hand-computed values", "[study]") {
  // centre +- half, centre = (p + z^2/2n) / (1 + z^2/n), half = z / (1 + z^2/n) *
  // sqrt(p(1-p)/n + z^2/4n^2), z = 1.959964; e.g. 0/10: high = z^2 / (10 + z^2) = 0.277533
  auto near = [](Interval i, double lo, double hi) {
    REQUIRE(i.low == Approx(lo).margin(1e-6));
    REQUIRE(i.high == Approx(hi).margin(1e-6));
  };
  near(wilson_interval(0, 10), 0, 0.277533);
  near(wilson_interval(5, 10), 0.236593, 0.763407);
  near(wilson_interval(10, 10), 0.722467, 1);
  near(wilson_interval(37, 50), 0.604468, 0.841285);
  near(wilson_interval(0, 0), 0, 1);
  REQUIRE_THROWS_WITH(wilson_interval(11, 10), Contains("0 <= correct <= n"));
}

TEST_CASE("the plan's task runs: every scheme x task x task seed, tests past the window",
          "[study]") {
  const StudyConfig c = study_config(StudySize::full);
  const StudyPlan p = study_plan(c);
  REQUIRE(p.tasks.size() == task_names().size());
  size_t runs = 0;
  for (const RunSpec& r : p.runs) {
    if (!r.task) continue;
    ++runs;
    const TaskSpec& t = *r.task;
    const std::string pe = pe_name(r.train.model.pe);
    REQUIRE(r.name == "task_" + t.name + "_" + pe + "_s" + std::to_string(r.train.seed));
    REQUIRE(r.train.objective == Objective::answer);
    REQUIRE(r.train.data == t.data);
    REQUIRE(r.train.model.block_size == t.train_len);
    REQUIRE(r.train.model.embedding == EmbeddingKind::scaled);
    const int64_t longest = *std::max_element(t.test_lens.begin(), t.test_lens.end());
    if (pe == "learned") REQUIRE(r.train.model.max_len >= longest);
    if (t.name != "unscramble") REQUIRE(longest >= 3 * t.train_len);  // past the window
    if (t.name == "passkey") REQUIRE(t.depths == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
    if (t.name == "unscramble") REQUIRE(t.train_len >= 68);
  }
  REQUIRE(runs == task_names().size() * p.pes.size() * static_cast<size_t>(c.task_seeds));
  REQUIRE(c.task_seeds == 2);
}
