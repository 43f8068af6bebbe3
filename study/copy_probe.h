// copy_probe.h — copy at a distance, v2 (SPEC 7 v5 part 5): can a model use what it read d
// characters back, and is what it uses the order of the characters? A perplexity past the
// training length only says a scheme is not hurt by a longer window; this asks whether the
// longer window is used, and for copying rather than for a cache of characters.
//
// The planted string s is m consecutive characters of the train split at a seeded offset
// (in-distribution text, not random symbols). One example is a window of lead + 2m + d
// characters of val text with s planted twice, its tokens at positions
//   [0, lead)                       val text (the window starts at position 0)
//   [lead, lead + m)                s, the first copy
//   [lead + m, lead + m + d)        the val text that follows
//   [lead + m + d, lead + 2m + d)   s again, the second copy
// so d is the gap from the first copy's end to the second copy's start. The model reads the
// window but its last character from position 0, each predicting the next. Score: the mean
// loss on the second copy's last m - 1 characters (its first is not predictable: nothing
// announces the copy). Control: the same window with the first copy replaced by the same
// characters in a random order (the same bag; a string whose shuffle equals itself is drawn
// again). So the gain loss_control - loss_planted (nats per character) is order-aware copying
// across d, and share = gain / loss_control the part of the control's loss it removes; a
// model that only caches which characters occurred gains nothing. A model trained on random
// positions reads the study's draw (study_positions), the same for a window and its control.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nn/gpt.h"

namespace poslab {

struct CopyOptions {
  int64_t m = 32;      // the string's length
  int64_t lead = 128;  // val characters before the first copy
  std::vector<int64_t> distances{16, 32, 64, 128, 256, 512, 1024, 2048, 3904};  // gaps d
  int64_t n = 200;               // examples per distance (each planted and control)
  uint64_t seed = 1;             // the examples of distance d: Generator(seed * 1000003 + d)
  int64_t batch_tokens = 16384;  // input tokens per forward pass (windows of one d)
};

// One distance: n examples, the mean loss per character of the second copy's last m - 1
// characters, planted and control; gain = control - planted; share = gain / control.
struct CopyRow {
  long distance = 0, n = 0;
  double loss_planted = 0, loss_control = 0, gain = 0, share = 0;
};

// The study's distances for windows up to max_len: 16, 32, 64, ... (powers of 2 below
// max_len - lead - 2m), then max_len - lead - 2m itself (4096, m 32, lead 128: 16 .. 2048, 3904).
std::vector<int64_t> copy_distances(int64_t max_len, int64_t m, int64_t lead);
// The study's options for windows up to max_len: m = 32 and lead = 128, each at most an eighth
// of max_len (a toy study's short windows), its distances, n examples each.
CopyOptions study_copy_options(int64_t max_len, int64_t n);
// The characters of one example at gap d: lead + 2m + d.
int64_t copy_window_length(const CopyOptions& o, int64_t d);

// One example at gap d: the planted and the control window, equal but for the first copy.
// Draws from g: the val offset, the train offset of s, the shuffle.
struct CopyExample {
  std::vector<uint16_t> planted, control;
};
CopyExample copy_example(const std::vector<uint16_t>& train, const std::vector<uint16_t>& val,
                         const CopyOptions& o, int64_t d, Generator& g);

// Every distance of o on the model, under NoGrad, windows of one distance batched.
std::vector<CopyRow> copy_probe(const GPT& model, const std::vector<uint16_t>& train,
                                const std::vector<uint16_t>& val, const CopyOptions& o);

}  // namespace poslab
