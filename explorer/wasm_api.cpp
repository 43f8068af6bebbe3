// wasm_api.cpp — the explorer's one entry layer: plain C functions over poslab's own inference
// code, for the page's Web Worker (docs/explorer/worker.js). Nothing here computes a model: a
// checkpoint is read by train/checkpoint.cpp, a window's losses come from train/eval.cpp's
// evaluate (what `poslab eval` prints), attention weights from GPT::attention_maps (what
// `poslab attend` draws), generation from GPT::decode (what `poslab generate` runs), RoPE's
// scaled frequencies from posenc/rope_scaling.cpp. This file only turns plain arrays into the
// library's types and back.
//
// Conventions: a model is an int handle (px_load, px_random); arrays are written into buffers
// the caller allocated with the sizes stated per function; on a bad input a function returns
// -1 (or NaN) and px_error() says why, in the library's words (the messages name the CLI flag
// the same check guards there).
#include <emscripten.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "posenc/rope_scaling.h"
#include "tensor/check.h"
#include "train/checkpoint.h"
#include "train/eval.h"

using namespace poslab;

namespace {

// One model and what the worker asked of it last: the attention maps of px_inspect, the cache
// and the logits of a generation in progress.
struct Session {
  std::unique_ptr<GPT> model;
  std::string info;          // px_info's JSON
  std::vector<Tensor> maps;  // px_inspect: (1,H,T,T) per layer
  KVCache cache;             // px_gen_*
  Tensor logits;             // the last decode's logits (1,T,V)
  RopeScaling gen_scaling;
  Generator gen{0};
};

std::vector<std::unique_ptr<Session>> sessions;
std::string last_error;

Session& session(int h) {
  if (h < 0 || h >= static_cast<int>(sessions.size()) || !sessions[h])
    fail("explorer: no model with handle ", h);
  return *sessions[h];
}

// Runs f; on an exception records its message and returns `bad`.
template <class R, class F>
R guarded(R bad, F&& f) {
  try {
    last_error.clear();
    return f();
  } catch (const std::exception& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "explorer: unknown error";
  }
  return bad;
}

std::string info_json(const GPT& m, int64_t step) {
  const GPTConfig& c = m.config();
  char b[512];
  std::snprintf(b, sizeof b,
                "{\"pe\":\"%s\",\"n_layer\":%lld,\"n_head\":%lld,\"n_embd\":%lld,"
                "\"vocab_size\":%lld,\"block_size\":%lld,\"max_len\":%lld,\"theta\":%.17g,"
                "\"causal\":%s,\"step\":%lld,\"parameters\":%lld}",
                pe_name(c.pe.kind), (long long)c.n_layer, (long long)c.n_head, (long long)c.n_embd,
                (long long)c.vocab_size, (long long)c.block_size, (long long)c.pe.max_len,
                c.pe.theta, c.causal ? "true" : "false", (long long)step,
                (long long)m.num_parameters());
  return b;
}

int add_session(std::unique_ptr<GPT> model, int64_t step) {
  auto s = std::make_unique<Session>();
  s->info = info_json(*model, step);
  s->model = std::move(model);
  sessions.push_back(std::move(s));
  return static_cast<int>(sessions.size()) - 1;
}

// Token ids, each checked against the model's vocabulary.
std::vector<uint16_t> tokens_of(const GPT& m, const int32_t* ids, int n) {
  std::vector<uint16_t> t(n);
  for (int i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= m.config().vocab_size)
      fail("explorer: token ", ids[i], " at position ", i, " is outside the vocabulary (",
           m.config().vocab_size, " characters)");
    t[i] = static_cast<uint16_t>(ids[i]);
  }
  return t;
}

Ids ids_of(const std::vector<uint16_t>& t) {
  return Ids{std::vector<int32_t>(t.begin(), t.end()), {1, static_cast<int64_t>(t.size())}};
}

