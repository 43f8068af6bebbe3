// libFuzzer target: the JSON parser that reads vocab.json and safetensors headers.
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "data/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    poslab::json_parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
