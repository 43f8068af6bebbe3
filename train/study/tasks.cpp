#include "train/study/tasks.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "data/answer_mask.h"
#include "data/corpus.h"

namespace poslab {
namespace {

// passkey's texts. The filler is the one of the passkey test of Mohtashami & Jaggi (2023),
// lower-cased; the needle and the question are ours, short enough for small windows.
const std::string kFiller =
    "the grass is green. the sky is blue. the sun is yellow. here we go. there and back again. ";
const std::string kNeedle = "the pass key is ";        // + 5 digits + ". "
const std::string kQuestion = "pass key? ";            // + 5 digits + "\n" (the answer)
constexpr int64_t kPasskeyOverhead = 16 + 7 + 10 + 6;  // needle, question, answer: 39
constexpr char kPad = '_';

int64_t uniform_int(Generator& g, int64_t lo, int64_t hi) {  // in [lo, hi]
  return lo + static_cast<int64_t>(g.next_u64() % static_cast<uint64_t>(hi - lo + 1));
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

void check_task(const std::string& task) {
  const auto& names = task_names();
  if (std::find(names.begin(), names.end(), task) == names.end())
    fail("tasks: unknown task '", task, "'; valid: unscramble|reverse|passkey");
}

}  // namespace

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> names{"unscramble", "reverse", "passkey"};
  return names;
}

// Six slots, eight words each, no word in two lists: the slot of a word is known from the word
// alone, so sorting the bag by slot recovers the sentence.
const std::vector<std::vector<std::string>>& unscramble_slots() {
  static const std::vector<std::vector<std::string>> slots{
      {"ann", "bob", "eve", "ida", "max", "ned", "sam", "tom"},                 // who
      {"buys", "sells", "hides", "finds", "needs", "wants", "packs", "holds"},  // does
      {"two", "three", "four", "five", "six", "seven", "eight", "nine"},        // how many
      {"red", "green", "blue", "pink", "black", "white", "grey", "brown"},      // colour
      {"cups", "hats", "keys", "maps", "pens", "rugs", "socks", "toys"},        // things
      {"today", "now", "again", "early", "late", "daily", "often", "soon"}};    // when
  return slots;
}

// A sentence, one word per slot; the prompt shows its words in a uniformly random order
// (Fisher-Yates), the answer the sentence.
TaskExample unscramble_example(Generator& g) {
  std::vector<std::string> words;
  for (const auto& list : unscramble_slots()) words.push_back(list[g.next_u64() % list.size()]);
  std::vector<std::string> shuffled = words;
  for (size_t i = shuffled.size() - 1; i > 0; --i)
    std::swap(shuffled[i], shuffled[g.next_u64() % (i + 1)]);
  std::string prompt = join(shuffled) + "=";
  return {prompt + join(words) + "\n", prompt.size()};
}

TaskExample reverse_example(Generator& g, int64_t letters) {
  if (letters < 1) fail("reverse: expected at least 1 letter, but got ", letters);
  std::string s;
  for (int64_t i = 0; i < letters; ++i) s.push_back(static_cast<char>('a' + g.next_u64() % 26));
  return {s + "=" + std::string(s.rbegin(), s.rend()) + "\n", s.size() + 1};
}

// filler[0, p) + needle + filler[p, F) + question + answer, p = round(depth F): the filler is
// one periodic text with the needle spliced in, so nothing but the needle marks its place.
TaskExample passkey_example(Generator& g, int64_t length, double depth) {
  if (length <= kPasskeyOverhead)
    fail("passkey: expected a length above ", kPasskeyOverhead,
         " (the needle and the question), but got ", length);
  if (!(depth >= 0 && depth <= 1)) fail("passkey: expected a depth in [0, 1], but got ", depth);
  const std::string key = std::to_string(uniform_int(g, 10000, 99999));
  const int64_t F = length - kPasskeyOverhead;
  std::string filler;
  while (static_cast<int64_t>(filler.size()) < F) filler += kFiller;
  filler.resize(F);
  const size_t p = static_cast<size_t>(std::llround(depth * static_cast<double>(F)));
  std::string prompt = filler.substr(0, p) + kNeedle + key + ". " + filler.substr(p) + kQuestion;
  return {prompt + key + "\n", prompt.size()};
}

TaskExample training_example(const std::string& task, int64_t window, Generator& g) {
  check_task(task);
  if (task == "unscramble") return unscramble_example(g);
  if (task == "reverse") {
    if (window < 4) fail("reverse: expected a window of at least 4, but got ", window);
    return reverse_example(g, uniform_int(g, 1, (window - 2) / 2));
  }
  if (window <= kPasskeyOverhead)
    fail("passkey: expected a window above ", kPasskeyOverhead, ", but got ", window);
  int64_t length = uniform_int(g, std::max<int64_t>(window / 2, kPasskeyOverhead + 1), window);
  return passkey_example(g, length, g.uniform());
}

TaskExample test_example(const std::string& task, const TaskCell& cell, Generator& g) {
  check_task(task);
  if (task == "unscramble") return unscramble_example(g);
  if (task == "reverse") {
    if (cell.length < 4 || cell.length % 2 != 0)
      fail("reverse: expected an even test length >= 4 (2 letters + 2), but got ", cell.length);
    return reverse_example(g, (cell.length - 2) / 2);
  }
  return passkey_example(g, cell.length, cell.depth);
}

std::vector<std::string> task_vocab(const std::string& task) {
  check_task(task);
  std::set<char> chars{kPad, '\n', '='};
  if (task == "reverse")
    for (char c = 'a'; c <= 'z'; ++c) chars.insert(c);
  if (task == "unscramble")
    for (const auto& list : unscramble_slots())
      for (const std::string& w : list) chars.insert(w.begin(), w.end());
  if (task == "passkey")
    for (const std::string& s : {kFiller, kNeedle, kQuestion, std::string("0123456789. ")})
      chars.insert(s.begin(), s.end());
  if (task != "reverse") chars.insert(' ');
  std::vector<std::string> vocab;
  for (char c : chars) vocab.push_back(std::string(1, c));
  return vocab;
}

namespace {

// Appends `count` training examples, each padded to window + 1 tokens, and their marks.
void append_examples(const std::string& task, int64_t window, int64_t count,
                     const std::vector<std::string>& vocab, Generator& g,
                     std::vector<uint16_t>& tokens, std::vector<uint8_t>& marks) {
  const uint16_t pad = encode(vocab, std::string(1, kPad))[0];
  for (int64_t k = 0; k < count; ++k) {
    TaskExample ex = training_example(task, window, g);
    std::vector<uint16_t> ids = encode(vocab, ex.text);
    if (static_cast<int64_t>(ids.size()) > window)
      fail(task, ": an example of ", ids.size(), " characters does not fit the window of ", window,
           " tokens; choose a larger window");
    ids.resize(window + 1, pad);
    std::vector<uint8_t> m(window + 1, mark_context);
    m[0] = mark_example_start;
    std::fill(m.begin() + ex.answer_start, m.begin() + ex.text.size(), mark_answer);
    tokens.insert(tokens.end(), ids.begin(), ids.end());
    marks.insert(marks.end(), m.begin(), m.end());
  }
}

}  // namespace

void write_task_corpus(const std::string& task, int64_t window, int64_t train_examples,
                       int64_t val_examples, uint64_t seed, const std::string& dir) {
  Corpus c;
  c.vocab = task_vocab(task);
  Generator g(seed);
  std::vector<uint8_t> train_marks, val_marks;
  append_examples(task, window, train_examples, c.vocab, g, c.train, train_marks);
  append_examples(task, window, val_examples, c.vocab, g, c.val, val_marks);
  c.parts = {{"task " + task, c.train.size(), c.val.size()}};
  write_corpus(c, dir);
  // the masks last: a folder with val.mask is complete
  write_answer_mask(dir + "/train.mask", train_marks);
  write_answer_mask(dir + "/val.mask", val_marks);
}

// One forward pass over the examples (padded with '_' after their ends, which a causal model
// never sees from an answer position), then at each answer character c the argmax of the
// logits at position c - 1.
int64_t exact_answers(const GPT& model, const std::vector<std::string>& vocab,
                      const std::vector<TaskExample>& examples) {
  const uint16_t pad = encode(vocab, std::string(1, kPad))[0];
  std::vector<std::vector<uint16_t>> ids;
  size_t L = 0;  // input length: the longest example minus its last character
  for (const TaskExample& ex : examples) {
    ids.push_back(encode(vocab, ex.text));
    L = std::max(L, ids.back().size() - 1);
  }
  const int64_t B = static_cast<int64_t>(examples.size()), T = static_cast<int64_t>(L);
  Ids x{std::vector<int32_t>(B * T, pad), {B, T}};
  for (int64_t b = 0; b < B; ++b)
    std::copy(ids[b].begin(), ids[b].end() - 1, x.data.begin() + b * T);
  const std::vector<double> logits = model.logits(x).to_vector();  // (B,T,V)
  const int64_t V = model.config().vocab_size;
  int64_t correct = 0;
  for (int64_t b = 0; b < B; ++b) {
    bool ok = true;
    for (size_t c = examples[b].answer_start; c < ids[b].size() && ok; ++c) {
      const double* row = logits.data() + (b * T + static_cast<int64_t>(c) - 1) * V;
      ok = std::max_element(row, row + V) - row == ids[b][c];
    }
    correct += ok;
  }
  return correct;
}

TaskScore task_accuracy(const GPT& model, const std::vector<std::string>& vocab,
                        const std::string& task, const TaskCell& cell, int64_t n, uint64_t seed) {
  Generator g(seed);
  NoGrad no_grad;
  TaskScore s{n, 0};
  // chunks of about 4096 input tokens: one forward pass each, attention memory bounded
  const int64_t per_chunk = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, cell.length));
  for (int64_t done = 0; done < n; done += per_chunk) {
    std::vector<TaskExample> chunk;
    for (int64_t k = done; k < std::min(n, done + per_chunk); ++k)
      chunk.push_back(test_example(task, cell, g));
    s.correct += exact_answers(model, vocab, chunk);
  }
  return s;
}

// Wilson (1927), "Probable inference, the law of succession, and statistical inference", JASA
// 22(158): the p with |phat - p| <= z sqrt(p (1-p) / n), solved for p (a quadratic):
//   centre = (phat + z^2 / 2n) / (1 + z^2 / n)
//   half   = z / (1 + z^2 / n) * sqrt(phat (1 - phat) / n + z^2 / 4n^2)
// with z = 1.959964, the normal quantile at 97.5%.
Interval wilson_interval(int64_t correct, int64_t n) {
  if (n <= 0) return {0, 1};
  if (correct < 0 || correct > n)
    fail("wilson_interval: expected 0 <= correct <= n, but got ", correct, " of ", n);
  const double z = 1.959963984540054, N = static_cast<double>(n);
  const double p = static_cast<double>(correct) / N, z2 = z * z;
  const double centre = (p + z2 / (2 * N)) / (1 + z2 / N);
  const double half = z / (1 + z2 / N) * std::sqrt(p * (1 - p) / N + z2 / (4 * N * N));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace poslab
