#include "study/tasks.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "data/answer_mask.h"
#include "data/corpus.h"

namespace poslab {
namespace {

// passkey's texts. The filler is the one of the passkey test of Mohtashami & Jaggi (2023),
// lower-cased; the needle, the distractors and the question are ours, short enough for small
// windows.
const std::string kFiller =
    "the grass is green. the sky is blue. the sun is yellow. here we go. there and back again. ";
const std::string kNeedle = "the pass key is ";        // + 5 digits + ". "
const std::string kQuestion = "pass key? ";            // + 5 digits + "\n" (the answer)
constexpr int64_t kPasskeyOverhead = 16 + 7 + 10 + 6;  // needle, question, answer: 39
constexpr int64_t kDistractorLen = 12 + 7;             // phrase + 5 digits + ". "
constexpr int64_t kDistractorEvery = 96;               // filler characters per distractor
constexpr int64_t kUnscrambleTrainWords = 6;           // training: k uniform in 2..6
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

// A uniformly random order of `items` (Fisher-Yates).
template <class T>
void shuffle(std::vector<T>& items, Generator& g) {
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[g.next_u64() % i]);
}

}  // namespace

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> names{"unscramble", "reverse", "passkey"};
  return names;
}

// Twelve slots in sentence order, eight words each, 3-5 letters, no word in two lists: the
// slot of a word is known from the word alone, so sorting the bag by slot recovers the
// sentence.
const std::vector<std::vector<std::string>>& unscramble_slots() {
  static const std::vector<std::vector<std::string>> slots{
      {"ann", "bob", "eve", "ida", "max", "ned", "sam", "tom"},                 // who
      {"buys", "sells", "hides", "finds", "needs", "wants", "packs", "holds"},  // does
      {"two", "three", "four", "five", "six", "seven", "eight", "nine"},        // how many
      {"big", "small", "tiny", "huge", "long", "short", "tall", "wide"},        // size
      {"good", "bad", "fine", "cheap", "nice", "dear", "rare", "plain"},        // quality
      {"red", "green", "blue", "pink", "black", "white", "grey", "brown"},      // colour
      {"wool", "silk", "tin", "iron", "clay", "jade", "glass", "stone"},        // material
      {"cups", "hats", "keys", "maps", "pens", "rugs", "socks", "toys"},        // things
      {"here", "there", "home", "away", "out", "back", "ahead", "aside"},       // where
      {"today", "now", "early", "late", "soon", "noon", "dusk", "dawn"},        // when
      {"fast", "slow", "well", "badly", "calm", "quiet", "loud", "gaily"},      // how
      {"once", "twice", "again", "daily", "often", "never", "still", "also"}};  // how often
  return slots;
}

int64_t unscramble_max_length(int64_t k) {
  return 2 * (5 * k + k - 1) + 2;
}

// k distinct slots (the first k of a shuffled list of all slots), in sentence order, one word
// each; the prompt shows the words in a uniformly random order, the answer the sentence.
TaskExample unscramble_example(Generator& g, int64_t k) {
  const auto& slots = unscramble_slots();
  const int64_t S = static_cast<int64_t>(slots.size());
  if (k < 1 || k > S) fail("unscramble: expected 1 <= k <= ", S, " words, but got ", k);
  std::vector<size_t> order(S);
  for (size_t s = 0; s < order.size(); ++s) order[s] = s;
  shuffle(order, g);
  order.resize(k);
  std::sort(order.begin(), order.end());
  std::vector<std::string> words;
  for (size_t s : order) words.push_back(slots[s][g.next_u64() % slots[s].size()]);
  std::vector<std::string> shuffled = words;
  shuffle(shuffled, g);
  std::string prompt = join(shuffled) + "=";
  return {prompt + join(words) + "\n", prompt.size()};
}

TaskExample reverse_example(Generator& g, int64_t letters) {
  if (letters < 1) fail("reverse: expected at least 1 letter, but got ", letters);
  std::string s;
  for (int64_t i = 0; i < letters; ++i) s.push_back(static_cast<char>('a' + g.next_u64() % 26));
  return {s + "=" + std::string(s.rbegin(), s.rend()) + "\n", s.size() + 1};
}

const std::vector<std::string>& passkey_distractor_phrases() {
  static const std::vector<std::string> phrases{"the room is ", "the year is ", "the code is "};
  return phrases;
}

