// The fused ops and the whole model on the GPU against the CPU: attention (ALiBi, mask,
// decoding offsets, window and log scale, 4096 tokens), RoPE with every scaling, dynamic-NTK
// attention, AdamW and clipping, a training step of the canonical model for every scheme,
// evaluation with every RoPE scaling, KV-cache decoding, checkpoints, the caching allocator's
// reuse, and the trainer (`poslab train` on the GPU against the CPU, paused and resumed).
#include <catch2/catch.hpp>

#include "data/corpus.h"
#include "nn/attention_op.h"
#include "nn/gpt.h"
#include "posenc/alibi.h"
#include "posenc/rope.h"
#include "tests/cuda/compare.h"
#include "tests/support/temp_dir.h"
#include "train/checkpoint.h"
#include "train/log.h"
#include "train/optimizer.h"
#include "train/trainer.h"

using namespace poslab;
using namespace poslab::testing;

namespace {

// q, k, v as the column blocks of one (B,T,3C) tensor, as the model makes them (strided views).
struct Qkv {
  Tensor fused, q, k, v;
};
Qkv make_qkv(int64_t B, int64_t T, int64_t H, int64_t D, uint64_t seed, Device device) {
  Qkv r;
  r.fused = leaf(randn({B, T, 3 * H * D}, seed), device);
  int64_t C = H * D;
  r.q = reshape(slice(r.fused, 2, 0, C), {B, T, H, D});
  r.k = reshape(slice(r.fused, 2, C, 2 * C), {B, T, H, D});
  r.v = reshape(slice(r.fused, 2, 2 * C, 3 * C), {B, T, H, D});
  return r;
}

// The fused attention on both devices: the output, then the gradient of sum(out * w) with
// respect to the fused q/k/v tensor. Scores are D-term dot products, then a softmax over up
// to T keys and a T-term weighted sum: atol 2e-5 of the largest value (f32).
void check_attention(int64_t B, int64_t T, int64_t H, int64_t D, const AttentionOptions& o,
                     uint64_t seed) {
  INFO("attention B=" << B << " T=" << T << " H=" << H << " D=" << D << " causal=" << o.causal
                      << " bias=" << o.rel_bias.defined() << " q_pos0=" << o.q_pos0);
  Qkv c = make_qkv(B, T, H, D, seed, Device::cpu), g = make_qkv(B, T, H, D, seed, Device::cuda);
  // decoding: the last Tq rows of q against all T keys
  int64_t Tq = o.q_pos0 > 0 ? T - o.q_pos0 : T;
  auto last = [&](const Tensor& q) { return slice(q, 1, T - Tq, T); };
  AttentionOptions og_opt = o;  // the same table on the GPU (a leaf of its own when learned)
  if (o.rel_bias.defined()) og_opt.rel_bias = leaf(o.rel_bias.detach(), Device::cuda);
  if (o.rel_bias.defined() && !o.rel_bias.requires_grad()) og_opt.rel_bias.set_requires_grad(false);
  Tensor oc = attention(last(c.q), c.k, c.v, o), og = attention(last(g.q), g.k, g.v, og_opt);
  REQUIRE_CLOSE(og, oc, 1e-4, 2e-5);
  Tensor w = randn(oc.shape(), seed + 1);
  backward(sum(mul(oc, w)));
  backward(sum(mul(og, on_gpu(w))));
  REQUIRE_CLOSE(g.fused.grad(), c.fused.grad(), 1e-4, 2e-5);
  if (o.rel_bias.requires_grad())
    REQUIRE_CLOSE(og_opt.rel_bias.grad(), o.rel_bias.grad(), 1e-4, 2e-5);
}

GPTConfig canonical(PeKind pe) {  // the study / bench: d=128, 4 layers, 4 heads, T0=256
  GPTConfig c;
  c.vocab_size = 105, c.pe.kind = pe, c.block_size = 256;
  if (pe == PeKind::learned) c.pe.max_len = 4096;
  return c;
}

Ids random_ids(int64_t B, int64_t T, int64_t V, uint64_t seed) {
  Generator g(seed);
  Ids x{std::vector<int32_t>(B * T), {B, T}};
  for (auto& v : x.data) v = static_cast<int32_t>(g.next_u64() % V);
  return x;
}

}  // namespace

