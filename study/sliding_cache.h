// sliding_cache.h — the sliding-window losses of a run (train/eval.h), computed once per model
// and kept in the run's folder.
//
// The sliding pass scores the val targets the run's evaluations use (targets 1 .. W L of the
// evaluation with the most targets; every target of the split when every window is
// evaluated) with a window of the training length T0, without RoPE scaling (a window of T0
// needs none), so it is the same for every evaluation length and every scaling of the run: it
// is computed once and each evaluation looks its targets up in it (add_sliding_loss). Two
// files, each written atomically:
//   sliding.bin   the loss of each target t = 1 .. N, float32 little-endian, target t at index
//                 t-1 (the model computes in f32, so the values are exact)
//   sliding.json  {"window":256,"stride":64,"targets":254919,"model_hash":"..",
//                  "tokens_hash":"..","bin_hash":".."}: what the losses were computed from.
//                 The cache is used only when all of these match: the window, the model's
//                 weights and the val tokens (FNV-1a hashes), and sliding.bin's bytes (so a
//                 crash between the two writes cannot pair one model's losses with another's
//                 description), and when it holds at least the targets asked for.
#pragma once
#include <string>
#include <vector>

#include "nn/gpt.h"

namespace poslab {

// The sliding losses of targets 1 .. `targets` of `val` (0: all of them; sliding_losses) with
// window T0 = the model's block_size: read from run_dir when the cache matches and holds them
// (and !recompute), otherwise computed (scaling set to none for the pass, then back to none)
// and written there. iv: the positions' draws of a random-position model (study_positions).
std::vector<double> run_sliding_losses(const std::string& run_dir, GPT& model,
                                       const std::vector<uint16_t>& val, bool recompute,
                                       int64_t targets = 0, const Interventions& iv = {});

}  // namespace poslab
