// The synthetic tasks of the study (study/tasks.h): each generator's invariants, the task
// corpus and its mask, exact-match and per-character scoring, Wilson's interval.
#include "study/tasks.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "data/answer_mask.h"
#include "data/corpus.h"
#include "study/study.h"
#include "tests/support/temp_dir.h"

using namespace poslab;
using Catch::Contains;

namespace {

std::vector<std::string> words_of(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

// The slot of every word of unscramble; the lists are disjoint, so a word names its slot.
std::map<std::string, size_t> slot_of_words() {
  std::map<std::string, size_t> slot_of;
  const auto& slots = unscramble_slots();
  for (size_t s = 0; s < slots.size(); ++s)
    for (const std::string& w : slots[s]) {
      REQUIRE(slot_of.emplace(w, s).second);
      REQUIRE(w.size() >= 3);
      REQUIRE(w.size() <= 5);
    }
  return slot_of;
}

}  // namespace

TEST_CASE("unscramble: k words whose slots allow one order, for every k of 1..12", "[study]") {
  const std::map<std::string, size_t> slot_of = slot_of_words();
  const auto& slots = unscramble_slots();
  REQUIRE(slots.size() == 12);
  Generator g(11);
  for (int64_t k = 1; k <= 12; ++k) {
    size_t identity = 0;
    for (int i = 0; i < 200; ++i) {
      TaskExample ex = unscramble_example(g, k);
      REQUIRE(static_cast<int64_t>(ex.text.size()) <= unscramble_max_length(k));
      REQUIRE(ex.text[ex.answer_start - 1] == '=');
      REQUIRE(ex.text.back() == '\n');
      std::vector<std::string> bag = words_of(ex.text.substr(0, ex.answer_start - 1));
      std::vector<std::string> answer = words_of(ex.text.substr(ex.answer_start));
      REQUIRE(static_cast<int64_t>(answer.size()) == k);
      std::vector<std::string> a = bag, b = answer;
      std::sort(a.begin(), a.end()), std::sort(b.begin(), b.end());
      REQUIRE(a == b);  // a permutation of the shuffled words
      // the answer's slots are distinct and in sentence order: sorting the bag by slot is the
      // one right answer
      for (size_t j = 1; j < answer.size(); ++j)
        REQUIRE(slot_of.at(answer[j - 1]) < slot_of.at(answer[j]));
      std::sort(bag.begin(), bag.end(), [&](const std::string& x, const std::string& y) {
        return slot_of.at(x) < slot_of.at(y);
      });
      REQUIRE(bag == answer);
      identity += ex.text.substr(0, ex.answer_start - 1) + "\n" == ex.text.substr(ex.answer_start);
    }
    if (k >= 4) REQUIRE(identity < 20);  // the prompt is shuffled (1 in k! keeps the order)
  }
  REQUIRE(unscramble_max_length(6) == 72);
  REQUIRE(unscramble_max_length(12) == 144);
  REQUIRE(test_example_length("unscramble", 12) == 144);
  REQUIRE_THROWS_WITH(unscramble_example(g, 13), Contains("1 <= k <= 12 words, but got 13"));
  REQUIRE(test_example("unscramble", {9}, g).text.find('=') != std::string::npos);
}

TEST_CASE("unscramble trains on 2..6 words, every slot seen, within a window of 72", "[study]") {
  const std::map<std::string, size_t> slot_of = slot_of_words();
  Generator g(5);
  std::set<size_t> ks, seen_slots;
  for (int i = 0; i < 2000; ++i) {
    TaskExample ex = training_example("unscramble", 72, g);
    REQUIRE(ex.text.size() <= 72);
    std::vector<std::string> answer = words_of(ex.text.substr(ex.answer_start));
    ks.insert(answer.size());
    for (const std::string& w : answer) seen_slots.insert(slot_of.at(w));
  }
  REQUIRE(ks == std::set<size_t>{2, 3, 4, 5, 6});
  REQUIRE(seen_slots.size() == 12);
  REQUIRE(trained_length("unscramble", 72) == 6);
  REQUIRE_THROWS_WITH(training_example("unscramble", 71, g), Contains("window of at least 72"));
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
  // a test cell's length counts letters
  REQUIRE(test_example("reverse", {64}, g).text.size() == 130);
  REQUIRE(trained_length("reverse", 66) == 32);
  REQUIRE(test_example_length("reverse", 64) == 130);
  REQUIRE_THROWS_WITH(reverse_example(g, 0), Contains("at least 1 letter"));
}

namespace {

// The distractors of a passkey filler: [start, end) of each "phrase + 5 digits + '. '".
std::vector<std::pair<size_t, size_t>> distractors_in(const std::string& f) {
  std::vector<std::pair<size_t, size_t>> found;
  for (const std::string& phrase : passkey_distractor_phrases())
    for (size_t at = f.find(phrase); at != std::string::npos; at = f.find(phrase, at + 1))
      found.push_back({at, at + phrase.size() + 7});
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

TEST_CASE("passkey: exact length, the needle where the depth puts it, distractors, the key asked",
          "[study]") {
  Generator g(4);
  for (int64_t len : {58, 64, 129, 256, 512, 4096})
    for (double depth : {0.0, 0.25, 0.5, 0.75, 1.0}) {
      TaskExample ex = passkey_example(g, len, depth);
      REQUIRE(static_cast<int64_t>(ex.text.size()) == len);
      const size_t at = ex.text.find("the pass key is ");
      REQUIRE(ex.text.find("the pass key is ", at + 1) == std::string::npos);
      const std::string key = ex.text.substr(at + 16, 5);
      REQUIRE(ex.text.substr(at + 21, 2) == ". ");
      REQUIRE(std::all_of(key.begin(), key.end(), ::isdigit));
      REQUIRE(key[0] != '0');  // a five-digit number
      REQUIRE(ex.text.substr(ex.answer_start - 10) == "pass key? " + key + "\n");
      // the filler: all but needle (23), question (10), answer (6)
      const std::string f =
          ex.text.substr(0, at) + ex.text.substr(at + 23, ex.answer_start - 10 - at - 23);
      const int64_t F = len - 39;
      REQUIRE(static_cast<int64_t>(f.size()) == F);
      const auto d = distractors_in(f);
      REQUIRE(static_cast<int64_t>(d.size()) == std::max<int64_t>(1, F / 96));
      std::set<std::string> numbers{key};
      for (const auto& [s, e] : d) {
        REQUIRE(f.substr(e - 2, 2) == ". ");
        const std::string number = f.substr(e - 7, 5);
        REQUIRE(std::all_of(number.begin(), number.end(), ::isdigit));
        REQUIRE(number[0] != '0');
        REQUIRE(numbers.insert(number).second);  // each number differs from the key and the others
        REQUIRE((s == 0 || f.substr(s - 2, 2) == ". "));  // at a sentence boundary
      }
      // the needle at round(depth F), or at the nearer edge of a distractor it would split
      const size_t p = static_cast<size_t>(std::llround(depth * F));
      bool inside = false;
      for (const auto& [s, e] : d) {
        REQUIRE(!(s < at && at < e));
        inside = inside || (s < p && p < e);
      }
      if (inside) REQUIRE(std::abs(double(at) - double(p)) <= 9);
      if (!inside) REQUIRE(at == p);
    }
  REQUIRE_THROWS_WITH(passkey_example(g, 57, 0.5), Contains("length of at least 58"));
  REQUIRE_THROWS_WITH(passkey_example(g, 100, 1.5), Contains("depth in [0, 1]"));
  REQUIRE(trained_length("passkey", 256) == 256);
  REQUIRE(test_example_length("passkey", 4096) == 4096);
}

TEST_CASE(
    "passkey by distance: the question's first character minus the key's last, buckets "
    "doubling from 64",
    "[study]") {
  Generator g(11);
  for (int64_t len : {58, 256, 4096})
    for (double depth : {0.0, 0.3, 1.0}) {
      const TaskExample ex = passkey_example(g, len, depth);
      const int64_t key_last = static_cast<int64_t>(ex.text.find("the pass key is ")) + 16 + 4;
      const int64_t question = static_cast<int64_t>(ex.text.find("pass key? "));
      CHECK(ex.distance == question - key_last);
      if (depth == 1.0) CHECK(ex.distance == 3);  // the key's ". ", then the question
      if (depth == 0.0) CHECK(ex.distance == len - 36);
    }
  CHECK(reverse_example(g, 4).distance == -1);
  using B = std::pair<int64_t, int64_t>;
  CHECK(distance_bucket(0) == B{0, 64});
  CHECK(distance_bucket(63) == B{0, 64});
  CHECK(distance_bucket(64) == B{64, 128});
  CHECK(distance_bucket(255) == B{128, 256});
  CHECK(distance_bucket(4060) == B{2048, 4096});
  // every example of a cell lands in one bucket: the buckets add up to the cell
  std::vector<std::string> vocab = task_vocab("passkey");
  GPTConfig cfg;
  cfg.vocab_size = static_cast<int64_t>(vocab.size()), cfg.n_layer = 1, cfg.n_head = 2,
  cfg.n_embd = 8, cfg.block_size = 64;
  GPT m(cfg, 3);
  DistanceScores by;
  const TaskScore s = task_accuracy(m, vocab, "passkey", {300, 0.75}, 30, 5, &by);
  int64_t n = 0, correct = 0;
  for (const auto& [lo, nc] : by) n += nc.first, correct += nc.second;
  CHECK((n == s.n && correct == s.correct));
}

// Whether v4's tasks.csv (one row per length x depth cell, no example's distance) could give
// the passkey table by distance without the models: only if each cell's examples all sat in
// one bucket. The study's grid (lengths 128 .. 4096, depths 0 .. 1, 100 examples, the cells'
// seeds 1001, 1002, ... as runner.cpp draws them): at depth 0.75 a key sits about L/4 - 7
// characters back, at a bucket's edge for these powers of two, and the distractor rule moves
// it by up to 9, so some cells straddle two buckets. The v4 passkey runs are scored again.
TEST_CASE("passkey by distance: v4's cells straddle buckets, so its runs are scored again",
          "[study]") {
  const std::vector<int64_t> lens{128, 256, 512, 1024, 2048, 4096};
  const std::vector<double> depths{0, 0.25, 0.5, 0.75, 1};
  uint64_t seed = 1000;
  int straddling = 0;
  for (int64_t len : lens)
    for (double depth : depths) {
      Generator g(++seed);
      std::set<int64_t> buckets;
      for (int i = 0; i < 100; ++i)
        buckets.insert(distance_bucket(test_example("passkey", {len, depth}, g).distance).first);
      straddling += buckets.size() > 1;
    }
  CHECK(straddling > 0);
}

TEST_CASE("training examples fit the window and span the training distribution", "[study]") {
  Generator g(8);
  int64_t shortest = 1 << 20, longest = 0;
  for (int k = 0; k < 800; ++k) {
    int64_t n = static_cast<int64_t>(training_example("reverse", 66, g).text.size());
    shortest = std::min(shortest, n), longest = std::max(longest, n);
  }
  REQUIRE(shortest == 4);  // 1 letter
  REQUIRE(longest == 66);  // 32 letters: (66 - 2) / 2
  shortest = 1 << 20, longest = 0;
  for (int k = 0; k < 2000; ++k) {  // 129 lengths: each drawn about 15 times
    int64_t n = static_cast<int64_t>(training_example("passkey", 256, g).text.size());
    shortest = std::min(shortest, n), longest = std::max(longest, n);
  }
  REQUIRE(shortest >= 128);
  REQUIRE(shortest < 135);
  REQUIRE(longest == 256);
  REQUIRE_THROWS_WITH(training_example("passkey", 57, g), Contains("window of at least 58"));
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

TEST_CASE("exact match and per-character accuracy: greedy decoding's answers count", "[study]") {
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
  TaskScore s = score_answers(m, vocab, greedy);
  REQUIRE((s.n == 2 && s.correct == 2 && s.chars == 8 && s.correct_chars == 8));
  // one wrong character: that example is wrong, the other three of its characters still count
  // (the argmax given the correct prefix; here the prefix after it is greedy's own)
  std::vector<TaskExample> wrong = greedy;
  char& c = wrong[1].text[wrong[1].answer_start + 3];
  c = c == 'a' ? 'b' : 'a';
  s = score_answers(m, vocab, wrong);
  REQUIRE((s.correct == 1 && s.chars == 8 && s.correct_chars == 7));
  REQUIRE(s.accuracy() == 0.5);
  REQUIRE(s.char_accuracy() == 7.0 / 8);
  // an untrained model reverses nothing; every answer character is counted
  s = task_accuracy(m, vocab, "reverse", {5}, 30, 9);
  REQUIRE((s.n == 30 && s.correct == 0 && s.chars == 30 * 6));
  REQUIRE(s.correct_chars < s.chars);
  REQUIRE(std::isnan(TaskScore{}.accuracy()));
}

TEST_CASE("passkey cells of long examples are scored several to a forward pass", "[study]") {
  std::vector<std::string> vocab = task_vocab("passkey");
  GPTConfig cfg;
  cfg.vocab_size = static_cast<int64_t>(vocab.size()), cfg.n_layer = 1, cfg.n_head = 2,
  cfg.n_embd = 8, cfg.block_size = 64;
  GPT m(cfg, 3);
  // the same examples scored in one call and one by one: the same counts
  const TaskScore all = task_accuracy(m, vocab, "passkey", {600, 0.5}, 40, 5);
  Generator g(5);
  TaskScore one;
  for (int i = 0; i < 40; ++i) {
    NoGrad ng;
    const TaskScore s = score_answers(m, vocab, {test_example("passkey", {600, 0.5}, g)});
    one.n += s.n, one.correct += s.correct, one.chars += s.chars,
        one.correct_chars += s.correct_chars;
  }
  REQUIRE((all.n == 40 && all.chars == 40 * 6));
  REQUIRE((all.correct == one.correct && all.correct_chars == one.correct_chars));
}

TEST_CASE("Wilson's 95% interval: hand-computed values", "[study]") {
  // centre +- half, centre = (p + z^2/2n) / (1 + z^2/n), half = z / (1 + z^2/n) *
  // sqrt(p(1-p)/n + z^2/4n^2), z = 1.959964; e.g. 0/10: high = z^2 / (10 + z^2) = 0.277533
  auto near = [](ProportionInterval i, double lo, double hi) {
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

TEST_CASE("the plan's task runs: every scheme x task x task seed, tests past training", "[study]") {
  const StudyConfig c = study_config(StudySize::full);
  const StudyPlan p = study_plan(c);
  REQUIRE(p.tasks.size() == task_names().size());
  size_t runs = 0;
  for (const RunSpec& r : p.runs) {
    if (!r.task) continue;
    ++runs;
    const TaskSpec& t = *r.task;
    REQUIRE(r.name == "task_" + t.name + "_" + r.scheme + "_s" + std::to_string(r.train.seed));
    REQUIRE(r.train.objective == Objective::answer);
    REQUIRE(r.train.data == t.data);
    REQUIRE(r.train.model.block_size == t.train_len);
    const int64_t longest = *std::max_element(t.test_lens.begin(), t.test_lens.end());
    // every test length past what training showed (unscramble: word counts k <= 12)
    REQUIRE(longest > trained_length(t.name, t.train_len));
    if (t.name == "unscramble") REQUIRE(longest <= 12);
    if (t.name == "passkey") REQUIRE(t.depths == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  }
  // every task with every task seed (3), but NoPE's reverse and passkey (2)
  REQUIRE((c.task_seeds == 3 && c.none_task_seeds == 2));
  REQUIRE(runs == p.pes.size() * 3 * 3 - 2);
}
