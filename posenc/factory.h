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

  // The settings against the model's dims, each bad value named with its flag: rope
  // (validate_rope), t5 (validate_t5). Before a model is built, so nothing is allocated first.
  void validate(const PosencDims& dims) const;
};

// The scheme of cfg for a model of dims; its learned tables drawn from gen.
std::unique_ptr<PositionalEncoding> make_posenc(const PosencConfig& cfg, const PosencDims& dims,
                                                Generator& gen);

}  // namespace poslab
