#include "train/checkpoint.h"

#include <cmath>
#include <cstdlib>
#include <map>

#include "tensor/ops.h"

namespace poslab {

StTensor to_st(const std::string& name, const Tensor& t) {
  StTensor st;
  st.name = name;
  st.shape = t.shape();
  std::vector<double> v = t.to_vector();
  st.data.assign(v.begin(), v.end());
  return st;
}

void from_st(const StTensor& st, const Tensor& dst, const std::string& what) {
  if (st.shape != dst.shape())
    fail(what, ": tensor '", st.name, "' has shape ", shape_str(st.shape),
         ", but the config implies ", shape_str(dst.shape()));
  std::vector<double> v(st.data.begin(), st.data.end());
  NoGrad no_grad;
  dst.copy_(Tensor::from_vector(v, dst.shape(), dst.dtype()));
}

static std::string number_text(double x) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

// The v5 options, each only where it is on (absent means off, SPEC's rule for older files).
static void write_v5_options(const PosencConfig& pe, StMetadata& meta) {
  if (pe.kind == PeKind::xpos) meta.push_back({"rope_layout", rope_layout_name(pe.rope_layout)});
  if (pe.kind == PeKind::rope && pe.rope_proportion != 1)
    meta.push_back({"rope_proportion", number_text(pe.rope_proportion)});
  if (pe.kind == PeKind::xpos) meta.push_back({"xpos_scale_base", number_text(pe.xpos_scale_base)});
  if (pe.kind == PeKind::fire) meta.push_back({"fire_width", std::to_string(pe.fire_width)});
  if (pe.nope_every > 0) meta.push_back({"nope_every", std::to_string(pe.nope_every)});
  if (pe.random_positions > 0)
    meta.push_back({"random_positions", std::to_string(pe.random_positions)});
}

void save_checkpoint(const GPT& model, int64_t step, const std::string& path) {
  const GPTConfig& c = model.config();
  StMetadata meta{{"pe", pe_name(c.pe.kind)},
                  {"n_layer", std::to_string(c.n_layer)},
                  {"n_head", std::to_string(c.n_head)},
                  {"n_embd", std::to_string(c.n_embd)},
                  {"vocab_size", std::to_string(c.vocab_size)},
                  {"block_size", std::to_string(c.block_size)}};
  if (c.pe.kind == PeKind::learned) meta.push_back({"max_len", std::to_string(c.pe.max_len)});
  char theta[64];
  std::snprintf(theta, sizeof theta, "%.17g", c.pe.theta);
  meta.push_back({"rope_theta", theta});
  if (c.pe.kind == PeKind::rope) {
    char fraction[64];
    std::snprintf(fraction, sizeof fraction, "%.17g", c.pe.rope_fraction);
    meta.push_back({"rope_layout", rope_layout_name(c.pe.rope_layout)});
    meta.push_back({"rope_fraction", fraction});
  }
  if (c.pe.kind == PeKind::t5) {
    meta.push_back({"t5_buckets", std::to_string(c.pe.t5_buckets)});
    meta.push_back({"t5_max_distance", std::to_string(c.pe.t5_max_distance)});
  }
  write_v5_options(c.pe, meta);
  meta.push_back({"causal", c.causal ? "true" : "false"});
  meta.push_back({"step", std::to_string(step)});
  meta.push_back({"embedding", embedding_name(c.embedding)});
  std::vector<StTensor> tensors;
  for (const NamedParam& p : model.parameters()) tensors.push_back(to_st(p.name, p.tensor));
  save_safetensors(path, tensors, meta);
}

// A metadata value as an integer: decimal digits only, within [lo, hi].
static int64_t meta_int(const std::map<std::string, std::string>& m, const std::string& key,
                        const std::string& path, int64_t lo, int64_t hi) {
  auto it = m.find(key);
  if (it == m.end()) fail(path, ": __metadata__ lacks '", key, "'");
  const std::string& s = it->second;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || s.find_first_not_of("0123456789") != std::string::npos ||
      v < lo || v > hi)
    fail(path, ": __metadata__ '", key, "' = '", s, "' is not an integer in [", lo, ", ", hi, "]");
  return v;
}

