// attention_kernels.h — the fused attention's kernels, raw: no autograd, no shape checks (the
// op, nn/attention_op.cpp, checks and records; attention_op.h gives the semantics). One pair
// per device: the CPU's in attention_kernels.cpp, the GPU's in attention_kernels.cu (stubbed
// by nn/cuda_stub.cpp in a build without CUDA).
//
// The tensors, as the op hands them over:
//   q: (B,Tq,H,D), k, v: (B,Tk,H,D)   unit stride along D, rows may be strided
//   out: (B,Tq,H,D) contiguous        the forward writes it
//   lse: (B,H,Tq) or undefined        each score row's log-sum-exp, saved for the backward
//                                     (a device's own business: the GPU keeps it in log2 units)
// Options: opt.scale already resolved (> 0); opt.rel_bias contiguous (H, Tq+Tk-1) of q's
// dtype; opt.bias contiguous (Bb,H,Tq,Tk) of q's dtype and opt.bias_rows (CPU only); opt.row_freqs
// contiguous (Tq, D/2) f64 (forward only); opt.window >= 0 and opt.log_scale_len 0 or >= 2 (0:
// off). A row that sees no key gets out = 0.
#pragma once
#include "nn/attention_options.h"

namespace poslab {

struct AttentionTensors {
  Tensor q, k, v, out, lse;
};
// What the backward writes: dq, dk, dv shaped like q, k, v (overwritten), unit stride along D
// (the op hands contiguous ones; the CPU kernel follows any row stride). dbias (H, Tq+Tk-1)
// contiguous, or undefined when rel_bias needs no gradient; dpair (Bb,H,Tq,Tk) likewise for
// opt.bias.
struct AttentionGrads {
  Tensor dq, dk, dv, dbias, dpair;
};

namespace kernel {
void attention_forward(const AttentionTensors& t, const AttentionOptions& opt);
// dout: (B,Tq,H,D) contiguous, the gradient of out.
void attention_backward(const AttentionTensors& t, const Tensor& dout, const AttentionOptions& opt,
                        const AttentionGrads& g);
}  // namespace kernel

namespace kernel::cuda {
void attention_forward(const AttentionTensors& t, const AttentionOptions& opt);
void attention_backward(const AttentionTensors& t, const Tensor& dout, const AttentionOptions& opt,
                        const AttentionGrads& g);
}  // namespace kernel::cuda

}  // namespace poslab
