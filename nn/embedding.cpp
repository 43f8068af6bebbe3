// embedding.cpp — the names of the two embedding conventions (embedding.h).
#include "nn/embedding.h"

namespace poslab {

const std::vector<std::string>& embedding_names() {
  static const std::vector<std::string> names{"gpt2", "scaled"};  // EmbeddingKind's order
  return names;
}

EmbeddingKind parse_embedding(const std::string& name) {
  return static_cast<EmbeddingKind>(name_index(embedding_names(), name, "--embedding"));
}

const char* embedding_name(EmbeddingKind kind) {
  return embedding_names()[static_cast<int>(kind)].c_str();
}

}  // namespace poslab
