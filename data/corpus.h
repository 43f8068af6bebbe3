// corpus.h — character-level corpora on disk (SPEC section 3, nanoGPT's layout).
//
// A prepared corpus is a folder holding
//   train.bin, val.bin  token ids as little-endian uint16, nothing else;
//   vocab.json          a JSON array of one-character strings, sorted by code point;
//                       token id = index. Example: ["\n", " ", "!", "a", "é", "中"]
// Text is split into Unicode code points, so any script works (Chinese included).
//
// Where the text comes from (corpus_text):
//   "fortunes"     the English plain-text files that Debian's `fortunes` and `fortunes-min`
//                  install directly in /usr/share/games/fortunes (the packages' own file
//                  lists in /var/lib/dpkg/info name them; not *.dat, not the *.u8 links, no
//                  subfolder such as off/, no file of another package such as fortunes-zh's
//                  Chinese ones), in file-name (byte) order, concatenated.
//   "fortunes-zh"  song100 then tang300 (file-name order, as above) from `fortunes-zh`,
//                  with ANSI colour escapes (ESC [ digits/';' m) removed.
//   Both fortune corpora then get the same cleaning: control characters (Unicode category
//   Cc: U+0000..U+001F, U+007F..U+009F; Debian's files hold backspaces, bells and a few C1
//   codes) other than newline and tab are dropped, then a line that is exactly "%" (the
//   separator between fortunes) becomes an empty line. A fortune file that is not valid
//   UTF-8 is an error naming the file and the byte offset (none is, in Debian 12). A file
//   not ending in a newline gets one, so two files never run together on one line.
//   anything else  the path of a UTF-8 text file, taken as is except: a leading BOM is
//                  dropped, CRLF becomes LF; invalid UTF-8 is an error naming the byte
//                  offset; an empty file is an error. ("./fortunes" names a file.)
//
// The split (build_corpus): with N code points, train = the first floor(9N/10), val = the
// remaining N - floor(9N/10) (nanoGPT's `data[:int(n*0.9)]`); both must be non-empty.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace poslab {

struct Corpus {
  std::vector<std::string> vocab;  // one UTF-8 character each, sorted by code point
  std::vector<uint16_t> train;     // ids into vocab
  std::vector<uint16_t> val;
};

// The largest vocabulary a uint16 id can index (ids 0..65534).
constexpr size_t max_vocab_size = 65535;

// The UTF-8 text of a corpus: "fortunes", "fortunes-zh" or a file path (see above).
std::string corpus_text(const std::string& corpus);

// The files that make up "fortunes" or "fortunes-zh", in the order they are concatenated,
// as listed by dpkg in dpkg_info (a parameter only so tests can point it elsewhere).
// Throws "... apt-get install fortunes fortunes-min" when a package is missing.
std::vector<std::string> fortune_files(const std::string& corpus,
                                       const std::string& dpkg_info = "/var/lib/dpkg/info");

// The fortune cleaning above, for the bytes of one file; `what` names it in errors.
std::string clean_fortune_text(std::string_view bytes, bool strip_ansi, const std::string& what);

// Splits text into code points, builds the sorted vocabulary, encodes, splits 90/10.
Corpus build_corpus(const std::string& text);

// Creates dir (and its parents) and writes train.bin, val.bin, vocab.json, each atomically.
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
