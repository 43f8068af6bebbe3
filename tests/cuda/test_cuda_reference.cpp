// The model on the GPU against the one-file reference (nn/gpt_reference.cpp: plain loops in
// double): the loss and every gradient of a small f32 model, for each scheme the GPU runs, and
// p-RoPE with --nope-every. The CPU's f32 path is held to the same tolerance
// (tests/nn/test_gpt_reference.cpp), so the two devices and the reference agree three ways.
#include <catch2/catch.hpp>

#include "tests/nn/gpt_reference_adapter.h"

using namespace poslab;
namespace ref = poslab::reference;

namespace {

// The largest |GPU - reference| over the loss and every gradient entry, each relative to the
// largest |entry| of its gradient (at least 1e-3).
double worst_gap(const GPT& m, const Ids& ids, const Ids& targets) {
  Tensor loss = m.loss(ids, targets);
  backward(loss);
  const ref::Config c = test::reference_config(m.config());
  ref::StepResult r =
      ref::forward_backward(c, test::reference_params(m), test::reference_batch(ids, targets));
  double worst = std::abs(loss.item() - r.loss) / std::abs(r.loss);
  const std::vector<NamedParam> params = m.parameters();
  const std::vector<ref::NamedArray> grads = ref::named_arrays(c, r.grad);
  REQUIRE(grads.size() == params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    REQUIRE(grads[i].name == params[i].name);
    const std::vector<double> g = params[i].tensor.grad().to(Device::cpu).to_vector();
    const std::vector<double>& rg = *grads[i].value;
    REQUIRE(g.size() == rg.size());
    double scale = 1e-3, gap = 0;
    for (size_t k = 0; k < rg.size(); ++k) scale = std::max(scale, std::abs(rg[k]));
    for (size_t k = 0; k < rg.size(); ++k) gap = std::max(gap, std::abs(g[k] - rg[k]) / scale);
    if (gap > worst) UNSCOPED_INFO(params[i].name << ": relative gap " << gap);
    worst = std::max(worst, gap);
  }
  return worst;
}

}  // namespace

// f32 on the GPU (cuBLAS in plain FP32, the fused attention kernels) against double loops: the
// CPU's f32 path lands 5e-7 to 8e-7 from the reference; 2e-5 as there.
TEST_CASE("cuda: the model on the GPU is the one-file reference, loss and every gradient",
          "[cuda][reference]") {
  Generator gen(16);
  Ids ids{std::vector<int32_t>(2 * 32), {2, 32}}, targets = ids;
  for (int32_t& t : ids.data) t = static_cast<int32_t>(gen.next_u64() % 40);
  for (int32_t& t : targets.data) t = static_cast<int32_t>(gen.next_u64() % 40);
  for (const char* name : {"none", "learned", "sinusoidal", "rope", "alibi", "t5", "p-rope"}) {
    INFO("pe = " << name);
    const bool prope = std::string(name) == "p-rope";
    GPTConfig c;
    c.pe.kind = prope ? PeKind::rope : parse_pe(name);
    c.vocab_size = 40, c.n_layer = 2, c.n_head = 4, c.n_embd = 64, c.block_size = 32;
    c.device = Device::cuda;
    if (prope) c.pe.rope_proportion = 0.5, c.pe.nope_every = 2;
    CHECK(worst_gap(GPT(c, 8), ids, targets) < 2e-5);
  }
}
