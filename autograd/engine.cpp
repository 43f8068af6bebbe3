// engine.cpp — the reverse-mode sweep (micrograd's idea, on tensors).
//
// 1. Topologically sort the autograd metas reachable from the root (iterative DFS, so deep
//    graphs cannot overflow the stack).
// 2. Walk them in reverse order: a meta's gradient is complete once every op that used it has
//    run, so its grad_fn's backward is called once, with the summed gradient.
// 3. Accumulate (+=) each returned gradient into the input's meta. A tensor used twice (the
//    tied wte) receives the sum of both paths. An op whose gradient fills only part of its
//    input (slice) adds it into that part of the input's buffer instead (Node::add_into); an
//    op that can add a parameter's gradient into the parameter's buffer as it computes it
//    does so (Node::backward_into).
// 4. Free as we go: an intermediate's gradient and its node (with the tensors it saved) are
//    released right after use, so memory falls back after each step.
#include <unordered_set>

#include "autograd/node.h"
#include "tensor/ops.h"

namespace poslab {

namespace {
thread_local bool g_grad_enabled = true;
bool g_detect_anomaly = false;
}  // namespace

bool grad_enabled() {
  return g_grad_enabled;
}
NoGrad::NoGrad() : prev_(g_grad_enabled) {
  g_grad_enabled = false;
}
NoGrad::~NoGrad() {
  g_grad_enabled = prev_;
}
void set_detect_anomaly(bool on) {
  g_detect_anomaly = on;
}

bool any_requires_grad(std::initializer_list<const Tensor*> inputs) {
  if (!g_grad_enabled) return false;
  for (const Tensor* t : inputs)
    if (t && t->requires_grad()) return true;
  return false;
}

Tensor record(const char* name, Tensor out, std::initializer_list<const Tensor*> inputs,
              BackwardFn backward) {
  if (!any_requires_grad(inputs)) return out;
  auto node = std::make_shared<Node>();
  node->name = name;
  for (const Tensor* t : inputs) {
    node->inputs.push_back(t && t->requires_grad() ? t->meta() : nullptr);
    node->input_shapes.push_back(t ? t->shape() : Shape{});
  }
  node->backward = std::move(backward);
  auto meta = std::make_shared<AutogradMeta>();
  meta->requires_grad = true;
  meta->grad_fn = std::move(node);
  out.set_meta(std::move(meta));
  return out;
}

Tensor record_into(const char* name, Tensor out, std::initializer_list<const Tensor*> inputs,
                   BackwardIntoFn backward) {
  out = record(name, std::move(out), inputs, nullptr);
  if (out.meta() && out.meta()->grad_fn) {
    Node& node = *out.meta()->grad_fn;
    node.backward = [f = backward, n = node.inputs.size()](const Tensor& dout) {
      return f(dout, std::vector<Tensor>(n));  // nothing to add into: every gradient returned
    };
    node.backward_into = std::move(backward);
  }
  return out;
}

// A leaf's gradient buffer, zeros when no gradient has arrived yet.
static const Tensor& leaf_grad(AutogradMeta& m, const Shape& shape, const Tensor& like) {
  if (!m.grad) m.grad = std::make_shared<Tensor>(Tensor::zeros(shape, like.dtype(), like.device()));
  return *m.grad;
}

static void accumulate(AutogradMeta& m, const Tensor& g) {
  if (!m.grad_fn) {  // a leaf keeps one owned, contiguous buffer and adds into it
    kernel::add_(leaf_grad(m, g.shape(), g), g);
  } else if (!m.grad) {  // an intermediate may alias g: nobody writes into it in place
    m.grad = std::make_shared<Tensor>(g);
  } else if (m.grad->storage().use_count() == 1) {
    // No other tensor, saved or pending, shares this buffer: adding into it in place is safe
    // and saves a full-size allocation per extra contribution (residual streams, q/k/v).
    kernel::add_(*m.grad, g);
  } else {
    m.grad = std::make_shared<Tensor>(kernel::binary(kernel::BinaryOp::add, *m.grad, g));
  }
}

// The node's input's gradient buffer, for add_into: zeros when none arrived yet, and a
// contiguous copy when the buffer it holds is shared or a view (an intermediate's first
// gradient may alias another tensor, which must not change, or be an expanded scalar).
static const Tensor& own_grad(AutogradMeta& m, const Shape& shape, const Tensor& like) {
  if (!m.grad)
    m.grad = std::make_shared<Tensor>(Tensor::zeros(shape, like.dtype(), like.device()));
  else if (m.grad_fn && (m.grad->storage().use_count() != 1 || !m.grad->is_contiguous()))
    m.grad = std::make_shared<Tensor>(m.grad->clone());
  return *m.grad;
}

void backward(const Tensor& root, const Tensor& grad) {
  if (!root.requires_grad())
    fail(
        "backward: the tensor does not require grad (no parameter with requires_grad reached it, "
        "or it was computed under NoGrad)");
  if (!grad.defined() && root.numel() != 1)
    fail("backward: expected a scalar (one-element) loss or an explicit gradient, but got shape ",
         shape_str(root.shape()));
  if (grad.defined() && grad.shape() != root.shape())
    fail("backward: expected a gradient of shape ", shape_str(root.shape()), ", but got ",
         shape_str(grad.shape()));

  // 1. topological order (children before parents in `order`). The order holds shared
  //    pointers: releasing a node in step 4 must not free a meta still waiting its turn.
  std::vector<std::shared_ptr<AutogradMeta>> order;
  std::unordered_set<AutogradMeta*> seen;
  std::vector<std::pair<std::shared_ptr<AutogradMeta>, size_t>> stack{{root.meta(), 0}};
  seen.insert(root.meta().get());
  while (!stack.empty()) {
    auto& [m, i] = stack.back();
    if (m->graph_freed)
      fail("backward: the graph was already freed by an earlier backward() through this tensor");
    if (m->grad_fn && i < m->grad_fn->inputs.size()) {
      std::shared_ptr<AutogradMeta> child = m->grad_fn->inputs[i++];
      if (child && seen.insert(child.get()).second) stack.push_back({child, 0});
      continue;
    }
    order.push_back(m);
    stack.pop_back();
  }

  // 2-4. reverse sweep
  NoGrad no_grad;  // backward formulas are not themselves recorded
  accumulate(*root.meta(),
             grad.defined() ? grad : Tensor::ones(root.shape(), root.dtype(), root.device()));
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    AutogradMeta* m = it->get();
    if (!m->grad_fn) continue;  // a leaf: its gradient stays
    std::shared_ptr<Node> node = std::move(m->grad_fn);
    m->graph_freed = true;
    std::shared_ptr<Tensor> g = std::move(m->grad);
    if (!g) continue;                           // no gradient flowed here
    if (node->add_into && !g_detect_anomaly) {  // straight into the input's buffer
      if (node->inputs.size() == 1 && node->inputs[0])
        node->add_into(own_grad(*node->inputs[0], node->input_shapes[0], *g), *g);
      continue;
    }
    std::vector<Tensor> grads;
    if (node->backward_into && !g_detect_anomaly) {  // parameters' gradients added in place
      std::vector<Tensor> into(node->inputs.size());
      for (size_t i = 0; i < into.size(); ++i)
        if (node->inputs[i] && !node->inputs[i]->grad_fn)
          into[i] = leaf_grad(*node->inputs[i], node->input_shapes[i], *g);
      grads = node->backward_into(*g, into);
    } else {
      grads = node->backward(*g);
    }
    g.reset();
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      if (!node->inputs[i] || i >= grads.size() || !grads[i].defined()) continue;
      if (grads[i].shape() != node->input_shapes[i])
        fail("backward: ", node->name, " returned a gradient of shape ",
             shape_str(grads[i].shape()), " for input ", i, " of shape ",
             shape_str(node->input_shapes[i]));
      if (g_detect_anomaly && !kernel::all_finite(grads[i]))
        fail("backward: detect_anomaly: ", node->name, " produced a non-finite gradient for input ",
             i, " of shape ", shape_str(node->input_shapes[i]));
      accumulate(*node->inputs[i], grads[i]);
    }
  }
}

void zero_grad(const std::vector<Tensor>& params) {
  std::vector<Tensor> grads;  // the buffers stay: the next backward adds into them
  for (const Tensor& p : params)
    if (p.meta() && p.meta()->grad) grads.push_back(*p.meta()->grad);
  kernel::zero_(grads);
}

}  // namespace poslab
