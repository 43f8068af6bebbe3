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

using BackwardFn = std::function<std::vector<Tensor>(const Tensor& dout)>;
// A backward that may add some input gradients straight into `into[i]`, the gradient buffer of
// input i when that input is a leaf (a parameter), undefined otherwise. It returns undefined
// for each gradient it added there, and the others as BackwardFn does.
using BackwardIntoFn =
    std::function<std::vector<Tensor>(const Tensor& dout, const std::vector<Tensor>& into)>;

struct Node {
  const char* name;                                   // the op, for error messages
  std::vector<std::shared_ptr<AutogradMeta>> inputs;  // null: that input needs no gradient
  std::vector<Shape> input_shapes;                    // each gradient must match its input
  BackwardFn backward;
  // Optional, for an op whose gradient is zero outside one part of its single input (slice):
  // adds dL/d(output) into that part of the input's gradient buffer, which the engine hands
  // over zero-filled or already holding other contributions. The engine then calls this
  // instead of `backward`, which would build a full-size gradient, mostly zeros, only for it
  // to be added: q, k and v are three slices of one fused projection, and each of them paid
  // a fill and an add the size of all three.
  std::function<void(const Tensor& input_grad, const Tensor& dout)> add_into;
  // Optional, for an op that can add a parameter's gradient into the parameter's buffer as it
  // computes it (a GEMM with beta = 1, a column sum's last pass): the engine calls this
  // instead of `backward`. Otherwise each parameter gradient is a new tensor that the engine
  // then adds into the buffer: one more pass over it, and on the GPU one more launch each.
  BackwardIntoFn backward_into;
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

// record() for a backward that can add into parameters' gradient buffers (Node::backward_into).
Tensor record_into(const char* name, Tensor out, std::initializer_list<const Tensor*> inputs,
                   BackwardIntoFn backward);

// Reverse-mode sweep from `root`. With no `grad` the root must hold one element (a loss),
// and dL/droot = 1. Gradients accumulate (+=) into each leaf's grad().
void backward(const Tensor& root, const Tensor& grad = Tensor());

// Sets each tensor's gradient to zero (keeping its buffer).
void zero_grad(const std::vector<Tensor>& params);

// When on, backward() checks each op's input gradients for NaN/inf and names the first op
// that produced one (slow; for debugging).
void set_detect_anomaly(bool on);

}  // namespace poslab
