// reference_step — one training step of a tiny f64 model through both implementations: the
// plain loops of nn/gpt_reference.cpp and the framework (GPT::loss, then backward()). Prints
// the two losses and, per parameter, the largest gradient and the largest difference.
//
//   make reference PE=rope       (or none, learned, sinusoidal, alibi, t5, kerple, fire, xpos)
//   build/release/tests/reference_step --pe t5 --embedding scaled --causal false
#include <cstdio>
#include <cstring>
#include <string>

#include "tests/nn/gpt_reference_adapter.h"

using namespace poslab;

namespace {

GPTConfig config_from(int argc, char** argv) {
  GPTConfig c;
  c.vocab_size = 11, c.n_layer = 2, c.n_head = 2, c.n_embd = 16, c.block_size = 8;
  c.dtype = DType::f64;
  c.pe.kind = PeKind::rope;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--pe")
      c.pe.kind = parse_pe(value);
    else if (flag == "--embedding")
      c.embedding = parse_embedding(value);
    else if (flag == "--causal")
      c.causal = value != "false";
    else
      fail("reference_step: unknown flag ", flag, "; expected --pe, --embedding, --causal");
  }
  if (argc % 2 == 0) fail("reference_step: expected flags with values, as --pe rope");
  return c;
}

// ids and their next tokens (B,T) from a fixed seed.
std::pair<Ids, Ids> batch(const GPTConfig& c, int64_t B) {
  Generator gen(7);
  const int64_t T = c.block_size;
  Ids ids{{}, {B, T}}, targets{{}, {B, T}};
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int32_t> row(T + 1);
    for (int32_t& token : row) token = static_cast<int32_t>(gen.uniform() * c.vocab_size);
    ids.data.insert(ids.data.end(), row.begin(), row.end() - 1);
    targets.data.insert(targets.data.end(), row.begin() + 1, row.end());
  }
  return {ids, targets};
}

}  // namespace

int main(int argc, char** argv) try {
  const GPTConfig c = config_from(argc, argv);
  const GPT model(c, 1);
  auto [ids, targets] = batch(c, 2);
  std::printf(
      "one training step: pe %s, embedding %s, causal %s; V %lld, C %lld, H %lld, "
      "%lld layers, B 2, T %lld, f64\n\n",
      pe_name(c.pe.kind), embedding_name(c.embedding), c.causal ? "true" : "false",
      (long long)c.vocab_size, (long long)c.n_embd, (long long)c.n_head, (long long)c.n_layer,
      (long long)c.block_size);
  namespace ref = poslab::reference;
  const ref::Config rc = test::reference_config(model.config());
  ref::StepResult r =
      ref::forward_backward(rc, test::reference_params(model), test::reference_batch(ids, targets));
  const std::vector<ref::NamedArray> grads = ref::named_arrays(rc, r.grad);
  Tensor loss = model.loss(ids, targets);
  backward(loss);
  std::printf("loss   reference (nn/gpt_reference.cpp) %.15f\n", r.loss);
  std::printf("       framework (GPT::loss)            %.15f\n\n", loss.item());
  std::printf("%-36s %12s %12s\n", "gradient of", "max |grad|", "max |diff|");
  double worst = 0;
  const std::vector<NamedParam> params = model.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const std::vector<double> g = params[i].tensor.grad().to_vector();
    double largest = 0, diff = 0;
    for (size_t k = 0; k < g.size(); ++k) {
      largest = std::max(largest, std::abs((*grads[i].value)[k]));
      diff = std::max(diff, std::abs(g[k] - (*grads[i].value)[k]));
    }
    worst = std::max(worst, diff);
    std::printf("%-36s %12.3e %12.3e\n", params[i].name.c_str(), largest, diff);
  }
  std::printf("\nlargest gradient difference %.3e: %s\n", worst,
              worst < 1e-10 ? "the same model, to rounding" : "THEY DIFFER");
  return worst < 1e-10 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