TEST_CASE("cuda: fused attention equals the CPU op, forward and backward", "[cuda]") {
  // T = 150: three query blocks of 64 (the last partial) and five key tiles of 32
  for (bool causal : {true, false})
    for (bool alibi : {false, true})
      for (int64_t D : {8, 32}) {
        AttentionOptions o;
        o.causal = causal;
        if (alibi) o.rel_bias = alibi_bias(alibi_slopes(3), 0, 150, 150, DType::f32);
        check_attention(2, 150, 3, D, o, 7 + D);
      }
  // the other head-dim specialisations (D <= 64, D <= 128), and 6 heads (non-power-of-2 ALiBi)
  AttentionOptions o;
  o.rel_bias = alibi_bias(alibi_slopes(6), 0, 70, 70, DType::f32);
  check_attention(1, 70, 6, 64, o, 21);
  check_attention(1, 70, 2, 100, AttentionOptions{}, 22);
  // a decoding step: the last 5 queries at positions 145.. over all 150 keys
  o.q_pos0 = 145;
  o.rel_bias = alibi_bias(alibi_slopes(6), 145, 5, 150, DType::f32);
  check_attention(2, 150, 6, 16, o, 23);
  // a learned table (T5's): dbias on both devices, causal and not
  for (bool causal : {true, false}) {
    AttentionOptions t5;
    t5.causal = causal;
    t5.rel_bias = leaf(randn({3, 299}, 24), Device::cpu);
    check_attention(2, 150, 3, 32, t5, 25);
  }
  // dbias with the 16-column tiles (D <= 128), and for a decoding step: the last Tq = 20 queries
  // against Tk = 150 keys, a table of Tq + Tk - 1 = 169 offsets (the dkv kernel's diagonal sums)
  AttentionOptions t5;
  t5.rel_bias = leaf(randn({2, 199}, 26), Device::cpu);
  check_attention(1, 100, 2, 100, t5, 27);
  t5.q_pos0 = 130;
  t5.rel_bias = leaf(randn({3, 169}, 28), Device::cpu);
  check_attention(2, 150, 3, 32, t5, 29);
}

TEST_CASE("cuda: attention with a window and a log scale equals the CPU op", "[cuda][attention]") {
  // T = 150: three query blocks of 64; a window of 40 skips key tiles of 32 on the left of
  // each block (and, without the mask, query tiles past a key block's last row in dkv)
  for (bool causal : {true, false})
    for (int64_t window : {0, 5, 40})
      for (int64_t T0 : {0, 16}) {
        if (window == 0 && T0 == 0) continue;  // the case above
        INFO("window " << window << " log_scale_len " << T0);
        AttentionOptions o;
        o.causal = causal, o.window = window, o.log_scale_len = T0;
        o.rel_bias = leaf(randn({3, 299}, 40), Device::cpu);  // a learned table: dbias too
        check_attention(2, 150, 3, 32, o, 41);
      }
  // a decoding step: the last 20 queries at positions 130.. over 150 keys, ALiBi
  AttentionOptions o;
  o.window = 24, o.log_scale_len = 8, o.q_pos0 = 130;
  o.rel_bias = alibi_bias(alibi_slopes(2), 130, 20, 150, DType::f32);
  check_attention(1, 150, 2, 64, o, 42);
  // per-row frequencies (dynamic RoPE), forward only
  NoGrad ng;
  Tensor q = randn({1, 100, 2, 16}, 43), k = randn({1, 100, 2, 16}, 44),
         v = randn({1, 100, 2, 16}, 45);
  Generator g(46);
  o = AttentionOptions{};
  o.window = 30, o.log_scale_len = 10;
  o.row_freqs = Tensor::uniform({100, 8}, g, 0.001, 1.0, DType::f64);
  AttentionOptions og = o;
  og.row_freqs = on_gpu(o.row_freqs);
  REQUIRE_CLOSE(attention(on_gpu(q), on_gpu(k), on_gpu(v), og), attention(q, k, v, o), 1e-4, 2e-5);
}

