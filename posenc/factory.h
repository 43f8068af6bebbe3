// factory.h — the schemes by name: the --pe names, a scheme's settings as a checkpoint records
// them (PosencConfig), and make_posenc, which builds the scheme they name. This file sits
// above the six schemes (posenc/none.h ... t5.h); the interface they share is posenc.h.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "posenc/rope.h"

namespace poslab {

PeKind parse_pe(const std::string& name);  // error lists the valid names
const char* pe_name(PeKind kind);
const std::vector<std::string>& pe_names();  // PeKind's order

// A scheme and its own settings (the flags --pe, --max-len, --theta, ...): what a checkpoint
// records of it. The model's sizes reach the scheme apart (PosencDims).
struct PosencConfig {
  PeKind kind = PeKind::rope;
  int64_t max_len = 0;   // learned: rows of wpe (0: the model's block_size, filled in by GPT)
  double theta = 10000;  // rope: the base of the frequencies (posenc/rope.h)
  RopeLayout rope_layout = RopeLayout::interleaved;  // rope: which dims pair up
  double rope_fraction = 1;                          // rope: share of each head rotated, (0, 1]
  int64_t t5_buckets = 32;                           // t5: rows of rel_bias (posenc/t5.h)
  int64_t t5_max_distance = 128;                     // t5: the last bucket's start
  double rope_proportion = 1;    // rope: share of pairs that turn, [0, 1] (p-RoPE; rope.h)
  int64_t fire_width = 32;       // fire: the MLP's hidden width W (posenc/fire.h)
  double xpos_scale_base = 512;  // xpos: B of the decay zeta^(n/B) (posenc/xpos.h)
  // Every k-th layer without a positional term (0: off; PosencDims::positional_layer).
  int64_t nope_every = 0;
  // Training positions drawn from [0, Lmax) per sequence (0: off; posenc/random_positions.h).
  int64_t random_positions = 0;

  // The settings against the model's dims, each bad value named with its flag: rope
  // (validate_rope), t5 (validate_t5), the v5 options. Before a model is built, so nothing is
  // allocated first. dims.block_size is T0 (random positions: Lmax >= T0).
  void validate(const PosencDims& dims) const;
};

// Whether the scheme adds position inside attention (where --nope-every can leave a layer
// without it): rope, alibi, t5, kerple, fire, xpos.
bool acts_in_attention(PeKind kind);

// The scheme of cfg for a model of dims; its learned tables drawn from gen.
std::unique_ptr<PositionalEncoding> make_posenc(const PosencConfig& cfg, const PosencDims& dims,
                                                Generator& gen);

}  // namespace poslab
