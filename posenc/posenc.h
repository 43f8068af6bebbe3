// posenc.h — the one small interface through which the model meets a positional scheme.
//
// A scheme can act at two places (docs/model.md), each one virtual function:
//   1. the input embeddings:  x (B,T,C) += PE[pos0 .. pos0+T)        learned, sinusoidal
//   2. inside attention:      attention_terms(q, k, ...) hands the fused attention op
//                             (nn/attention_op.h) what the scores are made of, as data:
//                               q, k rotated by position              rope
//                               a relative-bias table bias[h, j - i]  alibi
//                               per-query-row rotation frequencies    rope, dynamic scaling
// The attention op reads that data and never asks which scheme made it. `none` acts nowhere.
// Each scheme, with all of its math, lives in its own file under posenc/.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.h"

namespace poslab {

enum class PeKind { none, learned, sinusoidal, rope, alibi, t5 };
PeKind parse_pe(const std::string& name);  // error lists the valid names
const char* pe_name(PeKind kind);
const std::vector<std::string>& pe_names();

// RoPE scaling at evaluation time (docs/model.md); only meaningful for rope.
enum class ScalingKind { none, linear, ntk, dynamic, yarn };
ScalingKind parse_scaling(const std::string& name);  // error lists the valid names
const char* scaling_name(ScalingKind kind);

// RoPE's two options (posenc/rope.h explains both): which dims form a rotated pair, and the
// share of each head's dims that is rotated at all.
enum class RopeLayout { interleaved, half };
RopeLayout parse_rope_layout(const std::string& name);  // error lists the valid names
const char* rope_layout_name(RopeLayout layout);
// r = 2 floor(f D / 2): the rotated dims of a head of D dims under --rope-fraction f.
int64_t rope_rotated_dims(int64_t D, double fraction);

struct RopeScaling {
  ScalingKind kind = ScalingKind::none;
  double factor = 0;      // 0: s = max(1, L / train_len) for a window of length L
  int64_t train_len = 0;  // T0, the training context length
  // linear only: >= 0 interpolates this one rotation pair alone (its angle divided by s), the
  // others unchanged: the study's frequency-by-frequency surgery. -1: every pair.
  int64_t pair = -1;
};

struct PosencConfig {
  PeKind kind = PeKind::none;
  int64_t d_model = 0;   // C
  int64_t n_head = 0;    // H (D = C / H)
  int64_t max_len = 0;   // learned: rows of wpe
  double theta = 10000;  // rope base
  RopeLayout rope_layout = RopeLayout::interleaved;
  double rope_fraction = 1;  // in (0, 1]
  int64_t t5_buckets = 32;   // t5: rows of rel_bias (posenc/t5.h)
  int64_t t5_max_distance = 128;
  bool causal = true;  // t5: the bucket function's two forms
  DType dtype = DType::f32;
  // learned: std of wpe's initial values, that of wte (0.02 or C^-0.5, nn/embedding.h)
  double init_std = 0.02;
};

// What a scheme hands the attention op for queries at positions q_pos0 .. q_pos0+Tq-1 and keys
// at positions 0 .. Tk-1 (place 2). P_i = q_pos0 + i is the position of query row i.
struct AttentionTerms {
  Tensor q, k;  // (B,Tq,H,D), (B,Tk,H,D): the queries and keys the scores are made of
  // (H, Tq+Tk-1) or undefined: scores[h,i,j] += rel_bias[h, j - i + Tq - 1], a bias that depends
  // only on the head and the relative position j - P_i (column c holds relative position
  // c - (Tq-1) - q_pos0). O(H T), never T x T. It may require grad: attention's backward then
  // hands the scheme dbias[h, c] = sum over b and the (i, j) of column c of dL/dscores.
  Tensor rel_bias;
  // (Tq, D/2) f64 or undefined: row i's keys are rotated relative to its query with row i's
  // own frequencies w[i, p] (RoPE with per-row frequencies: dynamic scaling). No gradient.
  Tensor row_freqs;
};

class PositionalEncoding {
 public:
  virtual ~PositionalEncoding() = default;
  virtual PeKind kind() const = 0;
  // Place 1. x: (B,T,C) at positions pos0..pos0+T-1. Default: unchanged.
  virtual Tensor add_to_embeddings(const Tensor& x, int64_t /*pos0*/) const { return x; }
  // Place 2. q: (B,Tq,H,D) at positions q_pos0..; k: (B,Tk,H,D) at positions 0..Tk-1 (Tk is
  // the length of the whole context, which RoPE scaling picks s from). offset (the evaluation's
  // --position-offset): the whole window sits offset positions further on, so query row i is at
  // offset + q_pos0 + i and key j at offset + j; only absolute schemes care (RoPE's angles;
  // relative biases depend on i - j alone). Default: q and k as given, no bias.
  virtual AttentionTerms attention_terms(const Tensor& q, const Tensor& k, int64_t /*q_pos0*/,
                                         bool /*causal*/, int64_t /*offset*/ = 0) const {
    return {q, k, Tensor(), Tensor()};
  }
  // Learned parameters with their checkpoint names (docs/formats.md).
  virtual std::vector<std::pair<std::string, Tensor>> parameters() const { return {}; }
  // RoPE only: evaluation-time scaling. Other schemes refuse it.
  virtual void set_scaling(const RopeScaling& s);
  // Moves the learned parameters to `device` (GPT::to). Default: nothing to move.
  virtual void to(Device /*device*/) {}
};

std::unique_ptr<PositionalEncoding> make_posenc(const PosencConfig& cfg, Generator& gen);

}  // namespace poslab