TEST_CASE("cuda: attention over 4096 tokens, and ALiBi at positions in the millions", "[cuda]") {
  NoGrad ng;  // evaluation: nothing saved, tiles only
  Tensor q = randn({1, 4096, 2, 32}, 30), k = randn({1, 4096, 2, 32}, 31),
         v = randn({1, 4096, 2, 32}, 32);
  AttentionOptions o;
  o.rel_bias = alibi_bias(alibi_slopes(2), 0, 4096, 4096, DType::f32);
  AttentionOptions og = o;
  og.rel_bias = on_gpu(o.rel_bias);
  REQUIRE_CLOSE(attention(on_gpu(q), on_gpu(k), on_gpu(v), og), attention(q, k, v, o), 1e-4, 2e-5);
  // queries at 1e6.. over keys at 0..5: raw biases near -6e4 would swamp float scores; the
  // per-row shift keeps them exact on both devices
  Tensor qf = randn({1, 3, 2, 8}, 33), kf = randn({1, 6, 2, 8}, 34), vf = randn({1, 6, 2, 8}, 35);
  o.q_pos0 = og.q_pos0 = 1000000;
  o.causal = og.causal = false;
  o.rel_bias = alibi_bias(alibi_slopes(2), 1000000, 3, 6, DType::f32);
  og.rel_bias = on_gpu(o.rel_bias);
  REQUIRE_CLOSE(attention(on_gpu(qf), on_gpu(kf), on_gpu(vf), og), attention(qf, kf, vf, o), 1e-4,
                2e-5);
}

TEST_CASE("cuda: attention in f64 on the GPU is a clear error", "[cuda]") {
  Tensor q = on_gpu(randn({1, 4, 2, 8}, 1).to(DType::f64));
  REQUIRE_THROWS_WITH(attention(q, q, q, AttentionOptions{}), Catch::Contains("attention") &&
                                                                  Catch::Contains("f32") &&
                                                                  Catch::Contains("f64"));
}

TEST_CASE("cuda: RoPE with every scaling, and dynamic-NTK attention", "[cuda]") {
  // the rotation: a 2x2 product per pair, exact up to FMA rounding. Both layouts, all dims
  // rotated or r = 6 of 16 (the other 10 copied)
  for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half})
    for (double f : {1.0, 0.4})
      for (ScalingKind sk :
           {ScalingKind::none, ScalingKind::linear, ScalingKind::ntk, ScalingKind::yarn}) {
        INFO(rope_layout_name(layout) << " f = " << f << " scaling " << scaling_name(sk));
        RoPE rope(16, 10000, layout, f);
        const RopeScaling sc{sk, 0, 64};
        Tensor x = randn({2, 200, 3, 16}, 40);
        Tensor xc = leaf(x, Device::cpu), xg = leaf(x, Device::cuda);
        Tensor yc = rope_rotate_at(rope, xc, 3, 203, sc), yg = rope_rotate_at(rope, xg, 3, 203, sc);
        REQUIRE_CLOSE(yg, yc, 1e-6, 1e-6);
        Tensor w = randn(yc.shape(), 41);
        backward(sum(mul(yc, w)));
        backward(sum(mul(yg, on_gpu(w))));
        REQUIRE_CLOSE(xg.grad(), xc.grad(), 1e-6, 1e-6);
      }
  // dynamic: rows past T0 = 64 each use their own theta; the GPU rotates by the relative
  // angle (j - P) w in one step where the CPU rotates q and k apart: a few float roundings
  NoGrad ng;
  Tensor q = randn({2, 300, 2, 16}, 42), k = randn({2, 300, 2, 16}, 43),
         v = randn({2, 300, 2, 16}, 44);
  Tensor qd = q.slice(1, 290, 300);  // decoding: 10 queries at positions 290..
  for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half})
    for (double f : {1.0, 0.4}) {  // r = 16, 6 of 16
      INFO("dynamic " << rope_layout_name(layout) << " f = " << f);
      RoPE rope(16, 10000, layout, f);
      const RopeScaling sc{ScalingKind::dynamic, 0, 64};
      auto dynamic = [&](const Tensor& q, int64_t q_pos0) {
        AttentionTerms t = attention_terms_at(rope, q, q.device() == Device::cuda ? on_gpu(k) : k,
                                              q_pos0, true, sc);
        AttentionOptions o;
        o.q_pos0 = q_pos0;
        o.row_freqs = t.row_freqs;
        return attention(t.q, t.k, q.device() == Device::cuda ? on_gpu(v) : v, o);
      };
      REQUIRE_CLOSE(dynamic(on_gpu(q), 0), dynamic(q, 0), 1e-4, 2e-5);
      REQUIRE_CLOSE(dynamic(on_gpu(qd), 290), dynamic(qd, 290), 1e-4, 2e-5);
    }
}

