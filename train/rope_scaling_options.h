// rope_scaling_options.h — a RoPE scaling as the user asks for it: flags, or an HF config file.
//
// `eval` and `generate` take a scaling (posenc/rope_scaling.h) in one of two ways that mean the
// same, so that a published model's configuration can be read as it ships:
//   flags  --rope-scaling KIND [--factor s] [KIND's options, e.g. --low-freq-factor 1]
//   file   --rope-scaling-config FILE: an HF `rope_scaling` (or `rope_parameters`) JSON object,
//          e.g. Llama 3.1's {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
//          "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
// Each option is one HF key, and belongs to the kinds whose HF type takes that key:
//   option              HF key              kinds                 valid values
//   --factor            factor              every kind            s >= 1 (dynamic: HF's f >= 1)
//   --low-freq-factor   low_freq_factor     llama3                > 0 (default 1)
//   --high-freq-factor  high_freq_factor    llama3                > low_freq_factor (default 4)
//   --short-factor      short_factor        longrope              r/2 numbers > 0 (default all 1)
//   --long-factor       long_factor         longrope (required)   r/2 numbers > 0
//   --attention-factor  attention_factor    yarn, longrope        > 0
//   --beta-fast         beta_fast           yarn                  > beta_slow (default 32)
//   --beta-slow         beta_slow           yarn                  > 0 (default 1)
//   --mscale            mscale              yarn                  >= 0
//   --mscale-all-dim    mscale_all_dim      yarn                  >= 0
//   --yarn-truncate     truncate            yarn                  true|false (default true)
// (r: the checkpoint's rotated dims of a head.) An option of another kind is an error, as is a
// config key of another type. The file's other keys: `rope_type` (or `type`, required), one of
// default (no scaling), linear, dynamic, yarn, llama3, longrope (HF has no ntk type: it changes
// `rope_theta` instead); `original_max_position_embeddings` and `rope_theta`, which must equal
// the checkpoint's T0 and theta; a null value counts as absent. The file together with
// --rope-scaling, --factor or an option is an error. Every error names the flag, or the file
// and the key (tests/train/test_rope_scaling_options.cpp).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "nn/gpt.h"
#include "posenc/rope_scaling.h"
#include "train/args.h"

namespace poslab {

// What a scaling is checked against: the checkpoint's T0 (block_size), RoPE base theta and
// rotated dims r of a head (longrope's lists hold r/2 numbers).
struct ScaledModel {
  int64_t train_len = 0;
  double theta = 10000;
  int64_t rotated_dims = 0;
};
ScaledModel scaled_model(const GPTConfig& cfg);

// --rope-scaling, --rope-scaling-config and every option of the table above, for a command's
// flag list.
std::vector<FlagSpec> rope_scaling_flags();

// The scaling the flags ask for (kind none when none is asked), checked for model m; with
// --rope-scaling-config, the file's (rope_scaling_from_json).
RopeScaling rope_scaling_options(const Args& a, const ScaledModel& m);

// An HF rope_scaling object, read from `text`; `file` names it in errors.
RopeScaling rope_scaling_from_json(std::string_view text, const std::string& file,
                                   const ScaledModel& m);

}  // namespace poslab
