// libFuzzer target: what `poslab prepare` and the token readers do with hostile bytes —
// UTF-8 decoding, corpus building, vocab.json and .bin reading (through files, as the
// program reads them).
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "data/atomic_file.h"
#include "data/corpus.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  static const std::string dir = "/tmp/poslab_fuzz_corpus_" + std::to_string(getpid());
  try {
    poslab::build_corpus(poslab::clean_fortune_text(bytes, true, "fuzz"));
  } catch (const std::runtime_error&) {
  }
  try {  // two sources, each split on its own: the input's halves
    const size_t half = size / 2;
    poslab::build_corpus({{"a", poslab::clean_fortune_text(bytes.substr(0, half), true, "a")},
                          {"b", poslab::clean_fortune_text(bytes.substr(half), true, "b")}});
  } catch (const std::runtime_error&) {
  }
  try {
    poslab::write_file_atomic(dir + ".json", bytes);
    auto vocab = poslab::load_vocab(dir + ".json");
    poslab::write_file_atomic(dir + ".bin", bytes);
    poslab::load_tokens(dir + ".bin", vocab.size());
  } catch (const std::runtime_error&) {
  }
  return 0;
}
