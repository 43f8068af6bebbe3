// node.h — one recorded op in the graph.
//
// When an op runs on tensors that require grad (and grad mode is on), it records a Node:
// the autograd metas of its inputs (null for inputs that need no gradient) and a backward
// function written by hand beside its forward. backward() receives dL/d(output) and returns
// dL/d(input_i) for each input (undefined where input i needs none). Whatever the backward
// needs (saved tensors, shapes) is captured explicitly in its closure, so its memory cost is
// visible at the call site; the Node, and with it the saved tensors, is freed as soon as
// the engine has used it.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace poslab {

// A backward: dout = dL/d(output) -> dL/d(input i) for each input. into[i], when defined, is
// input i's gradient buffer, which the backward may add its contribution into instead of
// returning it (then it returns undefined for i). Most ops ignore it; three use it: slice
// adds into its part of the input's buffer (q, k and v are slices of one projection, whose
// gradients then land side by side, with no full-size zeros per slice), and linear and
// layer_norm add their weights' gradients as they compute them (a GEMM with beta = 1, a
// column sum's last pass: no extra pass over the buffer, on the GPU no extra launch, and the
// buffers stay at fixed addresses).
//
// The two routes by which a gradient reaches input i, whose autograd meta is m (engine.cpp:
// `accumulate` for a returned g, `buffers_of` for into[i]); "own" is the aliasing rule,
// grad_buffer_is_own below:
//
//   m, when the gradient arrives    a returned g is accumulated      into[i] is handed as
//   ------------------------------  -------------------------------  ----------------------
//   a leaf (no grad_fn)             m.grad += g in place (zeros      m.grad (zeros made
//                                   made first if it has none)       first if it has none)
//   an intermediate, no m.grad yet  m.grad = g: kept as returned,    undefined
//                                   no copy (it may alias)
//   an intermediate, own m.grad     m.grad += g in place             m.grad
//   an intermediate, shared m.grad  m.grad = m.grad + g, a new       undefined
//                                   tensor (the old one unchanged)
//
// Either way input i ends with the sum of every contribution; the routes differ only in which
// buffers they allocate. into[i] is undefined, too, for an input that needs no gradient, and
// for every input under detect_anomaly, so that every gradient is returned and checked. An
// intermediate's m.grad is complete when its own node runs (the reverse topological order); the
// engine then frees it.
using BackwardFn =
    std::function<std::vector<Tensor>(const Tensor& dout, const std::vector<Tensor>& into)>;

struct Node {
  const char* name;                                   // the op, for error messages
  std::vector<std::shared_ptr<AutogradMeta>> inputs;  // null: that input needs no gradient
  std::vector<Shape> input_shapes;                    // each gradient must match its input
  BackwardFn backward;
};

// Grad mode: thread-local, on by default. Under a NoGrad scope no node is recorded.
bool grad_enabled();
class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool prev_;
};

// A parameter moved to another device: the same values in a new leaf that requires grad, as
// PyTorch's module.to() does. Itself when it is there already.
inline Tensor parameter_to(const Tensor& p, Device device) {
  if (p.device() == device) return p;
  Tensor t = p.detach().to(device);
  t.set_requires_grad(true);
  return t;
}

// True when an op with these inputs must record a node.
bool any_requires_grad(std::initializer_list<const Tensor*> inputs);

// Attaches a node to `out` when grad mode is on and any input requires grad; returns out.
Tensor record(const char* name, Tensor out, std::initializer_list<const Tensor*> inputs,
              BackwardFn backward);
// The same for the usual backward, which returns every gradient and never adds into a buffer.
Tensor record(const char* name, Tensor out, std::initializer_list<const Tensor*> inputs,
              std::function<std::vector<Tensor>(const Tensor& dout)> backward);

// The aliasing rule: whether the engine may add into m's gradient buffer in place. A leaf's
// buffer is its own (created by the engine). An intermediate's first gradient is kept as the
// very tensor an op returned, without a copy, so it may share storage with a saved tensor or
// with another gradient, which must not change: it may be added into only once it is
// contiguous and no other tensor holds its storage (use_count 1).
bool grad_buffer_is_own(const AutogradMeta& m);

// Reverse-mode sweep from `root`. With no `grad` the root must hold one element (a loss),
// and dL/droot = 1. Gradients accumulate (+=) into each leaf's grad().
void backward(const Tensor& root, const Tensor& grad = Tensor());

// Sets each tensor's gradient to zero (keeping its buffer).
void zero_grad(const std::vector<Tensor>& params);

// When on, backward() checks each op's input gradients for NaN/inf and names the first op
// that produced one (slow; for debugging). No buffer is handed to a backward then (into is
// all undefined), so every gradient is returned and checked.
void set_detect_anomaly(bool on);

}  // namespace poslab
