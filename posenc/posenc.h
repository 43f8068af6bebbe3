// posenc.h — the one small interface through which the model meets a positional scheme.
//
// A scheme can act at two places (docs/model.md), each one virtual function:
//   1. the input embeddings:  x (B,T,C) += PE[pos0 .. pos0+T)        learned, sinusoidal
//   2. inside attention:      attention_terms(q, k, ...) hands the fused attention op
//                             (nn/attention_op.h) what the scores are made of, as data:
//                               q, k rotated by position              rope
//                               q, k rotated and scaled by position   xpos
//                               a relative-bias table bias[h, j - i]  alibi, t5, kerple
//                               a per-pair bias bias[b, h, i, j]      fire; a relative bias
//                                                                     under random positions
//                                 (made row by row in evaluation)     fire
//                               per-query-row rotation frequencies    rope, dynamic scaling
// The attention op reads that data and never asks which scheme made it. `none` acts nowhere.
// Each scheme, with all of its math, lives in its own file under posenc/; factory.h builds
// one from its name and settings.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.h"
#include "posenc/pair_bias_rows.h"
#include "posenc/rope_scaling.h"

namespace poslab {

enum class PeKind { none, learned, sinusoidal, rope, alibi, t5, kerple, fire, xpos };  // factory.h

// What a scheme takes from the model it sits in. n_head divides d_model (the model checks
// it: GPTConfig::validate).
struct PosencDims {
  int64_t d_model = 0;  // C
  int64_t n_head = 0;   // H (D = C / H)
  bool causal = true;   // t5: the bucket function's two forms
  DType dtype = DType::f32;
  // learned: std of wpe's initial values, that of wte (0.02 or C^-0.5, nn/embedding.h)
  double init_std = 0.02;
  int64_t block_size = 0;  // T0, the training length: FIRE's threshold starts there
  int64_t n_layer = 0;     // FIRE: one MLP per layer
  int64_t nope_every = 0;  // layers l with (l + 1) % k == 0 carry no position (0: none)
  // Whether layer l carries position (--nope-every k: not when (l + 1) mod k = 0).
  bool positional_layer(int64_t l) const { return nope_every <= 0 || (l + 1) % nope_every != 0; }
};

// What a scheme builds from the positions of one forward, once for every layer: RoPE's cos/sin
// tables, ALiBi's bias table, the sinusoidal rows. Each scheme defines its own type beside its
// math (RopeTables in rope.h, XPosTables, AlibiTables, SinusoidalTables), returns it from
// build() and reads it back with tables_of; to the context and to everyone else it is opaque.
struct SchemeTables {
  virtual ~SchemeTables() = default;
};

// The positions of one forward, and what the scheme builds from them once for that forward:
// the embeddings and every layer read the same context, and a scheme holds no state of its
// own, so its methods are functions of their inputs. GPT fills the positions; the scheme's
// context() adds its tables.
struct PositionContext {
  // Queries at positions offset + q_pos0 + [0, Tq), keys at offset + [0, Tk): a full forward
  // has q_pos0 = 0 and Tq = Tk = T; a decoding step, the Tq new tokens after q_pos0 cached ones
  // (Tk = q_pos0 + Tq).
  int64_t q_pos0 = 0, Tq = 0, Tk = 0;
  // The evaluation's --position-offset: the whole window sits offset positions further on.
  // Only absolute schemes see it (RoPE's angles, learned and sinusoidal rows); relative biases
  // depend on i - j alone.
  int64_t offset = 0;
  // Random positions (--random-positions, Ruoss et al. 2023; posenc/random_positions.h):
  // (Bp, Tk) sorted positions, one row per sequence of the batch, in place of 0..Tk-1; empty:
  // contiguous. Only whole windows (q_pos0 = 0, Tq = Tk) take them.
  Ids positions;
  // The block this context is handed to (GPT sets it per layer): FIRE has one MLP per layer.
  int64_t layer = 0;
  // The call's RoPE scaling (rope_scaling.h; kind none in training), which only RoPE reads:
  // the model refuses one for another scheme.
  RopeScaling scaling;
  // What the scheme built for these positions (PositionalEncoding::build), in the model's dtype
  // and on its device, read only by that scheme (tables_of); null for one that builds nothing.
  std::shared_ptr<const SchemeTables> tables;

