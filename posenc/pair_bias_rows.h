// pair_bias_rows.h — a per-pair bias made row by row inside attention, for evaluation.
//
// A per-pair bias bias[b, h, i, j] as a tensor (AttentionTerms::bias) costs Bp H Tq Tk numbers:
// at one window of 4,096 tokens and 4 heads, 268 MB in f32, written once and read once per
// layer. When nothing needs its gradient (evaluation, generation), the scheme hands the
// attention op this object instead, and the op asks it for one score row at a time, inside the
// row block it is working on (nn/attention_kernels.cpp, bias_and_scale): the bias lives in the
// cache for as long as the row does, and memory stays O(Tk) per thread. FIRE makes its bias this
// way (posenc/fire.cpp). The values are those of the tensor the scheme would have built, to the
// bit: the op adds either one in the same place.
#pragma once
#include <cstdint>

namespace poslab {

class PairBiasRows {
 public:
  virtual ~PairBiasRows() = default;
  // s[j - lo] += bias[b, h, i, j] for the keys j in [lo, hi) of query row i of sequence b
  // (row i at position q_pos0 + i, as in AttentionOptions), head h. Called from many threads at
  // once: it must not change the object.
  virtual void add_row(int64_t b, int64_t h, int64_t i, int64_t lo, int64_t hi, float* s) const = 0;
  virtual void add_row(int64_t b, int64_t h, int64_t i, int64_t lo, int64_t hi,
                       double* s) const = 0;
};

}  // namespace poslab