TEST_CASE("cuda: a T5 model's loss and gradients, the bias table's included", "[cuda]") {
  // nb = 8, max_distance = 12 over T = 40: every kind of bucket, the last one summing most
  // offsets (the scatter-add of dbias by bucket on the GPU)
  GPTConfig c;
  c.vocab_size = 105, c.n_layer = 2, c.n_head = 2, c.n_embd = 32, c.block_size = 40;
  c.pe.kind = PeKind::t5, c.pe.t5_buckets = 8, c.pe.t5_max_distance = 12;
  for (bool causal : {true, false}) {
    INFO((causal ? "causal" : "bidirectional"));
    c.causal = causal;
    GPTConfig cg = c;
    cg.device = Device::cuda;
    GPT mc(c, 21), mg(cg, 21);
    Ids x = random_ids(2, 40, 105, 22), y = random_ids(2, 40, 105, 23);
    Tensor lc = mc.loss(x, y), lg = mg.loss(x, y);
    REQUIRE(lg.item() == Approx(lc.item()).epsilon(1e-5));
    backward(lc);
    backward(lg);
    std::vector<NamedParam> pc = mc.parameters(), pg = mg.parameters();
    REQUIRE(pc[1].name == "transformer.rel_bias.weight");
    for (size_t i = 0; i < pc.size(); ++i) {
      INFO("gradient of " << pc[i].name);
      REQUIRE_CLOSE(pg[i].tensor.grad(), pc[i].tensor.grad(), 1e-3, 1e-5);
    }
  }
}

TEST_CASE("cuda: AdamW and gradient clipping match the CPU", "[cuda]") {
  // the same double-precision formulas on both devices: only FMA contraction differs
  std::vector<NamedParam> pc, pg;
  for (int i = 0; i < 3; ++i) {
    Tensor p = randn({17, 5 + i}, 50 + i), g = randn({17, 5 + i}, 60 + i, 3.0);
    for (auto [list, device] : {std::pair{&pc, Device::cpu}, std::pair{&pg, Device::cuda}}) {
      Tensor l = leaf(p, device);
      backward(sum(mul(l, g.to(device))));  // grad = g
      list->push_back({"p" + std::to_string(i), l, i != 1});
    }
  }
  double nc = clip_grad_norm(pc, 1.0), ng = clip_grad_norm(pg, 1.0);
  REQUIRE(ng == Approx(nc).epsilon(1e-9));
  REQUIRE(nc > 1.0);  // so the gradients were scaled
  AdamW ac(pc, AdamWConfig{}), ag(pg, AdamWConfig{});
  for (int step = 0; step < 3; ++step) ac.step(1e-2), ag.step(1e-2);
  for (size_t i = 0; i < pc.size(); ++i) {
    REQUIRE_CLOSE(pg[i].tensor, pc[i].tensor, 1e-6, 1e-7);
    REQUIRE_CLOSE(ag.m()[i], ac.m()[i], 1e-6, 1e-7);
    REQUIRE_CLOSE(ag.v()[i], ac.v()[i], 1e-6, 1e-7);
  }
}

