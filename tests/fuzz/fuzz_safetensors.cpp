// libFuzzer target: the safetensors reader and the checkpoint validation behind it.
// Any input must either load or throw std::runtime_error — never crash, hang or read out of
// bounds (ASan watches).
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "data/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    poslab::parse_safetensors(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
