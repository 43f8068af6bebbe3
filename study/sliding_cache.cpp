// sliding_cache.cpp — see sliding_cache.h.
#include "study/sliding_cache.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "data/atomic_file.h"
#include "train/eval.h"

namespace poslab {
namespace {

// FNV-1a, 64 bits: h = (h xor byte) * 1099511628211 for each byte, from 14695981039346656037.
// Not cryptographic; it only has to tell one model or split from another.
uint64_t fnv1a(const void* data, size_t bytes, uint64_t h = 14695981039346656037ull) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Every parameter's name and values, in checkpoint order.
uint64_t model_hash(const GPT& model) {
  uint64_t h = fnv1a("", 0);
  for (const NamedParam& p : model.parameters()) {
    h = fnv1a(p.name.data(), p.name.size(), h);
    std::vector<double> v = p.tensor.to_vector();
    h = fnv1a(v.data(), v.size() * sizeof(double), h);
  }
  return h;
}

// The losses as float32 little-endian bytes (the hosts we build for are little-endian).
std::string to_bytes(const std::vector<double>& losses) {
  std::string bytes(losses.size() * sizeof(float), '\0');
  for (size_t i = 0; i < losses.size(); ++i) {
    float f = static_cast<float>(losses[i]);
    std::memcpy(&bytes[i * sizeof(float)], &f, sizeof(float));
  }
  return bytes;
}

std::vector<double> from_bytes(const std::string& bytes) {
  std::vector<double> losses(bytes.size() / sizeof(float));
  for (size_t i = 0; i < losses.size(); ++i) {
    float f;
    std::memcpy(&f, &bytes[i * sizeof(float)], sizeof(float));
    losses[i] = f;
  }
  return losses;
}

// sliding.json's one line for these inputs and these sliding.bin bytes (the losses of its
// bytes / 4 first targets).
std::string description(int64_t window, uint64_t model, const std::vector<uint16_t>& val,
                        const std::string& bin) {
  char b[320];
  std::snprintf(b, sizeof b,
                "{\"window\":%lld,\"stride\":%lld,\"targets\":%lld,\"model_hash\":\"%016llx\","
                "\"tokens_hash\":\"%016llx\",\"bin_hash\":\"%016llx\"}\n",
                (long long)window, (long long)std::max<int64_t>(1, window / 4),
                (long long)(bin.size() / sizeof(float)), (unsigned long long)model,
                (unsigned long long)fnv1a(val.data(), val.size() * sizeof(uint16_t)),
                (unsigned long long)fnv1a(bin.data(), bin.size()));
  return b;
}

}  // namespace

std::vector<double> run_sliding_losses(const std::string& run_dir, GPT& model,
                                       const std::vector<uint16_t>& val, bool recompute,
                                       int64_t targets, const Interventions& iv) {
  namespace fs = std::filesystem;
  const std::string bin_path = run_dir + "/sliding.bin", json_path = run_dir + "/sliding.json";
  const int64_t window = model.config().block_size;
  const auto want =
      static_cast<size_t>(sliding_target_count(static_cast<int64_t>(val.size()), targets));
  const uint64_t hash = model_hash(model);
  if (!recompute && fs::exists(bin_path) && fs::exists(json_path)) {
    std::string bin = read_file(bin_path);
    if (bin.size() % sizeof(float) == 0 && bin.size() >= want * sizeof(float) &&
        read_file(json_path) == description(window, hash, val, bin))
      return from_bytes(bin.substr(0, want * sizeof(float)));
  }
  std::vector<double> losses = sliding_losses(model, val, window, 0, targets, iv);
  std::string bin = to_bytes(losses);
  write_file_atomic(bin_path, bin);
  write_file_atomic(json_path, description(window, hash, val, bin));
  return from_bytes(bin);  // as a later run reads them back: the same numbers either way
}

}  // namespace poslab