TEST_CASE("cuda: a training step of the canonical model equals the CPU's, every scheme",
          "[cuda][slow]") {
  // B=16, T=256, d=128, 4 layers, 4 heads: the loss, every gradient, then the loss after one
  // AdamW step. Through 4 blocks the float roundings of two summation orders add up: loss to
  // 1e-5 relative; gradients to 1e-3 relative plus 1e-4 of each tensor's largest entry.
  Ids x = random_ids(16, 256, 105, 1), y = random_ids(16, 256, 105, 2);
  for (PeKind pe : {PeKind::none, PeKind::learned, PeKind::sinusoidal, PeKind::rope, PeKind::alibi,
                    PeKind::t5}) {
    INFO("pe " << pe_name(pe));
    GPTConfig cc = canonical(pe), cg = canonical(pe);
    cg.device = Device::cuda;
    GPT mc(cc, 1), mg(cg, 1);
    std::vector<NamedParam> pc = mc.parameters(), pg = mg.parameters();
    REQUIRE(pg[0].tensor.device() == Device::cuda);
    Tensor lc = mc.loss(x, y), lg = mg.loss(x, y);
    REQUIRE(lg.item() == Approx(lc.item()).epsilon(1e-5));
    backward(lc);
    backward(lg);
    for (size_t i = 0; i < pc.size(); ++i) {
      INFO("gradient of " << pc[i].name);
      REQUIRE_CLOSE(pg[i].tensor.grad(), pc[i].tensor.grad(), 1e-3, 1e-4);
    }
    double nc = clip_grad_norm(pc, 1.0), ng = clip_grad_norm(pg, 1.0);
    REQUIRE(ng == Approx(nc).epsilon(1e-4));
    AdamW oc(pc, AdamWConfig{}), og(pg, AdamWConfig{});
    oc.step(1e-3), og.step(1e-3);
    NoGrad no_grad;
    REQUIRE(mg.loss(x, y).item() == Approx(mc.loss(x, y).item()).epsilon(1e-4));
  }
}

TEST_CASE("cuda: evaluation at 512 for every scheme and every RoPE scaling", "[cuda]") {
  // per-position losses (the eval buckets) on the same random model: 1e-4 of the largest
  NoGrad no_grad;
  Ids x = random_ids(1, 512, 105, 3), y = random_ids(1, 512, 105, 4);
  for (PeKind pe : {PeKind::none, PeKind::learned, PeKind::sinusoidal, PeKind::rope, PeKind::alibi,
                    PeKind::t5}) {
    std::vector<ScalingKind> scalings{ScalingKind::none};
    if (pe == PeKind::rope)
      scalings = {ScalingKind::none, ScalingKind::linear, ScalingKind::ntk, ScalingKind::dynamic,
                  ScalingKind::yarn};
    for (ScalingKind sk : scalings) {
      INFO("pe " << pe_name(pe) << ", scaling " << scaling_name(sk));
      GPTConfig cc = canonical(pe), cg = canonical(pe);
      cg.device = Device::cuda;
      GPT mc(cc, 5), mg(cg, 5);
      Interventions iv;
      iv.rope_scaling = {sk, 0, 256};
      Tensor rc, rg;
      double lc = mc.loss(x, y, &rc, iv).item(), lg = mg.loss(x, y, &rg, iv).item();
      REQUIRE(lg == Approx(lc).epsilon(1e-5));
      REQUIRE_CLOSE(rg, rc, 1e-4, 1e-4);
    }
  }
}

TEST_CASE("cuda: KV-cache decoding equals recomputation, every scheme", "[cuda]") {
  NoGrad no_grad;
  Ids ids = random_ids(1, 40, 105, 6);
  std::vector<GPTConfig> configs;
  for (PeKind pe :
       {PeKind::none, PeKind::learned, PeKind::sinusoidal, PeKind::rope, PeKind::alibi, PeKind::t5})
    configs.push_back(canonical(pe));
  configs.push_back(canonical(PeKind::rope));  // half layout, r = 16 of D = 32 dims rotated
  configs.back().pe.rope_layout = RopeLayout::half, configs.back().pe.rope_fraction = 0.5;
  for (GPTConfig c : configs) {
    INFO("pe " << pe_name(c.pe.kind) << " " << rope_layout_name(c.pe.rope_layout)
               << " f = " << c.pe.rope_fraction);
    c.block_size = 16;  // so that dynamic scaling changes theta while decoding
    c.device = Device::cuda;
    GPT m(c, 7);
    Interventions iv;  // dynamic scaling for rope
    if (c.pe.kind == PeKind::rope) iv.rope_scaling = {ScalingKind::dynamic, 0, 16};
    Tensor full = m.logits(ids, iv);  // (1,40,V) at once
    KVCache cache = m.new_cache(40);
    Ids first{std::vector<int32_t>(ids.data.begin(), ids.data.begin() + 10), {1, 10}};
    std::vector<Tensor> parts{m.decode(first, cache, iv.rope_scaling)};
    for (int t = 10; t < 40; ++t)
      parts.push_back(m.decode(Ids{{ids.data[t]}, {1, 1}}, cache, iv.rope_scaling));
    std::vector<double> got;
    for (const Tensor& p : parts)
      for (double v : p.to_vector()) got.push_back(v);
    std::vector<double> want = full.to_vector();
    REQUIRE(got.size() == want.size());
    double worst = 0, scale = 0;
    for (size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::abs(got[i] - want[i])),
      scale = std::max(scale, std::abs(want[i]));
    REQUIRE(worst <= 1e-4 * scale);
  }
}

