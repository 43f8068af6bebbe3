// random_positions.h — randomized positional encodings (Ruoss, Delétang, Genewein, Grau-Moya,
// Csordás, Bennani, Legg & Veness, "Randomized Positional Encodings Boost Length Generalization
// of Transformers", ACL 2023).
//
// A model trained on windows of T0 tokens sees positions 0..T0-1 only; at 4 T0 it meets
// positions (absolute schemes) or distances (RoPE) it never trained on. Ruoss et al. let
// training see them: each training sequence takes T0 distinct positions drawn uniformly from
// [0, Lmax), Lmax >> T0, sorted ascending, in place of 0..T0-1, wherever a position enters
// (learned rows, sinusoidal rows, RoPE's angles, the distances of the biases, FIRE's query
// position). Only the order of the positions carries meaning; their gaps are noise, so the
// model learns to read order, not distance. Every position and distance below Lmax is then
// trained, and a window of L <= Lmax at evaluation draws the same way (one draw per window):
// at L = Lmax the draw is 0..L-1 exactly.
//
// Draw (what follows the paper's `np.random.choice(Lmax, T, replace=False)` then sort):
// a partial Fisher-Yates shuffle of 0..Lmax-1 takes T distinct values uniformly, then sorted.
// Here each row of a batch draws its own (the authors draw once per batch) and every layer
// reads the same draw (their RoPE draws again per layer); docs/model.md says why.
// The draws come from their own generators (seeded by the run's seed and the step, or by the
// evaluation's --seed and the window's index), so a run's batches are those it has without
// random positions, and a resumed run draws what it would have drawn.
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/ops.h"

namespace poslab {

// T distinct sorted positions from [0, Lmax), T <= Lmax.
std::vector<int32_t> draw_positions(int64_t T, int64_t Lmax, Generator& gen);

// (B, T) positions, row b drawn from the generator seeded by `seed` and the index first + b
// (a training step's rows: first = 0 with the step in the seed; an evaluation's windows: first
// = the window's index).
Ids draw_position_rows(int64_t B, int64_t T, int64_t Lmax, uint64_t seed, int64_t first);

// The seed of training step `step` of a run seeded `run_seed` (val batches: step = -1 - i).
uint64_t position_seed(uint64_t run_seed, int64_t step);

}  // namespace poslab
