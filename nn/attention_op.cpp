// attention_op.cpp — the fused attention op: checks, one autograd node, the kernels of the
// inputs' device (nn/attention_kernels.h). The math as plain loops: attention_reference.cpp
// (this op's reference, with every option the op has: decoding offsets, windows, log scale,
// per-row frequencies), and the model's attention layer in nn/gpt_reference.cpp (the file to
// start from). The kernels are tested equal to both.
#include "nn/attention_op.h"

#include <cmath>

#include "nn/attention_kernels.h"

namespace poslab {
namespace {

// Every shape, dtype and device the kernels rely on, checked once for both devices; returns
// the options the kernels read (scale resolved, tables contiguous).
AttentionOptions checked(const Tensor& q, const Tensor& k, const Tensor& v,
                         const AttentionOptions& opt) {
  check_same("attention", q, k);
  check_same("attention", q, v);
  if (q.dim() != 4 || k.dim() != 4 || k.shape() != v.shape() || q.size(0) != k.size(0) ||
      q.size(2) != k.size(2) || q.size(3) != k.size(3))
    fail("attention: expected q (B,Tq,H,D), k and v (B,Tk,H,D), but got q ", shape_str(q.shape()),
         ", k ", shape_str(k.shape()), ", v ", shape_str(v.shape()));
  int64_t Tq = q.size(1), Tk = k.size(1), H = q.size(2), D = q.size(3);
  if (opt.window < 0)
    fail("attention: expected window >= 0 (0: no window), but got window = ", opt.window);
  if (opt.log_scale_len < 0 || opt.log_scale_len == 1)
    fail(
        "attention: expected log_scale_len = 0 (off) or >= 2 (ln T0 divides), but got "
        "log_scale_len = ",
        opt.log_scale_len);
  AttentionOptions o = opt;
  o.scale = opt.scale > 0 ? opt.scale : 1 / std::sqrt(static_cast<double>(D));
  if (o.rel_bias.defined()) {
    check_same("attention: rel_bias", q, o.rel_bias);
    if (o.rel_bias.shape() != Shape{H, std::max<int64_t>(Tq + Tk - 1, 0)})
      fail("attention: expected rel_bias (H, Tq+Tk-1) = ", shape_str({H, Tq + Tk - 1}), " for q ",
           shape_str(q.shape()), " and k ", shape_str(k.shape()), ", but got ",
           shape_str(o.rel_bias.shape()));
    o.rel_bias = o.rel_bias.detach().contiguous();
  }
  if (o.bias.defined()) {
    check_same("attention: bias", q, o.bias);
    const int64_t Bb = o.bias.dim() == 4 ? o.bias.size(0) : -1;
    if ((Bb != 1 && Bb != q.size(0)) || o.bias.shape() != Shape{Bb, H, Tq, Tk})
      fail("attention: expected a per-pair bias (Bb,H,Tq,Tk) = (1 or ", q.size(0), ",", H, ",", Tq,
           ",", Tk, ") for q ", shape_str(q.shape()), " and k ", shape_str(k.shape()), ", but got ",
           shape_str(o.bias.shape()));
    if (q.device() != Device::cpu)
      fail("attention: a per-pair bias (FIRE, or a bias scheme under random positions) runs on ",
           "the CPU only; use --device cpu");
    o.bias = o.bias.detach().contiguous();
  }
  if (o.bias_rows && q.device() != Device::cpu)
    fail("attention: a per-pair bias made row by row (FIRE in evaluation) runs on the CPU only; ",
         "use --device cpu");
  if (o.row_freqs.defined()) {
    if (o.row_freqs.shape() != Shape{Tq, D / 2} || o.row_freqs.dtype() != DType::f64 ||
        o.row_freqs.device() != q.device() || D % 2 != 0)
      fail("attention: expected row_freqs (Tq, D/2) = ", shape_str({Tq, D / 2}), " f64 on ",
           device_name(q.device()), " for q ", shape_str(q.shape()), ", but got ",
           shape_str(o.row_freqs.shape()), " ", dtype_name(o.row_freqs.dtype()), " on ",
           device_name(o.row_freqs.device()));
    o.row_freqs = o.row_freqs.contiguous();
  }
  return o;
}

// The kernels read rows of D contiguous values; other strides are followed as they are.
Tensor rows_unit_stride(const Tensor& x) {
  return x.strides()[3] == 1 ? x.detach() : x.detach().contiguous();
}

void run_forward(const AttentionTensors& t, const AttentionOptions& o) {
  if (t.q.device() == Device::cuda) return kernel::cuda::attention_forward(t, o);
  kernel::attention_forward(t, o);
}

void run_backward(const AttentionTensors& t, const Tensor& dout, const AttentionOptions& o,
                  const AttentionGrads& g) {
  if (t.q.device() == Device::cuda) return kernel::cuda::attention_backward(t, dout, o, g);
  kernel::attention_backward(t, dout, o, g);
}

// Runs the forward of q, k, v (detached views) into a new out, and a new lse when the backward
// will need it.
AttentionTensors forward_of(const Tensor& q, const Tensor& k, const Tensor& v,
                            const AttentionOptions& o, bool grad) {
  if (grad && o.row_freqs.defined())
    fail(
        "attention: per-row rotation frequencies (RoPE dynamic scaling) are for evaluation "
        "only; run it under NoGrad");
  int64_t B = q.size(0), Tq = q.size(1), H = q.size(2), D = q.size(3);
  Device dev = q.device();
  AttentionTensors t{rows_unit_stride(q), rows_unit_stride(k), rows_unit_stride(v),
                     Tensor::empty({B, Tq, H, D}, q.dtype(), dev),
                     grad ? Tensor::empty({B, H, Tq}, q.dtype(), dev) : Tensor()};
  run_forward(t, o);
  return t;
}

}  // namespace

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  AttentionOptions o = checked(q, k, v, opt);
  AttentionTensors t =
      forward_of(q, k, v, o, any_requires_grad({&q, &k, &v, &opt.rel_bias, &opt.bias}));
  Tensor out = t.out;
  t.out = t.out.detach();  // saved without its node: no cycle through the closure
  bool bias_grad = opt.rel_bias.requires_grad(), pair_grad = opt.bias.requires_grad();
  return record("attention", out, {&q, &k, &v, &opt.rel_bias, &opt.bias},
                [t, o, bias_grad, pair_grad](const Tensor& dy) {
                  Tensor dout = dy.contiguous();
                  Device dev = t.q.device();
                  auto grad_of = [&](bool needed, const Tensor& x) {
                    return needed ? Tensor::empty(x.shape(), t.q.dtype(), dev) : Tensor();
                  };
                  AttentionGrads g{Tensor::empty(t.q.shape(), t.q.dtype(), dev),
                                   Tensor::empty(t.k.shape(), t.k.dtype(), dev),
                                   Tensor::empty(t.v.shape(), t.v.dtype(), dev),
                                   grad_of(bias_grad, o.rel_bias), grad_of(pair_grad, o.bias)};
                  run_backward(t, dout, o, g);
                  return std::vector<Tensor>{g.dq, g.dk, g.dv, g.dbias, g.dpair};
                });
}

}  // namespace poslab
