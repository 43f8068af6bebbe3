// checkpoint_meta.h — reading one __metadata__ value of a saved checkpoint, for the
// checkpoint tests (test_checkpoint_meta.cpp, test_checkpoint_v5.cpp).
#pragma once
#include <string>

#include "data/safetensors.h"

namespace poslab::test {

// The value of `key`, or "(absent)".
inline std::string meta_value(const StFile& f, const std::string& key) {
  for (const auto& [k, v] : f.metadata)
    if (k == key) return v;
  return "(absent)";
}

}  // namespace poslab::test
