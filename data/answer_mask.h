// answer_mask.h — the answer mask of a task corpus (the trainer's `answer` objective).
//
// A task corpus is a prepared corpus (corpus.h: train.bin, val.bin, vocab.json) whose splits
// are examples laid end to end, every one exactly E tokens long (padded at its end), plus one
// mask file per split, beside its .bin file:
//   train.mask, val.mask   one uint8 per token of train.bin / val.bin, nothing else:
//                            2  the first token of an example (read, not predicted)
//                            1  an answer token: the model's prediction of it is scored
//                            0  any other token (prompt or padding: read, not predicted)
// So example k is tokens [k E, (k+1) E); its first token, and no other, is marked 2; E is the
// distance between two 2s. Example, E = 12, the reverse task's "abc=cba\n" padded with '_':
//   tokens   a b c = c b a \n _ _ _ _
//   mask     2 0 0 0 1 1 1 1  0 0 0 0
// A trainer with context T reads example k as input tokens [kE, kE+T) and targets
// [kE+1, kE+T+1), so E must be T + 1; a target is kept where the mask says 1, else ignored.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace poslab {

// The mask values above.
enum AnswerMark : uint8_t { mark_context = 0, mark_answer = 1, mark_example_start = 2 };

struct AnswerMask {
  std::vector<uint8_t> marks;  // one per token
  int64_t example_len = 0;     // E
};

// Reads a .mask file for a split of n_tokens tokens and checks the layout above: the same
// number of entries as tokens, values 0..2, a 2 at every multiple of E and nowhere else (so
// n_tokens is a whole number of examples), at least one answer token per example. Every
// refusal names the file and the byte offset.
AnswerMask load_answer_mask(const std::string& path, size_t n_tokens);

// Writes marks (each 0..2) atomically as a .mask file.
void write_answer_mask(const std::string& path, const std::vector<uint8_t>& marks);

}  // namespace poslab
