// t5.h — T5's relative position bias (Raffel et al., "Exploring the Limits of Transfer
// Learning with a Unified Text-to-Text Transformer", JMLR 2020, section 2.1).
//
// One learned table rel_bias (num_buckets, H), shared by every layer, adds a scalar per head
// to each attention score, after the 1/sqrt(D) scaling (like ALiBi) and before the softmax:
//
//   scores[h, i, j] = q_i . k_j / sqrt(D)  +  rel_bias[bucket(i - j), h]
//
// Why it is relative: the bias depends on i and j only through the offset n = i - j, so a pair
// of tokens gets the same bias wherever the pair sits in the window; nothing is added to the
// token embeddings, and the model never sees an absolute position.
//
// Buckets (mesh-tensorflow's `_relative_position_bucket`; HF's T5 is the same). With
// nb = num_buckets and n = i - j (query i, key j):
//   causal:        n = max(n, 0)                  (future keys are masked anyway)
//   bidirectional: nb = num_buckets / 2; add nb when j > i (the future gets its own half of the
//                  table); n = |i - j|
//   max_exact = nb / 2
//   bucket = n                                                             if n < max_exact
//          = min(nb - 1, max_exact + floor(ln(n / max_exact) / ln(max_distance / max_exact)
//                                          * (nb - max_exact)))         otherwise
// Half the buckets are exact offsets 0 .. max_exact-1, where word order matters most; the
// other half cover max_exact .. max_distance on a log scale, so each bucket there spans more
// offsets the farther it is.
//
// Worked example, the defaults num_buckets = 32, max_distance = 128 (tests: "T5 buckets: the
// defaults, by hand"):
//   causal (max_exact = 16; n = 20: 16 + floor(ln(20/16) / ln(128/16) * 16) = 16 + floor(1.72)):
//     n       0   1  ..  15   16   17   20   24   32   64  100  127  128  1000
//     bucket  0   1  ..  15   16   16   17   19   21   26   30   31   31    31
//   bidirectional (16 buckets a side, max_exact = 8; n = 16: 8 + floor(ln 2 / ln 16 * 8) = 10):
//     i - j   0   1  ..   7    8   15   16   24   32   64  128    -1   -8  -16  -128
//     bucket  0   1  ..   7    8    9   10   11   12   14   15    17   24   26    31
//
// Why it stops at max_distance: every offset >= max_distance lands in the last bucket (31
// above), so one learned number stands for "far". This is what makes T5 extrapolate: a window
// longer than training meets no unseen parameter, only more keys in that last bucket, whose
// value was trained on every offset from 113 (the defaults' first offset there) to T0 - 1. The
// price: past max_distance the bias cannot tell distances apart; only the content can.
//
// The bias table (what attention reads). Queries at positions P_i = q_pos0 + i (i < Tq) and
// keys at j < Tk meet the relative positions r = j - P_i = -(Tq-1) - q_pos0 .. Tk-1 - q_pos0;
// column c of the table holds r_c = c - (Tq-1) - q_pos0, and t5_bias_table gathers
//   bias[h, c] = rel_bias[bucket(-r_c), h]          (-r_c = i - j, the offset n above)
// O(H (Tq + Tk)), never a T x T matrix. It is an embedding lookup of the bucket ids in
// rel_bias, transposed.
//
// Backward (hand-derived). S[b,h,i,j] = s(q,k) + rel_bias[bucket(i - j), h], so
//   dL/drel_bias[u, h] = sum over b, i, j with bucket(i - j) = u of dS[b,h,i,j]
//                      = sum over delta with bucket(delta) = u of dbias[h][delta],
// where dbias[h][delta] = sum_b sum_{i - j = delta} dS[b,h,i,j] is what attention hands back
// for the table (its column of offset delta). A scatter-add of dbias by bucket and head: the
// embedding lookup's own backward (tests: "gradcheck: the T5 bias table", "the T5 table's gradient
// is the scatter-add by bucket").
//
// Training: rel_bias is drawn N(0, 0.02^2) and, like the embeddings, gets no weight decay (it is
// a table of per-offset preferences, not a weight matrix; decaying it would pull every bucket
// towards "no preference").
#pragma once
#include "posenc/posenc.h"

namespace poslab {

struct T5Options {
  int64_t num_buckets = 32;    // --t5-buckets
  int64_t max_distance = 128;  // --t5-max-distance
  bool causal = true;
};

// Refuses options the bucket formula cannot use, naming the flag: at least 2 buckets (4 when
// bidirectional, so each half has max_exact >= 1), and max_distance > max_exact.
void validate_t5(const T5Options& o);

// The bucket of offset n = i - j (query i, key j), as above.
int64_t t5_bucket(int64_t n, const T5Options& o);

// rel_bias: (num_buckets, H) -> bias (H, Tq+Tk-1) for queries at q_pos0 .. q_pos0+Tq-1 and
// keys at 0 .. Tk-1: column c holds the relative position r_c = c - (Tq-1) - q_pos0 = j - P_i,
// bias[h, c] = rel_bias[bucket(-r_c), h]. Differentiable in rel_bias.
Tensor t5_bias_table(const Tensor& rel_bias, int64_t q_pos0, int64_t Tq, int64_t Tk,
                     const T5Options& o);

// The scheme: the learned table and its options. Checkpoint name: transformer.rel_bias.weight.
// It hands attention the bias table (posenc.h, AttentionTerms::rel_bias), which requires grad:
// attention's backward gives dbias, and the table's lookup scatters it into rel_bias.
class T5Bias final : public PositionalEncoding {
 public:
  T5Bias(int64_t n_head, const T5Options& o, Generator& gen, DType dtype = DType::f32);
  PeKind kind() const override { return PeKind::t5; }
  // Its table is computed from the learned weights at every call (a gradient path per layer).
  AttentionTerms attention_terms(const Tensor& q, const Tensor& k, bool causal,
                                 const PositionContext& ctx) const override;
  const T5Options& options() const { return opt_; }
  const Tensor& weight() const { return rel_bias_; }  // (num_buckets, H)
  // t5_bias_table of this table (H, Tq+Tk-1)
  Tensor table(int64_t q_pos0, int64_t Tq, int64_t Tk) const {
    return t5_bias_table(rel_bias_, q_pos0, Tq, Tk, opt_);
  }
  std::vector<std::pair<std::string, Tensor>> parameters() const override {
    return {{"transformer.rel_bias.weight", rel_bias_}};
  }
  void to(Device device) override { rel_bias_ = parameter_to(rel_bias_, device); }

 private:
  T5Options opt_;
  Tensor rel_bias_;  // (num_buckets, H), N(0, 0.02^2)
};

}  // namespace poslab
