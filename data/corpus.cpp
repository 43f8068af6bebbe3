// corpus.cpp — preparing and reading character-level corpora; formats in corpus.h.
#include "data/corpus.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "data/atomic_file.h"
#include "data/error.h"
#include "data/json.h"
#include "data/utf8.h"

namespace poslab {

namespace {

// Where Debian puts fortune files.
const std::string fortunes_dir = "/usr/share/games/fortunes";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Unicode category Cc: C0 controls, DEL and the C1 controls.
bool is_control(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

// "'é' (U+00E9)", or just "U+000A" for a control character: how errors show a character.
std::string describe_char(char32_t cp) {
  if (is_control(cp)) return code_point_name(cp);
  std::string s = "'";
  s += utf8_encode(cp);
  s += "' (" + code_point_name(cp) + ")";
  return s;
}

// The files of one installed package that sit directly in fortunes_dir, read from dpkg's
// list of that package's files (<dpkg_info>/<package>.list, one path a line).
std::vector<std::string> package_fortune_files(const std::string& corpus,
                                               const std::string& package,
                                               const std::string& install_hint,
                                               const std::string& dpkg_info) {
  const std::string list_path = dpkg_info + "/" + package + ".list";
  if (!std::filesystem::exists(list_path)) {
    data_error("corpus ", corpus, ": expected Debian package ", package, " to be installed (",
               list_path, "), but it is not; install it with: ", install_hint);
  }
  std::vector<std::string> files;
  const std::string list = read_file(list_path);
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find('\n', start);
    if (end == std::string::npos) end = list.size();
    const std::string path = list.substr(start, end - start);
    start = end + 1;
    const std::filesystem::path p(path);
    if (p.parent_path() != fortunes_dir) continue;  // not in it, or in a subfolder
    if (ends_with(path, ".dat") || ends_with(path, ".u8")) continue;
    if (std::filesystem::is_directory(p)) continue;
    files.push_back(path);
  }
  return files;
}

// Checks the file is valid UTF-8 (the error names the byte offset), then applies the
// generic text rules of corpus.h: BOM dropped, CRLF -> LF.
std::string read_text_file(const std::string& path) {
  const std::string bytes = read_file(path);
  if (bytes.empty()) data_error(path, ": expected UTF-8 text, but the file is empty");
  for (size_t pos = 0; pos < bytes.size();) utf8_next(bytes, pos, path);

  const size_t start = bytes.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  std::string text;
  text.reserve(bytes.size());
  for (size_t i = start; i < bytes.size(); ++i) {
    if (bytes[i] == '\r' && i + 1 < bytes.size() && bytes[i + 1] == '\n') continue;
    text += bytes[i];
  }
  if (text.empty()) data_error(path, ": expected UTF-8 text, but the file holds only a BOM");
  return text;
}

// Little-endian uint16 values, two bytes each.
std::string token_bytes(const std::vector<uint16_t>& ids) {
  std::string out(ids.size() * 2, '\0');
  for (size_t i = 0; i < ids.size(); ++i) {
    out[2 * i] = static_cast<char>(ids[i] & 0xFF);
    out[2 * i + 1] = static_cast<char>(ids[i] >> 8);
  }
  return out;
}

// Each vocabulary entry as its one code point; what names the caller in errors.
std::vector<char32_t> vocab_code_points(const std::vector<std::string>& vocab,
                                        const std::string& what) {
  std::vector<char32_t> cps;
  cps.reserve(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) {
    const std::vector<char32_t> entry = utf8_decode(vocab[i], what);
    if (entry.size() != 1) {
      data_error(what, ": vocabulary entry ", i, ": expected exactly one character, but got ",
                 entry.size(), ": ", json_quote(vocab[i]));
    }
    cps.push_back(entry[0]);
  }
  return cps;
}

}  // namespace

std::vector<std::string> fortune_files(const std::string& corpus, const std::string& dpkg_info) {
  std::vector<std::string> files;
  if (corpus == "fortunes") {
    const std::string hint = "apt-get install fortunes fortunes-min";
    for (const char* package : {"fortunes", "fortunes-min"}) {
      const auto more = package_fortune_files(corpus, package, hint, dpkg_info);
      files.insert(files.end(), more.begin(), more.end());
    }
  } else if (corpus == "fortunes-zh") {
    const std::string hint = "apt-get install fortunes-zh";
    for (const std::string& path : package_fortune_files(corpus, "fortunes-zh", hint, dpkg_info)) {
      if (ends_with(path, "/tang300") || ends_with(path, "/song100")) files.push_back(path);
    }
    if (files.size() != 2) {
      data_error("corpus fortunes-zh: expected files tang300 and song100 in package ",
                 "fortunes-zh, but found ", files.size(), "; reinstall it with: ", hint);
    }
  } else {
    data_error("fortune_files: expected corpus fortunes or fortunes-zh, but got ", corpus);
  }
  std::sort(files.begin(), files.end());  // full paths share one folder: file-name order
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (files.empty()) data_error("corpus ", corpus, ": its packages list no fortune files");
  return files;
}

std::string clean_fortune_text(std::string_view bytes, bool strip_ansi, const std::string& what) {
  const std::vector<char32_t> cps = utf8_decode(bytes, what);
  std::string out;
  out.reserve(bytes.size());
  std::string line;
  for (size_t i = 0; i <= cps.size(); ++i) {
    if (i == cps.size() || cps[i] == '\n') {  // end of a line
      if (line != "%") out += line;           // the separator line becomes an empty line
      if (i < cps.size()) out += '\n';
      line.clear();
      continue;
    }
    if (strip_ansi && cps[i] == 0x1B && i + 1 < cps.size() && cps[i + 1] == '[') {
      // ESC [ <digits and ';'> m  sets a colour: skip the whole sequence.
      size_t k = i + 2;
      while (k < cps.size() && ((cps[k] >= '0' && cps[k] <= '9') || cps[k] == ';')) ++k;
      if (k < cps.size() && cps[k] == 'm') {
        i = k;
        continue;
      }
    }
    if (cps[i] != '\t' && is_control(cps[i])) continue;
    line += utf8_encode(cps[i]);
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

std::string corpus_text(const std::string& corpus) {
  if (corpus != "fortunes" && corpus != "fortunes-zh") return read_text_file(corpus);
  std::string text;
  for (const std::string& path : fortune_files(corpus)) {
    text += clean_fortune_text(read_file(path), corpus == "fortunes-zh", path);
  }
  if (text.empty()) data_error("corpus ", corpus, ": expected text, but its files are empty");
  return text;
}

Corpus build_corpus(const std::string& text) {
  const std::vector<char32_t> cps = utf8_decode(text, "corpus text");
  const size_t n = cps.size();
  if (n < 2) {
    data_error("build_corpus: expected at least 2 characters (for a train and a val split), ",
               "but got ", n);
  }

  std::vector<char32_t> chars = cps;  // the vocabulary: distinct code points, sorted
  std::sort(chars.begin(), chars.end());
  chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  if (chars.size() > max_vocab_size) {
    data_error("build_corpus: expected at most ", max_vocab_size, " distinct characters (uint16 ",
               "ids), but the text has ", chars.size());
  }

  Corpus corpus;
  for (char32_t cp : chars) corpus.vocab.push_back(utf8_encode(cp));
  const size_t n_train = 9 * n / 10;  // nanoGPT's int(n * 0.9)
  corpus.train.reserve(n_train);
  corpus.val.reserve(n - n_train);
  for (size_t i = 0; i < n; ++i) {
    const auto id =
        static_cast<uint16_t>(std::lower_bound(chars.begin(), chars.end(), cps[i]) - chars.begin());
    (i < n_train ? corpus.train : corpus.val).push_back(id);
  }
  return corpus;
}

void write_corpus(const Corpus& corpus, const std::string& dir) {
  const size_t v = corpus.vocab.size();
  if (v == 0 || v > max_vocab_size) {
    data_error("write_corpus: expected 1 to ", max_vocab_size, " vocabulary entries, but got ", v);
  }
  vocab_code_points(corpus.vocab, "write_corpus");  // each entry one character
  for (const auto* split : {&corpus.train, &corpus.val}) {
    for (size_t i = 0; i < split->size(); ++i) {
      if ((*split)[i] >= v) {
        data_error("write_corpus: ", split == &corpus.train ? "train" : "val", " token ", i,
                   " is id ", (*split)[i], ", but the vocabulary has ", v, " entries");
      }
    }
  }

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) data_error(dir, ": cannot create directory: ", ec.message());

  std::string json = "[\n";
  for (size_t i = 0; i < v; ++i) {
    json += "  " + json_quote(corpus.vocab[i]) + (i + 1 < v ? ",\n" : "\n");
  }
  json += "]\n";

  const std::filesystem::path d(dir);
  write_file_atomic((d / "train.bin").string(), token_bytes(corpus.train));
  write_file_atomic((d / "val.bin").string(), token_bytes(corpus.val));
  write_file_atomic((d / "vocab.json").string(), json);
}

std::vector<std::string> load_vocab(const std::string& path) {
  const Json json = json_parse(read_file(path), path);
  if (!json.is_array()) {
    data_error(path, ": expected a JSON array of one-character strings, but got ",
               json_kind_name(json.kind));
  }
  const size_t v = json.items.size();
  if (v == 0 || v > max_vocab_size) {
    data_error(path, ": expected 1 to ", max_vocab_size, " entries, but got ", v);
  }
  std::vector<std::string> vocab;
  vocab.reserve(v);
  char32_t previous = 0;
  for (size_t i = 0; i < v; ++i) {
    const Json& item = json.items[i];
    if (!item.is_string()) {
      data_error(path, ": entry ", i, " (byte ", item.offset, "): expected a string, but got ",
                 json_kind_name(item.kind));
    }
    const std::vector<char32_t> cps = utf8_decode(item.text, path);
    if (cps.size() != 1) {
      data_error(path, ": entry ", i, " (byte ", item.offset, "): expected exactly one ",
                 "character, but got ", cps.size(), ": ", json_quote(item.text));
    }
    if (i > 0 && cps[0] <= previous) {
      data_error(path, ": entry ", i, " (byte ", item.offset, "): expected entries sorted by ",
                 "code point without repeats, but ", code_point_name(cps[0]), " follows ",
                 code_point_name(previous));
    }
    previous = cps[0];
    vocab.push_back(item.text);
  }
  return vocab;
}

std::vector<uint16_t> load_tokens(const std::string& path, size_t vocab_size) {
  const std::string bytes = read_file(path);
  if (bytes.size() % 2 != 0) {
    data_error(path, ": expected a whole number of uint16 values (an even size), but got ",
               bytes.size(), " bytes");
  }
  std::vector<uint16_t> ids(bytes.size() / 2);
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto lo = static_cast<unsigned char>(bytes[2 * i]);
    const auto hi = static_cast<unsigned char>(bytes[2 * i + 1]);
    ids[i] = static_cast<uint16_t>(lo | (hi << 8));
    if (ids[i] >= vocab_size) {
      data_error(path, ": token ", i, " (byte ", 2 * i, ") is id ", ids[i], ", but expected ids ",
                 "below the vocabulary size ", vocab_size);
    }
  }
  return ids;
}

std::vector<uint16_t> encode(const std::vector<std::string>& vocab, std::string_view text) {
  const std::vector<char32_t> chars = vocab_code_points(vocab, "encode");
  std::unordered_map<char32_t, uint16_t> id_of;
  for (size_t i = 0; i < chars.size(); ++i) id_of[chars[i]] = static_cast<uint16_t>(i);

  const std::vector<char32_t> cps = utf8_decode(text, "encode");
  std::vector<uint16_t> ids(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    const auto it = id_of.find(cps[i]);
    if (it == id_of.end()) {
      data_error("encode: character ", describe_char(cps[i]), " at position ", i,
                 " is not in the vocabulary");
    }
    ids[i] = it->second;
  }
  return ids;
}

std::string decode(const std::vector<std::string>& vocab, const std::vector<uint16_t>& ids) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= vocab.size()) {
      data_error("decode: token ", i, " is id ", ids[i], ", but the vocabulary has ", vocab.size(),
                 " entries");
    }
    text += vocab[ids[i]];
  }
  return text;
}

}  // namespace poslab
