// corpus_info.cpp — the numbers of corpus.json; what each means: corpus_info.h.
#include "data/corpus_info.h"

#include "data/corpus.h"
#include "data/error.h"
#include "data/json.h"
#include "data/sha256.h"

namespace poslab {

namespace {

// The bytes of text from its code point `first` on (text is valid UTF-8: a code point starts
// at every byte that is not a continuation byte 10xxxxxx).
size_t bytes_from_code_point(const std::string& text, size_t first) {
  size_t pos = 0;
  for (size_t seen = 0; pos < text.size(); ++pos) {
    if ((static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) continue;
    if (seen++ == first) break;
  }
  return text.size() - pos;
}

}  // namespace

CorpusInfo corpus_info(const std::string& corpus, const std::string& source,
                       const std::vector<SourceText>& sources,
                       const std::vector<SourcePart>& parts) {
  if (parts.size() != sources.size()) {
    data_error("corpus_info: expected one split part per source, but got ", parts.size(),
               " parts for ", sources.size(), " sources");
  }
  CorpusInfo info;
  info.corpus = corpus;
  info.source = source;
  info.files = sources.size();
  Sha256 hash;
  for (size_t k = 0; k < sources.size(); ++k) {
    const SourceText& s = sources[k];
    hash.update(s.text);
    info.file_bytes += s.file_bytes;
    info.bytes += s.text.size();
    if (parts[k].train > 0) ++info.train_files;
    if (parts[k].val > 0) {
      ++info.val_files;
      info.val_file_bytes += s.file_bytes;
      info.val_bytes += bytes_from_code_point(s.text, parts[k].train);
    }
  }
  info.sha256 = hash.hex();
  return info;
}

std::string corpus_info_json(const CorpusInfo& info) {
  const auto number = [](const char* key, size_t value) {
    return "  \"" + std::string(key) + "\": " + std::to_string(value) + ",\n";
  };
  return "{\n  \"corpus\": " + json_quote(info.corpus) +
         ",\n  \"source\": " + json_quote(info.source) + ",\n" + number("files", info.files) +
         number("file_bytes", info.file_bytes) + number("bytes", info.bytes) +
         "  \"sha256\": " + json_quote(info.sha256) + ",\n" +
         number("train_files", info.train_files) + number("val_files", info.val_files) +
         number("val_file_bytes", info.val_file_bytes) +
         "  \"val_bytes\": " + std::to_string(info.val_bytes) + "\n}\n";
}

}  // namespace poslab
