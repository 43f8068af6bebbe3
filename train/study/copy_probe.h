// copy_probe.h — copy at a distance (SPEC 7.5): can a model use what it read d characters
// back? A perplexity past the training length only says a scheme is not hurt by a longer
// window; this asks whether the longer window is used.
//
// A random string s of m characters (uniform over the alphabet: the model's vocabulary
// without the newline) is planted twice in val text. One example is a window of 2m + d
// characters, its tokens at positions
//   [0, m)            s, the first copy (the window starts with it)
//   [m, m + d)        d characters of val text from a seeded offset
//   [m + d, 2m + d)   s again, the second copy
// so d is the gap from the first copy's end to the second copy's start; a window of 4096
// holds d up to 4096 - 2m. The model reads the first 2m + d - 1 characters, each predicting
// the next, from position 0. Score: the mean loss on the second copy's last m - 1 characters
// (its first is not predictable: nothing announces the copy). Control: the same window with
// another random string as the first copy, so only the planted copy can lower the loss; the
// copy gain loss_control - loss_planted (nats per character) says how much of the first copy
// the model retrieves across d.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/gpt.h"

namespace poslab {

struct CopyOptions {
  int64_t m = 24;  // the string's length
  std::vector<int64_t> distances{16, 32, 64, 128, 256, 512, 1024, 2048, 4048};  // gaps d
  int64_t n = 200;                 // examples per distance (each planted and control)
  uint64_t seed = 1;               // the examples of distance d: Generator(seed * 1000003 + d)
  std::vector<uint16_t> alphabet;  // token ids of s; empty: every id of the vocabulary
  int64_t batch_tokens = 16384;    // input tokens per forward pass (windows of one d)
  // > 0: at most this many input tokens per distance (planted and control windows together),
  // so n shrinks where windows are long: n_d = min(n, max(1, max_tokens / (2 (2m + d - 1)))).
  // The cost of a window grows faster than its length (attention): at n = 200 the gap of 4048
  // costs about half of the whole probe, 2048 a quarter (test_study "[.copy_timing]").
  int64_t max_tokens = 0;
};

// One distance: n examples (n_d), the mean loss per character of the second copy's last m - 1.
struct CopyRow {
  long distance = 0, n = 0;
  double loss_planted = 0, loss_control = 0;
};

// The study's distances for windows up to max_len: 16, 32, 64, ... (powers of 2 below
// max_len - 2m), then max_len - 2m itself (max_len 4096, m 24: 16 .. 2048, 4048).
std::vector<int64_t> copy_distances(int64_t max_len, int64_t m);

// Every token id of a vocabulary (data/corpus.h) but the newline's.
std::vector<uint16_t> copy_alphabet(const std::vector<std::string>& vocab);

// One example at gap d: the planted and the control window (2m + d tokens each), equal but
// for the first copy. Draws from g: the val offset, s, the control's first copy.
struct CopyExample {
  std::vector<uint16_t> planted, control;
};
CopyExample copy_example(const std::vector<uint16_t>& val, int64_t m, int64_t d,
                         const std::vector<uint16_t>& alphabet, Generator& g);

// The examples at gap d: o.n, lowered by o.max_tokens where it is set.
int64_t copy_examples_at(const CopyOptions& o, int64_t d);

// Every distance of o on the model, under NoGrad, windows of one distance batched.
std::vector<CopyRow> copy_probe(const GPT& model, const std::vector<uint16_t>& val,
                                const CopyOptions& o);

}  // namespace poslab