// A scaling as `poslab eval --rope-scaling KIND [--factor s]` asks for it (factor 0: not given).
RopeScaling scaling_of(const char* kind, double factor) {
  RopeScaling sc;
  sc.kind = parse_scaling(kind);
  if (factor != 0) {
    if (sc.kind == ScalingKind::none) fail("--factor: needs --rope-scaling");
    if (!(factor >= 1)) fail("--factor: expected s >= 1, but got ", factor);
    sc.factor = factor;
  }
  return sc;
}

}  // namespace

extern "C" {

// The message of the last failure ("" after a success).
EMSCRIPTEN_KEEPALIVE const char* px_error() {
  return last_error.c_str();
}

// A checkpoint (a model.safetensors file's n bytes) -> a handle, or -1. The bytes are written
// to the in-memory file system and read by load_checkpoint, with every check it makes.
EMSCRIPTEN_KEEPALIVE int px_load(const uint8_t* bytes, int n) {
  return guarded(-1, [&] {
    const std::string path = "/model-" + std::to_string(sessions.size()) + ".safetensors";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes, 1, n, f) != static_cast<size_t>(n)) fail("explorer: ", path);
    std::fclose(f);
    Checkpoint ck = load_checkpoint(path);
    std::remove(path.c_str());
    return add_session(std::move(ck.model), ck.step);
  });
}

// A freshly initialised model (seeded, untrained) of the given shape, for the ordering view.
EMSCRIPTEN_KEEPALIVE int px_random(const char* pe, int causal, int vocab, int layers, int heads,
                                   int d, int ctx, int seed) {
  return guarded(-1, [&] {
    GPTConfig c;
    c.pe.kind = parse_pe(pe);
    c.causal = causal != 0, c.vocab_size = vocab, c.n_layer = layers, c.n_head = heads;
    c.n_embd = d, c.block_size = ctx;
    return add_session(std::make_unique<GPT>(c, static_cast<uint64_t>(seed)), 0);
  });
}

// The model's config as one JSON object (pe, n_layer, n_head, n_embd, vocab_size, block_size,
// max_len, theta, causal, step, parameters).
EMSCRIPTEN_KEEPALIVE const char* px_info(int h) {
  return guarded<const char*>("", [&] { return session(h).info.c_str(); });
}

EMSCRIPTEN_KEEPALIVE void px_free(int h) {
  guarded(0, [&] {
    session(h);
    sessions[h].reset();
    cpu_empty_cache();
    return 0;
  });
}

// One window through `poslab eval`'s code: tokens[0..n) give L = n-1 targets, evaluated as one
// window from position 0 (evaluate(..., L, 1 window, ...)), under the interventions of
// docs/evaluation.md: position offset P, attention window W (0: none), log logit scale, and a
// RoPE scaling (kind "none" or one of rope_scaling.h, factor 0: max(1, L/T0)). Writes the L
// per-target losses (nats) to out; returns their mean, or NaN with px_error.
EMSCRIPTEN_KEEPALIVE double px_eval(int h, const int32_t* ids, int n, int offset, int window,
                                    int log_scale, const char* kind, double factor, double* out) {
  return guarded<double>(NAN, [&] {
    const GPT& m = *session(h).model;
    const std::vector<uint16_t> t = tokens_of(m, ids, n);
    if (n < 2) fail("explorer: a window needs at least 2 characters, but got ", n);
    Interventions iv;
    iv.rope_scaling = scaling_of(kind, factor);
    iv.position_offset = offset, iv.attention_window = window, iv.log_scale = log_scale != 0;
    if (offset > 0 && iv.rope_scaling.kind != ScalingKind::none)
      fail("--position-offset: only defined with --rope-scaling none, but got --rope-scaling ",
           kind);
    std::vector<double> losses;
    const int64_t L = n - 1;
    EvalResult r = evaluate(m, t, L, 1, 1, "window", &losses, 0, iv);
    std::copy(losses.begin(), losses.end(), out);
    cpu_empty_cache();  // the next window may be of another length: give the blocks back
    return r.loss;
  });
}

