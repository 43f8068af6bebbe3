// corpus_info.h — what a prepared corpus was made from, written beside it as corpus.json, so
// that a corpus built from other files (another Python, another Debian release) is told
// apart from the one a result was measured on.
//
//   {
//     "corpus": "pystdlib",
//     "source": "libpython3.11-minimal 3.11.2-6+deb12u6, libpython3.11-stdlib 3.11.2-6+deb12u6",
//     "files": 171,            the sources (files) of the corpus
//     "file_bytes": 4742373,   their bytes as read, before the clean-up
//     "bytes": 4742544,        the prepared text: every source after its clean-up, in order,
//                              before the split
//     "sha256": "0781466e...", of that text
//     "train_files": 154,      sources with a train part
//     "val_files": 17,         sources with a val part
//     "val_file_bytes": 481148,  the bytes as read of the sources with a val part
//     "val_bytes": 481165      the prepared val text: what val.bin decodes to, in bytes
//   }
//
// (The numbers are Debian 12's pystdlib. Under the whole-file split every source goes to
// exactly one side; under the per-source 90% split every source has both parts, so
// train_files = val_files = files and val_file_bytes = file_bytes.)
#pragma once
#include <string>
#include <vector>

#include "data/sources.h"

namespace poslab {

struct SourcePart;

struct CorpusInfo {
  std::string corpus;  // the name or path given to `prepare --corpus`
  std::string source;  // corpus_origin (sources.h): packages and versions, or the file
  size_t files = 0;
  size_t file_bytes = 0;
  size_t bytes = 0;
  std::string sha256;
  size_t train_files = 0;
  size_t val_files = 0;
  size_t val_file_bytes = 0;
  size_t val_bytes = 0;
};

// The numbers above for sources split into parts (parts[k] is sources[k]'s split, in code
// points, as build_corpus makes it).
CorpusInfo corpus_info(const std::string& corpus, const std::string& source,
                       const std::vector<SourceText>& sources,
                       const std::vector<SourcePart>& parts);

// corpus.json's text: the object above, one key a line, ending in a newline.
std::string corpus_info_json(const CorpusInfo& info);

}  // namespace poslab