TEST_CASE("cuda: attention maps (the composed attention on the GPU)", "[cuda]") {
  // probabilities in [0, 1] from T=64 scores: 1e-5 absolute
  NoGrad no_grad;
  Ids ids = random_ids(1, 64, 105, 14);
  for (PeKind pe : {PeKind::rope, PeKind::alibi, PeKind::t5}) {
    INFO("pe " << pe_name(pe));
    GPTConfig cc = canonical(pe), cg = canonical(pe);
    cg.device = Device::cuda;
    GPT mc(cc, 15), mg(cg, 15);
    REQUIRE_CLOSE(mg.attention_map(ids, 1), mc.attention_map(ids, 1), 1e-4, 1e-5);
  }
}

TEST_CASE("cuda: checkpoints are saved from and loaded to the GPU", "[cuda]") {
  test::TempDir dir;
  GPTConfig c = canonical(PeKind::learned);
  c.device = Device::cuda;
  GPT m(c, 9);
  save_checkpoint(m, 3, dir.file("m.safetensors"));
  Checkpoint on_cpu = load_checkpoint(dir.file("m.safetensors"));
  Checkpoint on_gpu_ck = load_checkpoint(dir.file("m.safetensors"), Device::cuda);
  auto a = m.parameters(), b = on_cpu.model->parameters(), g = on_gpu_ck.model->parameters();
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(b[i].tensor.device() == Device::cpu);
    REQUIRE(g[i].tensor.device() == Device::cuda);
    REQUIRE(a[i].tensor.to_vector() == b[i].tensor.to_vector());
    REQUIRE(g[i].tensor.to_vector() == b[i].tensor.to_vector());
  }
}

TEST_CASE("cuda: the caching allocator reuses memory across training steps", "[cuda]") {
  GPTConfig c = canonical(PeKind::rope);
  c.device = Device::cuda;
  GPT m(c, 11);
  AdamW opt(m.parameters(), AdamWConfig{});
  Ids x = random_ids(4, 256, 105, 12), y = random_ids(4, 256, 105, 13);
  std::vector<Tensor> params;
  for (auto& p : m.parameters()) params.push_back(p.tensor);
  auto step = [&] {
    zero_grad(params);
    Tensor loss = m.loss(x, y);
    backward(loss);
    clip_grad_norm(opt.params(), 1.0);
    opt.step(1e-3);
    synchronize(Device::cuda);
  };
  step(), step();
  size_t fresh = cuda_alloc_stats().fresh_allocations;
  step(), step();
  REQUIRE(cuda_alloc_stats().fresh_allocations == fresh);  // every block came from the cache
  REQUIRE(cuda_alloc_stats().bytes_cached > 0);
}

// The val_loss column of a run's log.csv, read as the study and the report read it.
static std::vector<double> logged_val_losses(const std::string& log_csv) {
  std::vector<double> out;
  for (const LogRow& r : read_log(log_csv)) out.push_back(r.val_loss);
  return out;
}