// The reference of docs/evaluation.md for the same targets: tokens[0..n)'s n-1 targets each
// scored with at most `window` tokens of context at trained positions (sliding_losses, the
// windows poslab eval's sliding comparison uses; window = T0). n must exceed window + 1.
// Writes n-1 losses to out; returns 0, or -1 with px_error.
EMSCRIPTEN_KEEPALIVE int px_sliding(int h, const int32_t* ids, int n, int window, double* out) {
  return guarded(-1, [&] {
    const GPT& m = *session(h).model;
    const std::vector<double> v = sliding_losses(m, tokens_of(m, ids, n), window, 0, n - 1);
    std::copy(v.begin(), v.end(), out);
    cpu_empty_cache();
    return 0;
  });
}

// tokens[0..n) through the model once: for each position the k most likely next characters
// (ids to top_ids, probabilities to top_p, n*k each, most likely first), and every layer's
// attention weights kept for px_attention_row. Returns 0, or -1 with px_error.
EMSCRIPTEN_KEEPALIVE int px_inspect(int h, const int32_t* ids, int n, int k, int32_t* top_ids,
                                    float* top_p) {
  return guarded(-1, [&] {
    Session& s = session(h);
    const GPT& m = *s.model;
    const Ids x = ids_of(tokens_of(m, ids, n));
    NoGrad no_grad;
    const int64_t V = m.config().vocab_size;
    const Tensor p = softmax(m.logits(x)).contiguous();  // (1,n,V)
    const float* pv = p.data<float>();
    for (int i = 0; i < n; ++i) {
      std::vector<int32_t> order(V);
      for (int64_t v = 0; v < V; ++v) order[v] = static_cast<int32_t>(v);
      const float* row = pv + i * V;
      std::partial_sort(order.begin(), order.begin() + std::min<int64_t>(k, V), order.end(),
                        [&](int32_t a, int32_t b) { return row[a] > row[b]; });
      for (int j = 0; j < k; ++j) {
        top_ids[i * k + j] = j < V ? order[j] : -1;
        top_p[i * k + j] = j < V ? row[order[j]] : 0.f;
      }
    }
    s.maps = m.attention_maps(x, m.config().n_layer - 1);
    return 0;
  });
}

// Where query i attends, in every layer and head of px_inspect's window: out[(l H + h) n + j],
// the weight of key j (0 for j > i under the causal mask). n_layer * n_head * n floats.
EMSCRIPTEN_KEEPALIVE int px_attention_row(int h, int i, float* out) {
  return guarded(-1, [&] {
    const Session& s = session(h);
    if (s.maps.empty()) fail("explorer: px_attention_row before px_inspect");
    const int64_t H = s.maps[0].size(1), T = s.maps[0].size(2);
    if (i < 0 || i >= T) fail("explorer: query ", i, " outside the window of ", T);
    for (size_t l = 0; l < s.maps.size(); ++l) {
      const Tensor map = s.maps[l].contiguous();
      const float* p = map.data<float>();
      for (int64_t hh = 0; hh < H; ++hh)
        for (int64_t j = 0; j < T; ++j) out[(l * H + hh) * T + j] = p[(hh * T + i) * T + j];
    }
    return 0;
  });
}

// The logits of every position (n * vocab_size floats to out), no interventions.
EMSCRIPTEN_KEEPALIVE int px_logits(int h, const int32_t* ids, int n, float* out) {
  return guarded(-1, [&] {
    const GPT& m = *session(h).model;
    NoGrad no_grad;
    const Tensor lg = m.logits(ids_of(tokens_of(m, ids, n))).contiguous();
    std::copy(lg.data<float>(), lg.data<float>() + lg.numel(), out);
    return 0;
  });
}

