// engine.cpp — the reverse-mode sweep (micrograd's idea, on tensors).
//
// 1. Topologically sort the autograd metas reachable from the root: each after every meta its
//    op read (micrograd's build_topo, with an explicit stack so that deep graphs cannot
//    overflow the call stack).
// 2. Walk them in reverse order: a meta's gradient is complete once every op that used it has
//    run, so its node's backward is called once, with the summed gradient.
// 3. Accumulate (+=) each returned gradient into the input's meta. A tensor used twice (the
//    tied wte) receives the sum of both paths. A backward may instead add a gradient straight
//    into the input's buffer, which the engine hands it when the aliasing rule allows
//    (BackwardFn, grad_buffer_is_own in node.h).
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

Tensor record(const char* name, Tensor out, std::initializer_list<const Tensor*> inputs,
              std::function<std::vector<Tensor>(const Tensor& dout)> backward) {
  return record(name, std::move(out), inputs,
                [f = std::move(backward)](const Tensor& dout, const std::vector<Tensor>&) {
                  return f(dout);
                });
}

bool grad_buffer_is_own(const AutogradMeta& m) {
  if (!m.grad_fn) return true;  // a leaf
  return m.grad && m.grad->is_contiguous() && m.grad->storage().use_count() == 1;
}

// A leaf's gradient buffer, zeros when no gradient has arrived yet.
static const Tensor& leaf_grad(AutogradMeta& m, const Shape& shape, const Tensor& like) {
  if (!m.grad) m.grad = std::make_shared<Tensor>(Tensor::zeros(shape, like.dtype(), like.device()));
  return *m.grad;
}

// A returned gradient into m: the four cases of the table in node.h (BackwardFn).
static void accumulate(AutogradMeta& m, const Tensor& g) {
  if (!m.grad_fn)
    kernel::add_(leaf_grad(m, g.shape(), g), g);  // a leaf adds into its own buffer
  else if (!m.grad)
    m.grad = std::make_shared<Tensor>(g);  // the first: kept as returned, no copy
  else if (grad_buffer_is_own(m))
    kernel::add_(*m.grad, g);  // in place: no full-size allocation per extra contribution
  else
    m.grad = std::make_shared<Tensor>(kernel::binary(kernel::BinaryOp::add, *m.grad, g));
}

// The buffers a node's backward may add into (BackwardFn, the table's last column): each input's
// gradient buffer when the aliasing rule allows (a leaf's made as zeros when none arrived yet);
// none under detect_anomaly, so that every gradient is returned and checked.
static std::vector<Tensor> buffers_of(const Node& node, const Tensor& like) {
  std::vector<Tensor> into(node.inputs.size());
  if (g_detect_anomaly) return into;
  for (size_t i = 0; i < into.size(); ++i) {
    AutogradMeta* m = node.inputs[i].get();
    if (m && !m->grad_fn)
      into[i] = leaf_grad(*m, node.input_shapes[i], like);
    else if (m && m->grad && grad_buffer_is_own(*m))
      into[i] = *m->grad;
  }
  return into;
}

// Step 1: the metas reachable from root, each after every input of its node (children before
// parents). As micrograd's recursive
//   visit(v): if v not seen: mark v; visit each input of v; append v
// with the recursion's frames on `stack`: (meta, index of the next input to visit). The order
// holds shared pointers: releasing a node in step 4 must not free a meta still waiting.
static std::vector<std::shared_ptr<AutogradMeta>> topological_order(const Tensor& root) {
  std::vector<std::shared_ptr<AutogradMeta>> order;
  std::unordered_set<AutogradMeta*> seen{root.meta().get()};
  std::vector<std::pair<std::shared_ptr<AutogradMeta>, size_t>> stack{{root.meta(), 0}};
  while (!stack.empty()) {
    auto& [m, i] = stack.back();
    if (m->graph_freed)
      fail("backward: the graph was already freed by an earlier backward() through this tensor");
    if (m->grad_fn && i < m->grad_fn->inputs.size()) {  // visit the next input
      std::shared_ptr<AutogradMeta> child = m->grad_fn->inputs[i++];
      if (child && seen.insert(child.get()).second) stack.push_back({child, 0});
      continue;
    }
    order.push_back(m);  // every input visited: append
    stack.pop_back();
  }
  return order;
}

// Its twin without a graph: model_backward in nn/gpt_reference.cpp, the forward's lines called in
// reverse by hand, each layer's backward accumulating (+=) as this engine does; the model's
// gradients from the two are tested equal (tests/nn/test_gpt_reference.cpp).
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

  std::vector<std::shared_ptr<AutogradMeta>> order = topological_order(root);
  // 2-4. the reverse walk
  NoGrad no_grad;  // backward formulas are not themselves recorded
  accumulate(*root.meta(),
             grad.defined() ? grad : Tensor::ones(root.shape(), root.dtype(), root.device()));
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    AutogradMeta* m = it->get();
    if (!m->grad_fn) continue;  // a leaf: its gradient stays
    std::shared_ptr<Node> node = std::move(m->grad_fn);
    m->graph_freed = true;
    std::shared_ptr<Tensor> g = std::move(m->grad);
    if (!g) continue;  // no gradient flowed here
    // (the handed buffers are released before accumulating: the rule counts their holders)
    std::vector<Tensor> grads = node->backward(*g, buffers_of(*node, *g));
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