namespace {

// A five-digit number not in `taken`, which then holds it.
std::string fresh_number(Generator& g, std::set<int64_t>& taken) {
  int64_t v = uniform_int(g, 10000, 99999);
  while (!taken.insert(v).second) v = uniform_int(g, 10000, 99999);
  return std::to_string(v);
}

// passkey's filler of F characters: kFiller repeated, with D = max(1, F / 96) distractors
// spliced in at its sentence boundaries (each boundary uniform, with replacement), each
// distractor a phrase and a number of its own. Returns the text and where each distractor is.
struct Filler {
  std::string text;
  std::vector<std::pair<size_t, size_t>> distractors;  // [start, end) in text
};

Filler passkey_filler(Generator& g, int64_t F, std::set<int64_t>& taken) {
  const int64_t D = std::max<int64_t>(1, F / kDistractorEvery);
  std::string base;
  while (static_cast<int64_t>(base.size()) < F - D * kDistractorLen) base += kFiller;
  base.resize(F - D * kDistractorLen);
  std::vector<size_t> bounds{0};  // where a sentence may start
  for (size_t i = 2; i <= base.size(); ++i)
    if (base[i - 2] == '.' && base[i - 1] == ' ') bounds.push_back(i);
  std::vector<size_t> at(D);
  for (size_t& a : at) a = bounds[g.next_u64() % bounds.size()];
  std::sort(at.begin(), at.end());
  const auto& phrases = passkey_distractor_phrases();
  Filler f;
  size_t done = 0;  // base[0, done) is in f.text
  for (size_t a : at) {
    f.text += base.substr(done, a - done);
    done = a;
    const std::string d = phrases[g.next_u64() % phrases.size()] + fresh_number(g, taken) + ". ";
    f.distractors.push_back({f.text.size(), f.text.size() + d.size()});
    f.text += d;
  }
  f.text += base.substr(done);
  return f;
}

}  // namespace

// filler[0, p) + needle + filler[p, F) + question + answer, p = round(depth F): one periodic
// text with the distractors and the needle spliced in, so nothing but the needle's phrase
// marks the key. A p inside a distractor moves to its nearer edge (at most 9 characters).
TaskExample passkey_example(Generator& g, int64_t length, double depth) {
  if (length < kPasskeyOverhead + kDistractorLen)
    fail("passkey: expected a length of at least ", kPasskeyOverhead + kDistractorLen,
         " (the needle, the question and one distractor), but got ", length);
  if (!(depth >= 0 && depth <= 1)) fail("passkey: expected a depth in [0, 1], but got ", depth);
  std::set<int64_t> taken;
  const std::string key = fresh_number(g, taken);
  const int64_t F = length - kPasskeyOverhead;
  const Filler f = passkey_filler(g, F, taken);
  size_t p = static_cast<size_t>(std::llround(depth * static_cast<double>(F)));
  for (const auto& [s, e] : f.distractors)
    if (s < p && p < e) p = p - s <= e - p ? s : e;
  std::string prompt = f.text.substr(0, p) + kNeedle + key + ". " + f.text.substr(p) + kQuestion;
  const int64_t key_last = static_cast<int64_t>(p + kNeedle.size() + key.size()) - 1;
  const int64_t question = static_cast<int64_t>(prompt.size() - kQuestion.size());
  return {prompt + key + "\n", prompt.size(), question - key_last};
}

TaskExample training_example(const std::string& task, int64_t window, Generator& g) {
  check_task(task);
  if (task == "unscramble") {
    if (window < unscramble_max_length(kUnscrambleTrainWords))
      fail("unscramble: expected a window of at least ",
           unscramble_max_length(kUnscrambleTrainWords), ", but got ", window);
    return unscramble_example(g, uniform_int(g, 2, kUnscrambleTrainWords));
  }
  if (task == "reverse") {
    if (window < 4) fail("reverse: expected a window of at least 4, but got ", window);
    return reverse_example(g, uniform_int(g, 1, (window - 2) / 2));
  }
  const int64_t shortest = kPasskeyOverhead + kDistractorLen;
  if (window < shortest)
    fail("passkey: expected a window of at least ", shortest, ", but got ", window);
  int64_t length = uniform_int(g, std::max<int64_t>(window / 2, shortest), window);
  return passkey_example(g, length, g.uniform());
}

std::pair<int64_t, int64_t> distance_bucket(int64_t d) {
  if (d < 0) fail("passkey: expected a distance >= 0, but got ", d);
  if (d < 64) return {0, 64};
  int64_t lo = 64;
  while (2 * lo <= d) lo *= 2;
  return {lo, 2 * lo};
}

int64_t trained_length(const std::string& task, int64_t window) {
  check_task(task);
  if (task == "unscramble") return kUnscrambleTrainWords;
  return task == "reverse" ? (window - 2) / 2 : window;
}

TaskExample test_example(const std::string& task, const TaskCell& cell, Generator& g) {
  check_task(task);
  if (task == "unscramble") return unscramble_example(g, cell.length);
  if (task == "reverse") return reverse_example(g, cell.length);
  return passkey_example(g, cell.length, cell.depth);
}

int64_t test_example_length(const std::string& task, int64_t length) {
  check_task(task);
  if (task == "unscramble") return unscramble_max_length(length);
  return task == "reverse" ? 2 * length + 2 : length;
}

std::vector<std::string> task_vocab(const std::string& task) {
  check_task(task);
  std::set<char> chars{kPad, '\n', '='};
  if (task == "reverse")
    for (char c = 'a'; c <= 'z'; ++c) chars.insert(c);
  if (task == "unscramble")
    for (const auto& list : unscramble_slots())
      for (const std::string& w : list) chars.insert(w.begin(), w.end());
  if (task == "passkey") {
    std::vector<std::string> texts = passkey_distractor_phrases();
    for (const std::string& s : {kFiller, kNeedle, kQuestion, std::string("0123456789. ")})
      texts.push_back(s);
    for (const std::string& s : texts) chars.insert(s.begin(), s.end());
  }
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

}  // namespace poslab