// Generation as `poslab generate` runs it: the prompt fed once into a KV cache of `total`
// positions (prompt + characters to come), under a RoPE scaling as px_eval's; then px_gen_next
// draws one character at a time with the seed given here.
EMSCRIPTEN_KEEPALIVE int px_gen_start(int h, const int32_t* ids, int n, int total, const char* kind,
                                      double factor, int seed) {
  return guarded(-1, [&] {
    Session& s = session(h);
    const GPT& m = *s.model;
    const std::vector<uint16_t> t = tokens_of(m, ids, n);
    if (n < 1) fail("explorer: generate needs a prompt of at least one character");
    if (m.config().pe.kind == PeKind::learned && total > m.config().pe.max_len)
      fail("--tokens: prompt + tokens = ", total,
           " positions, but the learned table has max_len = ", m.config().pe.max_len);
    s.gen_scaling = scaling_of(kind, factor);
    s.gen = Generator(static_cast<uint64_t>(seed));
    s.cache = m.new_cache(total);
    s.logits = m.decode(ids_of(t), s.cache, s.gen_scaling);
    return 0;
  });
}

// The next character: drawn from the last logits at `temperature` (0: the most likely), as
// poslab generate's sample_next (train/commands.cpp) draws it, then fed to the model while the
// cache has room. Returns its id, or -1 with px_error.
EMSCRIPTEN_KEEPALIVE int px_gen_next(int h, double temperature) {
  return guarded(-1, [&] {
    Session& s = session(h);
    if (!s.logits.defined()) fail("explorer: px_gen_next before px_gen_start");
    const int64_t T = s.logits.size(1);
    std::vector<double> row = s.logits.slice(1, T - 1, T).to_vector();
    int32_t next = 0;
    if (temperature == 0) {
      for (size_t v = 1; v < row.size(); ++v)
        if (row[v] > row[next]) next = static_cast<int32_t>(v);
    } else {
      double mx = row[0], z = 0;
      for (double x : row) mx = std::max(mx, x);
      for (double& x : row) z += (x = std::exp((x - mx) / temperature));
      double u = s.gen.uniform() * z;
      for (size_t v = 0; v < row.size(); ++v)
        if ((u -= row[v]) <= 0 || v + 1 == row.size()) {
          next = static_cast<int32_t>(v);
          break;
        }
    }
    if (s.cache.len() < s.cache.layers[0].k.size(1))
      s.logits = s.model->decode(Ids{{next}, {1, 1}}, s.cache, s.gen_scaling);
    return next;
  });
}

// RoPE's frequencies for head dim D and base theta under a scaling (kind as px_eval's, not
// dynamic; factor s, training length T0, window L): out[i] = the angle per position of pair i,
// freq_i * pos_scale (D/2 values, rope_frequencies). Returns the factor on cos and sin, or NaN.
EMSCRIPTEN_KEEPALIVE double px_rope_frequencies(int D, double theta, const char* kind, double s,
                                                int T0, int L, double* out) {
  return guarded<double>(NAN, [&] {
    RopeScaling sc;
    sc.kind = parse_scaling(kind);
    if (sc.kind == ScalingKind::dynamic) fail("explorer: dynamic has one table per row");
    sc.factor = s, sc.train_len = T0;
    const RopeFrequencies f = rope_frequencies(D, theta, sc, L);
    for (size_t i = 0; i < f.freq.size(); ++i) out[i] = f.freq[i] * f.pos_scale;
    return f.mscale;
  });
}

// YaRN's share of each pair's own frequency (D/2 values): the deployed ramp (paper = 0,
// yarn_keep) or the paper's (paper = 1, yarn_keep_paper).
EMSCRIPTEN_KEEPALIVE int px_yarn_keep(int D, double theta, int T0, int paper, double* out) {
  return guarded(-1, [&] {
    const std::vector<double> k = paper ? yarn_keep_paper(D, theta, T0) : yarn_keep(D, theta, T0);
    std::copy(k.begin(), k.end(), out);
    return 0;
  });
}

// Memory: out[0] the WebAssembly memory's size, out[1] the tensor allocator's peak bytes in use
// since the start, out[2] its bytes in use now (bytes, as doubles).
EMSCRIPTEN_KEEPALIVE void px_memory(double* out) {
  const AllocStats st = cpu_alloc_stats();
  out[0] = static_cast<double>(__builtin_wasm_memory_size(0)) * 65536.0;
  out[1] = static_cast<double>(st.peak_bytes);
  out[2] = static_cast<double>(st.bytes_in_use);
}

}  // extern "C"