// A metadata value that must be one of `valid`; `fallback` when the key is absent (a file
// written before the key existed).
static std::string meta_choice(const std::map<std::string, std::string>& m, const std::string& key,
                               const std::string& path, const std::vector<std::string>& valid,
                               const std::string& fallback) {
  auto it = m.find(key);
  if (it == m.end()) return fallback;
  std::string list;
  for (const std::string& v : valid) {
    if (v == it->second) return v;
    list += (list.empty() ? "" : "|") + v;
  }
  fail(path, ": __metadata__ '", key, "' = '", it->second, "' is not one of ", list);
}

// rope_layout and rope_fraction; absent: interleaved and 1 (checkpoints from before the options).
static void read_rope_options(const std::map<std::string, std::string>& m, const std::string& path,
                              PosencConfig& pe) {
  pe.rope_layout = parse_rope_layout(
      meta_choice(m, "rope_layout", path, {"interleaved", "half"}, "interleaved"));
  auto f = m.find("rope_fraction");
  if (f == m.end()) return;
  char* end = nullptr;
  pe.rope_fraction = std::strtod(f->second.c_str(), &end);
  if (f->second.empty() || *end != '\0' || !(pe.rope_fraction > 0 && pe.rope_fraction <= 1))
    fail(path, ": __metadata__ 'rope_fraction' = '", f->second, "' is not a number in (0, 1]");
}

// A metadata value as a finite number within [lo, hi]; `fallback` when absent.
static double meta_number(const std::map<std::string, std::string>& m, const std::string& key,
                          const std::string& path, double lo, double hi, double fallback) {
  auto it = m.find(key);
  if (it == m.end()) return fallback;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
    fail(path, ": __metadata__ '", key, "' = '", it->second, "' is not a number in [", lo, ", ", hi,
         "]");
  return v;
}

// The v5 options (absent: off), and the checks of the tensors they imply.
static void read_v5_options(const std::map<std::string, std::string>& m, const std::string& path,
                            PosencConfig& pe) {
  if (pe.kind == PeKind::xpos)
    pe.rope_layout = parse_rope_layout(
        meta_choice(m, "rope_layout", path, {"interleaved", "half"}, "interleaved"));
  if (pe.kind == PeKind::rope)
    pe.rope_proportion = meta_number(m, "rope_proportion", path, 0, 1, 1);
  if (pe.kind == PeKind::xpos)
    pe.xpos_scale_base = meta_number(m, "xpos_scale_base", path, 1e-300, 1e300, 512);
  if (pe.kind == PeKind::fire) pe.fire_width = meta_int(m, "fire_width", path, 1, 1 << 16);
  if (m.count("nope_every")) pe.nope_every = meta_int(m, "nope_every", path, 1, 1 << 20);
  if (m.count("random_positions"))
    pe.random_positions = meta_int(m, "random_positions", path, 1, 1 << 24);
}

T5Options read_t5_options(const StFile& f, const std::string& path, int64_t n_head, bool causal) {
  std::map<std::string, std::string> m(f.metadata.begin(), f.metadata.end());
  T5Options o;
  o.causal = causal;
  o.num_buckets = meta_int(m, "t5_buckets", path, causal ? 2 : 4, 1 << 16);
  int64_t max_exact = (causal ? o.num_buckets : o.num_buckets / 2) / 2;
  o.max_distance = meta_int(m, "t5_max_distance", path, max_exact + 1, 1 << 24);
  const char* name = "transformer.rel_bias.weight";
  const StTensor* table = nullptr;
  for (const StTensor& t : f.tensors)
    if (t.name == name) table = &t;
  if (!table)
    fail(path, ": pe = t5, but tensor '", name, "' [t5_buckets, n_head] = [", o.num_buckets, ", ",
         n_head, "] is missing");
  if (table->shape != std::vector<int64_t>{o.num_buckets, n_head})
    fail(path, ": __metadata__ 't5_buckets' = '", o.num_buckets, "' and n_head = ", n_head,
         " do not match tensor '", name, "' of shape ", shape_str(table->shape));
  return o;
}

