// embedding.cpp — the names of the two embedding conventions (embedding.h).
#include "nn/embedding.h"

namespace poslab {

const std::vector<std::string>& embedding_names() {
  static const std::vector<std::string> names{"gpt2", "scaled"};  // EmbeddingKind's order
  return names;
}

EmbeddingKind parse_embedding(const std::string& name) {
  const std::vector<std::string>& names = embedding_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<EmbeddingKind>(i);
  fail("--embedding: expected one of gpt2|scaled, but got '", name, "'");
}

const char* embedding_name(EmbeddingKind kind) {
  return embedding_names()[static_cast<int>(kind)].c_str();
}

}  // namespace poslab
