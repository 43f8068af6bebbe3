// tasks.h — two synthetic tasks that isolate what positions are for (the study's tasks).
//
// reverse   "qwhdkslapz=zpalskdhwq\n": ten random letters, '=', the same letters reversed.
//           Every letter of the answer is a copy of the letter at a mirrored *position*; a
//           bag of letters does not say which comes next. Accuracy: the whole reversed string
//           predicted right (argmax at each of its positions, given the correct prefix).
// passkey   filler "the sky is blue. " repeated, a key "k=48213;" hidden at a random depth,
//           and at the end "?48213\n": retrieve the 5 digits. Trained on lines of length
//           train_len, tested at longer lines: does retrieval survive past T0?
// The task text is prepared as a corpus (docs/formats.md layout) and trained on like any other.
#pragma once
#include <string>
#include <vector>

#include "nn/gpt.h"

namespace poslab {

// n_lines task lines of about `line_len` characters (reverse ignores line_len), concatenated.
std::string task_text(const std::string& task, int64_t n_lines, int64_t line_len, uint64_t seed);

// Over n fresh instances (lines of `line_len`): the share whose whole answer the model
// predicts (exact), and the share of answer characters predicted right (per_char; chance is
// 1/26 for reverse, 1/10 for passkey digits), each argmax given the correct prefix.
struct TaskScore {
  double exact = 0, per_char = 0;
};
TaskScore task_accuracy(const GPT& model, const std::vector<std::string>& vocab,
                        const std::string& task, int64_t line_len, int64_t n, uint64_t seed);

}  // namespace poslab