Checkpoint load_checkpoint(const std::string& path, Device device) {
  StFile f = load_safetensors(path);
  std::map<std::string, std::string> m(f.metadata.begin(), f.metadata.end());
  GPTConfig c;
  if (!m.count("pe")) fail(path, ": __metadata__ lacks 'pe'");
  c.pe.kind = parse_pe(meta_choice(m, "pe", path, pe_names(), ""));
  c.n_layer = meta_int(m, "n_layer", path, 1, 1024);
  c.n_head = meta_int(m, "n_head", path, 1, 1024);
  c.n_embd = meta_int(m, "n_embd", path, 1, 1 << 16);
  c.vocab_size = meta_int(m, "vocab_size", path, 1, 65535);
  c.block_size = meta_int(m, "block_size", path, 1, 1 << 24);
  if (c.pe.kind == PeKind::learned) c.pe.max_len = meta_int(m, "max_len", path, 1, 1 << 24);
  auto th = m.find("rope_theta");
  if (th == m.end()) fail(path, ": __metadata__ lacks 'rope_theta'");
  char* end = nullptr;
  c.pe.theta = std::strtod(th->second.c_str(), &end);
  if (th->second.empty() || *end != '\0' || !std::isfinite(c.pe.theta))
    fail(path, ": __metadata__ 'rope_theta' = '", th->second, "' is not a number");
  auto causal = m.find("causal");
  if (causal == m.end() || (causal->second != "true" && causal->second != "false"))
    fail(path, ": __metadata__ 'causal' must be \"true\" or \"false\"");
  c.causal = causal->second == "true";
  c.embedding = parse_embedding(meta_choice(m, "embedding", path, embedding_names(), "gpt2"));
  if (c.pe.kind == PeKind::rope) read_rope_options(m, path, c.pe);
  read_v5_options(m, path, c.pe);
  if (c.pe.kind == PeKind::t5) {
    T5Options o = read_t5_options(f, path, c.n_head, c.causal);
    c.pe.t5_buckets = o.num_buckets, c.pe.t5_max_distance = o.max_distance;
  }
  c.device = device;
  int64_t step = meta_int(m, "step", path, 0, int64_t(1) << 40);
  // the config is validated before anything is allocated from it
  c.validate();
  int64_t params = c.vocab_size * c.n_embd + c.n_layer * 12 * c.n_embd * c.n_embd +
                   (c.pe.kind == PeKind::learned ? c.pe.max_len * c.n_embd : 0) +
                   (c.pe.kind == PeKind::t5 ? c.pe.t5_buckets * c.n_head : 0);
  if (params > (int64_t(1) << 32))
    fail(path, ": the config in __metadata__ implies ", params, " parameters; refusing");

  Checkpoint ck;
  ck.model = std::make_unique<GPT>(c, 0);
  ck.step = step;
  std::map<std::string, const StTensor*> by_name;
  for (const StTensor& t : f.tensors) by_name[t.name] = &t;
  std::vector<NamedParam> params_list = ck.model->parameters();
  for (const NamedParam& p : params_list) {
    auto it = by_name.find(p.name);
    if (it == by_name.end())
      fail(path, ": tensor '", p.name, "' is missing (shape ", shape_str(p.tensor.shape()),
           ", pe = ", pe_name(c.pe.kind), ")");
    from_st(*it->second, p.tensor, path);
    by_name.erase(it);
  }
  ck.model->project();  // KERPLE: clamp again (a no-op on poslab's own files)
  if (!by_name.empty())
    fail(path, ": unexpected tensor '", by_name.begin()->first, "' for pe = ", pe_name(c.pe.kind));
  return ck;
}

}  // namespace poslab
