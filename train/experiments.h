// experiments.h — `poslab experiments` / `make experiments`: the whole study of SPEC 7.
//
// Same corpus, network, seed and steps; only the positional scheme changes. Stages:
//   1. train none / learned / sinusoidal / rope / alibi at T0 (two seeds)
//   2. extrapolation: val loss at 256 ... 4096, whole window and last quarter, loss per position
//   3. RoPE scaling zero-shot: linear, ntk, dynamic, yarn at each length
//   4. ablations: rope theta 10 and 1e6; rope at 4096 unscaled (stage 2); masked-LM without
//      a causal mask, NoPE against RoPE, with a shuffle check of NoPE's equivariance
//   5. tasks: reverse (order) and passkey retrieval past T0, accuracy per scheme
//   6. attention maps, lines of code, parameter counts; REPORT.md with tables and plots
// Every run lives in <out>/runs/<name>; a finished run (and each finished evaluation, cached
// as JSON beside it) is reused when the command is run again, unless --force.
#pragma once
#include "train/commands.h"  // cmd_experiments
