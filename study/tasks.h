// tasks.h — three synthetic tasks that isolate what positions are for (the study's tasks,
// SPEC 7.8): each is trained short and tested long.
//
// Each task makes examples: a prompt, then the answer, which ends with "\n". One character is
// one token (the examples are ASCII). A model is trained on a task corpus (write_task_corpus)
// with the trainer's `answer` objective: one example per training window, starting at
// position 0, padded with '_' to the window, and the loss counts the answer tokens only — so
// every gradient is about the task, not about predicting filler or random letters.
//
//   unscramble  "pens two ann red=ann two red pens\n"
//               k words of a sentence in a random order -> the sentence. Twelve slots in a
//               fixed sentence order (who, does, how many, size, quality, colour, material,
//               things, where, when, how, how often), each with its own word list, disjoint
//               from the others: a word says its slot. A sentence of k words takes k distinct
//               slots (a uniformly random subset) in sentence order, one word each; so the bag
//               of words determines the sentence for every k (exactly one right answer: sort
//               the words by slot). Trained on k uniform in 2..6 (every slot appears in
//               training, in every pairing), tested at k = 4 .. 12: the same slots, more of
//               them than ever seen at once. Words have 3-5 letters: k = 6 fits 72 characters,
//               k = 12 fits 144 (unscramble_max_length).
//   reverse     "qwhdk=kdhwq\n": n random letters, '=', the same letters reversed. Letter j of
//               the answer is a copy of the letter 2j+1 positions back — a pure position
//               lookup, no bag of letters says which comes next. Trained on 1 .. (T-2)/2
//               letters (T = 66: 1..32), tested at n = 16 .. 64 letters.
//   passkey     filler text with "the pass key is 48213. " hidden at a chosen depth (0 = the
//               start of the filler, 1 = its end), then "pass key? 48213\n": retrieve the five
//               digits (Mohtashami & Jaggi 2023, "Landmark Attention", whose filler we borrow).
//               The filler also holds distractors, "the room is 30517. " and the like (one per
//               96 filler characters, at least one, each a different five-digit number): the
//               digits alone do not say which number is the key, only the phrase before it
//               does. Trained on lengths T/2 .. T at random depths, tested on a depth x length
//               grid from T to 16 T: does retrieval survive beyond the training length, and
//               from every depth?
//
// Scores (task_accuracy): at each answer position the model's argmax, given the correct
// prefix. Exact match: all of an example's answer characters right — the same event as greedy
// decoding writing the whole answer, so this is greedy decoding's exact-match accuracy,
// computed in one forward pass. Per-character accuracy: the fraction of answer characters
// (their closing '\n' included) whose argmax is right. n fresh examples per cell (seeded,
// another stream than the corpus), with Wilson 95% intervals.
#pragma once
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "nn/gpt.h"