TEST_CASE("cuda: `poslab train` on the GPU follows the CPU run, and resumes there", "[cuda]") {
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the quick brown fox jumps over the lazy dog. 0123456789\n";
  write_corpus(build_corpus(text), dir.file("data"));
  for (PeKind pe : {PeKind::rope, PeKind::alibi}) {
    INFO("pe " << pe_name(pe));
    auto run = [&](const std::string& name, Device device) {
      TrainOptions o;
      o.data = dir.file("data");
      o.out = dir.file(name);
      o.model.pe.kind = pe;
      o.model.device = device;
      o.model.n_embd = 32, o.model.n_layer = 1, o.model.n_head = 2, o.model.block_size = 32;
      o.batch = 4, o.steps = 12, o.eval_every = 4, o.eval_batches = 2, o.quiet = true;
      return o;
    };
    TrainOptions cpu = run(std::string("cpu_") + pe_name(pe), Device::cpu);
    TrainOptions gpu = run(std::string("gpu_") + pe_name(pe), Device::cuda);
    TrainOptions paused = run(std::string("paused_") + pe_name(pe), Device::cuda);
    train(cpu);
    train(gpu);
    paused.stop_after = 6;
    REQUIRE(train(paused).steps == 6);
    paused.stop_after = 0, paused.resume = true;
    REQUIRE(train(paused).steps == 12);

    std::vector<double> lc = logged_val_losses(cpu.out + "/log.csv"),
                        lg = logged_val_losses(gpu.out + "/log.csv"),
                        lp = logged_val_losses(paused.out + "/log.csv");
    REQUIRE(lc.size() == 3);
    REQUIRE(lg.size() == lc.size());
    REQUIRE(lp.size() == lc.size() + 1);  // the pause at step 6 logs a row of its own
    // 12 AdamW steps from the same batches: the devices' float roundings differ (~1e-7), and
    // an update moves a weight by at most ~lr = 1e-3 whatever its gradient, so the losses agree
    // to ~1e-3 (on the emulator: equal in the 6 digits the log keeps).
    for (size_t i = 0; i < lc.size(); ++i) REQUIRE(lg[i] == Approx(lc[i]).margin(2e-3));
    // resumed on the GPU from the GPU's own state: the same run as the straight one, bit for
    // bit (no kernel here uses atomics, and cuBLAS is deterministic on one GPU and stream)
    REQUIRE(lp.back() == lg.back());
    Checkpoint a = load_checkpoint(gpu.out + "/model.safetensors"),
               b = load_checkpoint(paused.out + "/model.safetensors");
    REQUIRE(a.step == 12);
    REQUIRE(b.step == 12);
    auto pa = a.model->parameters(), pb = b.model->parameters();
    for (size_t i = 0; i < pa.size(); ++i)
      REQUIRE(pb[i].tensor.to_vector() == pa[i].tensor.to_vector());
  }
}

TEST_CASE("cuda: p-RoPE and --nope-every equal the CPU; the CPU-only v5 schemes are refused",
          "[cuda]") {
  // p-RoPE and NoPE layers are tables and a skipped rotation: the GPU runs them as RoPE.
  NoGrad no_grad;
  Ids x = random_ids(1, 300, 105, 8), y = random_ids(1, 300, 105, 9);
  for (int variant = 0; variant < 2; ++variant) {
    GPTConfig cc = canonical(PeKind::rope);
    if (variant == 0) cc.pe.rope_proportion = 7.0 / 16;
    if (variant == 1) cc.pe.nope_every = 4;
    GPTConfig cg = cc;
    cg.device = Device::cuda;
    GPT mc(cc, 5), mg(cg, 5);
    INFO("p = " << cc.pe.rope_proportion << ", nope_every = " << cc.pe.nope_every);
    Tensor rc, rg;
    double lc = mc.loss(x, y, &rc).item(), lg = mg.loss(x, y, &rg).item();
    REQUIRE(lg == Approx(lc).epsilon(1e-5));
    REQUIRE_CLOSE(rg, rc, 1e-4, 1e-4);
  }
  for (PeKind pe : {PeKind::kerple, PeKind::fire, PeKind::xpos}) {
    GPTConfig c = canonical(pe);
    c.device = Device::cuda;
    REQUIRE_THROWS_WITH(
        GPT(c, 1), Catch::Contains(std::string("--pe ") + pe_name(pe) + " runs on the CPU only"));
  }
  GPTConfig r = canonical(PeKind::rope);
  r.device = Device::cuda, r.pe.random_positions = 1024;
  REQUIRE_THROWS_WITH(GPT(r, 1), Catch::Contains("--random-positions runs on the CPU only"));
}
