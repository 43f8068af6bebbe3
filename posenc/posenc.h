// posenc.h — the one small interface through which the model meets a positional scheme.
//
// A scheme can act at two places (SPEC 1-2):
//   1. the input embeddings:  x (B,T,C) += PE[pos0 .. pos0+T)        learned, sinusoidal
//   2. inside attention:      q, k (B,T,H,D) rotated by position      rope
//                             scores[h,i,j] += -m_h (i - j)           alibi (slopes only here;
//                             the bias is added inside the fused attention op, nn/attention_op)
// `none` acts nowhere. Each scheme lives in its own file under posenc/.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.h"

namespace poslab {

enum class PeKind { none, learned, sinusoidal, rope, alibi };
PeKind parse_pe(const std::string& name);  // error lists the valid names
const char* pe_name(PeKind kind);
const std::vector<std::string>& pe_names();

// RoPE scaling at evaluation time (SPEC 2); only meaningful for rope.
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
};

struct PosencConfig {
  PeKind kind = PeKind::none;
  int64_t d_model = 0;   // C
  int64_t n_head = 0;    // H (D = C / H)
  int64_t max_len = 0;   // learned: rows of wpe
  double theta = 10000;  // rope base
  RopeLayout rope_layout = RopeLayout::interleaved;
  double rope_fraction = 1;  // in (0, 1]
  DType dtype = DType::f32;
};

class PositionalEncoding {
 public:
  virtual ~PositionalEncoding() = default;
  virtual PeKind kind() const = 0;
  // Place 1. x: (B,T,C) at positions pos0..pos0+T-1. Default: unchanged.
  virtual Tensor add_to_embeddings(const Tensor& x, int64_t /*pos0*/) const { return x; }
  // Place 2. x: (B,T,H,D) (q or k) at positions pos0..; L is the length of the whole context
  // (used by RoPE scaling to pick s). Default: unchanged.
  virtual Tensor rotate(const Tensor& x, int64_t /*pos0*/, int64_t /*L*/) const { return x; }
  // Place 2'. ALiBi slopes m_h per head; empty for every other scheme.
  virtual std::vector<double> alibi_slopes() const { return {}; }
  // Learned parameters with their checkpoint names (SPEC 4).
  virtual std::vector<std::pair<std::string, Tensor>> parameters() const { return {}; }
  // RoPE only: evaluation-time scaling. Other schemes refuse it.
  virtual void set_scaling(const RopeScaling& s);
  // Moves the learned parameters to `device` (GPT::to). Default: nothing to move.
  virtual void to(Device /*device*/) {}
};

// A parameter moved to another device: the same values in a new leaf that requires grad, as
// PyTorch's module.to() does. Itself when it is there already.
inline Tensor parameter_to(const Tensor& p, Device device) {
  if (p.device() == device) return p;
  Tensor t = p.detach().to(device);
  t.set_requires_grad(true);
  return t;
}

std::unique_ptr<PositionalEncoding> make_posenc(const PosencConfig& cfg, Generator& gen);

}  // namespace poslab