  bool random() const { return !positions.data.empty(); }
  int64_t rows() const { return random() ? positions.shape[0] : 1; }  // Bp
  // The position of key j of sequence b (query row i: j = q_pos0 + i), the offset included.
  int64_t position(int64_t b, int64_t j) const {
    return offset + (random() ? positions.data[b * Tk + j] : j);
  }
  // The distance n = P_i - P_j of every (query, key) pair, (Bp, Tq, Tk) row-major: with
  // `causal`, pairs the mask removes (j after i) take n = 0 (no log of a negative number in
  // a bias formula); otherwise n = |P_i - P_j|.
  std::vector<double> distances(bool causal) const;
};

// The tables of ctx as scheme type T, for that scheme's own methods; an error naming `scheme`
// when ctx was built by another scheme (or by none).
template <class T>
const T& tables_of(const PositionContext& ctx, const char* scheme) {
  const T* t = dynamic_cast<const T*>(ctx.tables.get());
  if (!t)
    fail(scheme, ": expected a context built by this scheme (PositionalEncoding::context), but ",
         "it holds ", ctx.tables ? "another scheme's tables" : "no tables");
  return *t;
}

// What a scheme hands the attention op for queries at positions q_pos0 .. q_pos0+Tq-1 and keys
// at positions 0 .. Tk-1 (place 2). P_i = q_pos0 + i is the position of query row i. Built
// with named fields, e.g. {.q = q, .k = k, .rel_bias = table}; what is not named is undefined.
struct AttentionTerms {
  Tensor q{}, k{};  // (B,Tq,H,D), (B,Tk,H,D): the queries and keys the scores are made of
  // (H, Tq+Tk-1) or undefined: scores[h,i,j] += rel_bias[h, j - i + Tq - 1], a bias that depends
  // only on the head and the relative position j - P_i (column c holds relative position
  // c - (Tq-1) - q_pos0). O(H T), never T x T. It may require grad: attention's backward then
  // hands the scheme dbias[h, c] = sum over b and the (i, j) of column c of dL/dscores.
  Tensor rel_bias{};
  // (Tq, D/2) f64 or undefined: row i's keys are rotated relative to its query with row i's
  // own frequencies w[i, p] (RoPE with per-row frequencies: dynamic scaling). No gradient.
  Tensor row_freqs{};
  // (Bp, H, Tq, Tk) or undefined: scores[b,h,i,j] += bias[b or 0, h, i, j], a bias of each pair
  // (FIRE; relative biases under random positions). See nn/attention_options.h. May require grad.
  Tensor bias{};
  // The same per-pair bias made row by row inside attention, with no gradient: what FIRE hands
  // over when nothing needs one (evaluation, generation; posenc/pair_bias_rows.h).
  std::shared_ptr<const PairBiasRows> bias_rows{};
};

class PositionalEncoding {
 public:
  virtual ~PositionalEncoding() = default;
  virtual PeKind kind() const = 0;
  // The context of one forward: `at` with its positions filled in, and the scheme's tables
  // built for them. Checks the offset (>= 0) and refuses a RoPE scaling unless it is RoPE.
  PositionContext context(const PositionContext& at, DType dtype, Device device) const;
  // Place 1. x: (B,Tq,C) at the query positions of `ctx`. Default: unchanged.
  virtual Tensor add_to_embeddings(const Tensor& x, const PositionContext& /*ctx*/) const {
    return x;
  }
  // Place 2. q: (B,Tq,H,D), k: (B,Tk,H,D) at the positions of `ctx` (Tk is the length of the
  // whole context, which RoPE scaling picks s from). Default: q and k as given, no bias.
  virtual AttentionTerms attention_terms(const Tensor& q, const Tensor& k, bool /*causal*/,
                                         const PositionContext& /*ctx*/) const {
    return {.q = q, .k = k};
  }
  // Learned parameters with their checkpoint names (docs/formats.md).
  virtual std::vector<std::pair<std::string, Tensor>> parameters() const { return {}; }
  // Moves the learned parameters to `device` (GPT::to). Default: nothing to move.
  virtual void to(Device /*device*/) {}
  // After every optimizer step (and once after initialisation): a projection that keeps the
  // learned parameters where the scheme needs them (KERPLE: p, a >= 0.01). Default: nothing.
  virtual void project() {}

 protected:
  // The scheme's tables for the positions of ctx (set and checked), in dtype on device.
  // Default: none.
  virtual std::shared_ptr<const SchemeTables> build(const PositionContext& /*ctx*/, DType /*dtype*/,
                                                    Device /*device*/) const {
    return nullptr;
  }
};

// For one call on its own (tests, benchmarks): the terms of q at positions q_pos0.. and k at
// 0.. (offset 0), with a context built for just this call.
AttentionTerms attention_terms_at(const PositionalEncoding& pe, const Tensor& q, const Tensor& k,
                                  int64_t q_pos0, bool causal, const RopeScaling& scaling = {});
// x: (B,T,C) at positions pos0..pos0+T-1, likewise.
Tensor add_to_embeddings_at(const PositionalEncoding& pe, const Tensor& x, int64_t pos0);

}  // namespace poslab
