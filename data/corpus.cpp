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

// "'é' (U+00E9)", or just "U+000A" for a control character: how errors show a character.
std::string describe_char(char32_t cp) {
  if (is_control(cp)) return code_point_name(cp);
  std::string s = "'";
  s += utf8_encode(cp);
  s += "' (" + code_point_name(cp) + ")";
  return s;
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

size_t train_length(const std::vector<char32_t>& cps) {
  const size_t m = 9 * cps.size() / 10;  // floor(0.9 n), nanoGPT's int(n * 0.9), exactly
  size_t end = m;
  if (m > 0 && cps[m - 1] != '\n') {  // the cut falls inside a line: take the rest of it
    while (end < cps.size() && cps[end] != '\n') ++end;
    if (end < cps.size()) ++end;  // and its newline
  }
  return end;
}

SplitRule split_rule(const std::string& corpus) {
  return corpus == "pystdlib" ? SplitRule::whole_files : SplitRule::per_source_90;
}

Corpus build_corpus(const std::vector<SourceText>& sources, SplitRule rule) {
  std::vector<std::vector<char32_t>> texts;
  std::vector<char32_t> chars;  // the vocabulary: distinct code points of every source, sorted
  for (const SourceText& s : sources) {
    texts.push_back(utf8_decode(s.text, s.name));
    chars.insert(chars.end(), texts.back().begin(), texts.back().end());
    std::sort(chars.begin(), chars.end());
    chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
  }
  if (chars.size() > max_vocab_size) {
    data_error("build_corpus: expected at most ", max_vocab_size, " distinct characters (uint16 ",
               "ids), but the text has ", chars.size());
  }

  Corpus corpus;
  for (char32_t cp : chars) corpus.vocab.push_back(utf8_encode(cp));
  for (size_t k = 0; k < sources.size(); ++k) {
    const std::vector<char32_t>& cps = texts[k];
    size_t n_train = train_length(cps);
    if (rule == SplitRule::whole_files) n_train = whole_file_goes_to_val(k) ? 0 : cps.size();
    for (size_t i = 0; i < cps.size(); ++i) {
      const auto id = static_cast<uint16_t>(std::lower_bound(chars.begin(), chars.end(), cps[i]) -
                                            chars.begin());
      (i < n_train ? corpus.train : corpus.val).push_back(id);
    }
    corpus.parts.push_back({sources[k].name, n_train, cps.size() - n_train});
  }
  if (corpus.train.empty() || corpus.val.empty()) {
    const std::string how =
        rule == SplitRule::whole_files
            ? "file k goes to val if k mod 10 = 9, and there are " +
                  std::to_string(sources.size()) + " files"
            : "val is what follows the line holding character floor(0.9 n) of each source; a "
              "source of one line has no val part";
    data_error("build_corpus: expected text for both a train and a val split, but got ",
               corpus.train.size(), " train and ", corpus.val.size(), " val characters (", how,
               ")");
  }
  return corpus;
}

Corpus build_corpus(const std::string& text) {
  return build_corpus(std::vector<SourceText>{{"corpus text", text}});
}

Corpus prepare_corpus(const std::string& corpus) {
  const std::vector<SourceText> sources = corpus_sources(corpus);
  Corpus c = build_corpus(sources, split_rule(corpus));
  c.info = corpus_info(corpus, corpus_origin(corpus), sources, c.parts);
  return c;
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
  if (!corpus.info.corpus.empty())
    write_file_atomic((d / "corpus.json").string(), corpus_info_json(corpus.info));
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
