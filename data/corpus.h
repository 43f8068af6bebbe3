// corpus.h — character-level corpora on disk (docs/formats.md, nanoGPT's layout).
//
// A prepared corpus is a folder holding
//   train.bin, val.bin  token ids as little-endian uint16, nothing else;
//   vocab.json          a JSON array of one-character strings, sorted by code point;
//                       token id = index. Example: ["\n", " ", "!", "a", "é", "中"]
//   corpus.json         written by `prepare`: what the text was made from, its size and its
//                       SHA-256 (data/corpus_info.h)
// Text is split into Unicode code points, so any script works (Chinese included).
//
// Where the text comes from: data/sources.h (fortunes, fortunes-zh, pystdlib, kjv, a file),
// as one or more sources (the files of the corpus, in order). train.bin holds the train
// parts in source order, val.bin the val parts in the same order. The corpus picks one of
// two split rules (split_rule); train and val over all sources must both be non-empty.
//
// SplitRule::per_source_90 (every corpus but pystdlib), per source of n code points: train
// takes its first floor(0.9 n) (nanoGPT's `data[:int(n*0.9)]`), extended to the end of that
// line (its newline included), val the rest, so val samples every file of a multi-file
// corpus rather than the last few. Worked example: nine lines "aaaa\n" then "bb\n"
// (n = 48): floor(43.2) = 43 characters end inside the ninth line, which ends at 45, so
// train = the nine lines and val = "bb\n". A source of one line gives val nothing.
//
// SplitRule::whole_files (pystdlib): source k (0-based, in order) goes to val whole if
// k mod 10 = 9, else to train whole, so a long val window reads one module, not the tails
// of many. Worked example: sources s0..s11 give train s0..s8 s10 s11, val s9.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/corpus_info.h"
#include "data/sources.h"

namespace poslab {

enum class SplitRule { per_source_90, whole_files };

// The rule a corpus name is split by: whole_files for "pystdlib", per_source_90 otherwise.
SplitRule split_rule(const std::string& corpus);

// Under whole_files: whether source k goes to val (k mod 10 = 9).
inline bool whole_file_goes_to_val(size_t k) {
  return k % 10 == 9;
}

// How one source was split: its name and how many of its characters went to each part.
struct SourcePart {
  std::string name;
  size_t train = 0;
  size_t val = 0;
};

struct Corpus {
  std::vector<std::string> vocab;  // one UTF-8 character each, sorted by code point
  std::vector<uint16_t> train;     // ids into vocab: every source's train part, in order
  std::vector<uint16_t> val;       // every source's val part, in the same order
  std::vector<SourcePart> parts;   // one per source
  CorpusInfo info;                 // set by prepare_corpus (corpus.json); empty otherwise
};

// The largest vocabulary a uint16 id can index (ids 0..65534).
constexpr size_t max_vocab_size = 65535;

// The number of characters of one source (code points cps) that go to train: the split
// described above.
size_t train_length(const std::vector<char32_t>& cps);

// Builds the sorted vocabulary of all sources, encodes them and splits them by the rule.
Corpus build_corpus(const std::vector<SourceText>& sources,
                    SplitRule rule = SplitRule::per_source_90);
Corpus build_corpus(const std::string& text);  // one source, named "corpus text"

// `poslab prepare`: the sources of a corpus name (sources.h), built as above with the
// corpus's split rule, and its info (corpus_info.h).
Corpus prepare_corpus(const std::string& corpus);

// Creates dir (and its parents) and writes train.bin, val.bin, vocab.json, and corpus.json
// when the corpus has its info (from prepare_corpus), each atomically.
void write_corpus(const Corpus& corpus, const std::string& dir);

// Reads a vocab.json: an array of strings, each exactly one character, strictly increasing
// by code point, at most max_vocab_size of them. Raw UTF-8 and \u escapes both work.
std::vector<std::string> load_vocab(const std::string& path);

// Reads a .bin file of little-endian uint16 ids, each checked to be < vocab_size.
std::vector<uint16_t> load_tokens(const std::string& path, size_t vocab_size);

// Text -> ids and back. An unknown character or id is an error naming it and its position.
std::vector<uint16_t> encode(const std::vector<std::string>& vocab, std::string_view text);
std::string decode(const std::vector<std::string>& vocab, const std::vector<uint16_t>& ids);

}  // namespace poslab
