// tasks.h — three synthetic tasks that isolate what positions are for (the study's tasks).
//
// Each task makes examples: a prompt, then the answer, which ends with "\n". One character is
// one token (the examples are ASCII). A model is trained on a task corpus (write_task_corpus)
// with the trainer's `answer` objective: one example per training window, starting at
// position 0, padded with '_' to the window, and the loss counts the answer tokens only — so
// every gradient is about the task, not about predicting filler or random letters.
//
//   unscramble  "keys two holds ann pink soon=ann holds two pink keys soon\n"
//               The words of a sentence in a random order -> the sentence. Every sentence
//               fills one template, "<who> <does> <how many> <colour> <things> <when>", and each
//               slot draws from its own word list, disjoint from the others: so each word says
//               which slot it fills, and the bag of words determines the sentence (the task
//               is well-posed: exactly one right answer). Order is all the model must add; a
//               model without any notion of position still has it from the causal mask (the
//               answer so far tells which slot comes next), so the task asks how well each
//               scheme lets a small model place and copy words.
//   reverse     "qwhdk=kdhwq\n": random letters, '=', the same letters reversed. Letter j of the
//               answer is a copy of the letter 2j+1 positions back — a pure position lookup, no
//               bag of letters says which comes next. Trained on 1 .. (T-2)/2 letters, tested
//               on longer strings, whose examples reach past the training window T: length
//               generalisation.
//   passkey     filler text with "the pass key is 48213. " hidden at a chosen depth (0 = the
//               start of the filler, 1 = its end), then "pass key? 48213\n": retrieve the five
//               digits (Mohtashami & Jaggi 2023, "Landmark Attention", whose filler we borrow).
//               Trained on lengths T/2 .. T at random depths, tested on a depth x length grid
//               from below T to past it: does retrieval survive beyond the training length, and
//               from every depth?
//
// Accuracy (task_accuracy) is exact match of the whole answer: at each answer position the
// model's argmax, given the correct prefix, must be the right character. Given the correct
// prefix, all argmaxes right is the same event as greedy decoding writing the whole answer, so
// this is greedy decoding's exact-match accuracy, computed in one forward pass. n fresh
// examples per cell (seeded, another stream than the corpus), with a Wilson 95% interval.
#pragma once
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
};

// The generators (each draws from g). unscramble: one sentence of the template. reverse:
// `letters` random letters (>= 1). passkey: exactly `length` characters with the needle at
// `depth` in [0, 1] of the filler: it starts after round(depth * F) filler characters, F =
// length minus the needle and the question (39 characters; length must exceed them).
TaskExample unscramble_example(Generator& g);
TaskExample reverse_example(Generator& g, int64_t letters);
TaskExample passkey_example(Generator& g, int64_t length, double depth);

// unscramble's word lists, one per slot of the template, in sentence order.
const std::vector<std::vector<std::string>>& unscramble_slots();

// The training distribution for a window of T tokens (every example at most T characters):
// unscramble any sentence (T >= the longest, 68); reverse 1 .. (T-2)/2 letters, uniform;
// passkey length uniform in [max(T/2, 40), T], depth uniform in [0, 1].
TaskExample training_example(const std::string& task, int64_t window, Generator& g);

// A test cell: the example length in characters and, for passkey, the depth (NaN otherwise).
// reverse: length = 2 letters + 2 (even, >= 4); unscramble: its training distribution (length
// is not used; the study reports it as the training window).
struct TaskCell {
  int64_t length = 0;
  double depth = 0;
};
TaskExample test_example(const std::string& task, const TaskCell& cell, Generator& g);

// The characters a task's examples use, and '_' (padding), sorted: its vocabulary.
std::vector<std::string> task_vocab(const std::string& task);

// A task corpus in `dir` (docs/formats.md, data/answer_mask.h): train_examples then
// val_examples training examples (one Generator(seed) stream), each padded with '_' to
// window + 1 tokens, with their answer masks.
void write_task_corpus(const std::string& task, int64_t window, int64_t train_examples,
                       int64_t val_examples, uint64_t seed, const std::string& dir);

// How many of the examples the model answers exactly (argmax at every answer character, given
// the correct prefix), in one forward pass over them all.
int64_t exact_answers(const GPT& model, const std::vector<std::string>& vocab,
                      const std::vector<TaskExample>& examples);

// n fresh test examples of a cell (Generator(seed)), in forward passes of about 4096 tokens:
// how many the model answers exactly.
struct TaskScore {
  int64_t n = 0, correct = 0;
};
TaskScore task_accuracy(const GPT& model, const std::vector<std::string>& vocab,
                        const std::string& task, const TaskCell& cell, int64_t n, uint64_t seed);

// Wilson's 95% score interval for a binomial proportion correct / n (Wilson 1927): the p whose
// normal test does not reject at 5%. Unlike p +- 1.96 sqrt(p(1-p)/n) it stays inside [0, 1]
// and is not empty at 0 or n correct. n = 0 gives [0, 1].
struct Interval {
  double low = 0, high = 1;
};
Interval wilson_interval(int64_t correct, int64_t n);

}  // namespace poslab