namespace poslab {

// unscramble | reverse | passkey
const std::vector<std::string>& task_names();

// One example: the characters the model reads, and where its answer is.
struct TaskExample {
  std::string text;         // prompt then answer; ASCII, one character = one token
  size_t answer_start = 0;  // the answer is text[answer_start, end); it ends in '\n'
  // passkey: the key's distance from the question, the index of the question's first
  // character minus that of the key's last; -1 for the other tasks.
  int64_t distance = -1;
};

// The generators (each draws from g). unscramble: a sentence of k words, 1 <= k <= 12.
// reverse: `letters` random letters (>= 1). passkey: exactly `length` characters with the
// needle at `depth` in [0, 1] of the filler: it starts after round(depth * F) filler
// characters, F = length minus the needle and the question (39 characters; F must hold one
// distractor of 19: length >= 58).
TaskExample unscramble_example(Generator& g, int64_t k);
TaskExample reverse_example(Generator& g, int64_t letters);
TaskExample passkey_example(Generator& g, int64_t length, double depth);

// unscramble's word lists, one per slot, in sentence order.
const std::vector<std::vector<std::string>>& unscramble_slots();
// The longest unscramble example of k words, in characters: 2 (5k + k - 1) + 2.
int64_t unscramble_max_length(int64_t k);
// The distractor phrases of passkey (each followed by five digits and ". ").
const std::vector<std::string>& passkey_distractor_phrases();

// The training distribution for a window of T tokens (every example at most T characters):
// unscramble k uniform in 2..6 (T >= 72); reverse 1 .. (T-2)/2 letters, uniform; passkey
// length uniform in [max(T/2, 58), T], depth uniform in [0, 1].
TaskExample training_example(const std::string& task, int64_t window, Generator& g);
// The longest training example in the unit of a test cell's length: unscramble 6 words,
// reverse (T-2)/2 letters, passkey T characters (tasks.csv's train_len).
int64_t trained_length(const std::string& task, int64_t window);

// A test cell, its length in the task's unit: unscramble k words, reverse `length` letters,
// passkey `length` characters at `depth` (NaN for the other tasks).
struct TaskCell {
  int64_t length = 0;
  double depth = NAN;
};
TaskExample test_example(const std::string& task, const TaskCell& cell, Generator& g);
// The longest example of a test cell of `length`, in characters (= tokens: what a learned
// position table must hold): unscramble unscramble_max_length(k), reverse 2 length + 2,
// passkey length.
int64_t test_example_length(const std::string& task, int64_t length);

// The characters a task's examples use, and '_' (padding), sorted: its vocabulary.
std::vector<std::string> task_vocab(const std::string& task);

// A task corpus in `dir` (docs/formats.md, data/answer_mask.h): train_examples then
// val_examples training examples (one Generator(seed) stream), each padded with '_' to
// window + 1 tokens, with their answer masks.
void write_task_corpus(const std::string& task, int64_t window, int64_t train_examples,
                       int64_t val_examples, uint64_t seed, const std::string& dir);

// Counts over examples: n examples, `correct` answered exactly; `chars` answer characters,
// `correct_chars` of them right (argmax given the correct prefix).
struct TaskScore {
  int64_t n = 0, correct = 0, chars = 0, correct_chars = 0;
  double accuracy() const { return n ? double(correct) / double(n) : NAN; }
  double char_accuracy() const { return chars ? double(correct_chars) / double(chars) : NAN; }
};

// The bucket of a passkey distance d: [0, 64), [64, 128), [128, 256), ... doubling (SPEC 7 v5
// part 9): reach is a distance, not a length. Returns [lo, hi).
std::pair<int64_t, int64_t> distance_bucket(int64_t d);

// The examples scored in one forward pass (padded with '_' to the longest). A model trained on
// random positions reads a draw per example (seed 0, the example's index `first` + b in its
// cell) while the pass fits in [0, Lmax); a longer one reads contiguous positions, the only
// choice past Lmax.
// exact (optional) receives whether each example was answered exactly.
TaskScore score_answers(const GPT& model, const std::vector<std::string>& vocab,
                        const std::vector<TaskExample>& examples, int64_t first = 0,
                        std::vector<bool>* exact = nullptr);

// n fresh test examples of a cell (Generator(seed)), in forward passes of about 16384 tokens
// (long passkey examples several to a pass). by_distance (optional): each passkey example's
// exact match added to its distance bucket (distance_bucket's lo -> n, correct).
using DistanceScores = std::map<int64_t, std::pair<int64_t, int64_t>>;
TaskScore task_accuracy(const GPT& model, const std::vector<std::string>& vocab,
                        const std::string& task, const TaskCell& cell, int64_t n, uint64_t seed,
                        DistanceScores* by_distance = nullptr);

// Wilson's 95% score interval for a binomial proportion correct / n (Wilson 1927): the p whose
// normal test does not reject at 5%. Unlike p +- 1.96 sqrt(p(1-p)/n) it stays inside [0, 1]
// and is not empty at 0 or n correct. n = 0 gives [0, 1]. For exact match n counts examples;
// for per-character accuracy it counts characters, which treats the characters of one example
// as independent trials (they are not: the interval is then too narrow, a lower bound on the
// uncertainty).
struct ProportionInterval {
  double low = 0, high = 1;
};
ProportionInterval wilson_interval(int64_t correct, int64_t n);

}  // namespace poslab
