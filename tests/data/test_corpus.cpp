// test_corpus.cpp — corpus text, vocabulary, split, files on disk, and their readers.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "data/utf8.h"
#include "tests/support/temp_dir.h"

using namespace poslab;
using Catch::Contains;

namespace {
const std::vector<std::string> abc = {"\n", " ", "a", "b", "c"};
}  // namespace

TEST_CASE("corpus: hand-worked vocabulary, ids and split", "[data][corpus]") {
  // "hello\nworld\n" x 4 + "old\n": 52 characters, floor(46.8) = 46 end inside the fourth
  // "world", whose line ends at 48: train = the first 48, val = "old\n".
  std::string text;
  for (int i = 0; i < 4; ++i) text += "hello\nworld\n";
  const Corpus c = build_corpus(text + "old\n");
  CHECK(c.vocab == std::vector<std::string>{"\n", "d", "e", "h", "l", "o", "r", "w"});
  REQUIRE(c.train.size() == 48);
  CHECK(std::vector<uint16_t>(c.train.begin(), c.train.begin() + 6) ==
        std::vector<uint16_t>{3, 2, 4, 4, 5, 0});     // "hello\n"
  CHECK(c.val == std::vector<uint16_t>{5, 4, 1, 0});  // "old\n"
  REQUIRE(c.parts.size() == 1);
  CHECK(c.parts[0].name == "corpus text");
  CHECK(c.parts[0].train == 48);
  CHECK(c.parts[0].val == 4);
}

TEST_CASE("corpus: the vocabulary is sorted by code point, Chinese included", "[data][corpus]") {
  // 中 U+4E2D, é U+00E9, 😀 U+1F600, a U+0061; ten lines of 6: train = nine lines exactly.
  std::string text;
  for (int i = 0; i < 10; ++i)
    text +=
        "\xE4\xB8\xAD\xC3\xA9\xF0\x9F\x98\x80"
        "a\xE4\xB8\xAD\n";
  const Corpus c = build_corpus(text);
  CHECK(c.vocab ==
        std::vector<std::string>{"\n", "a", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80"});
  REQUIRE(c.train.size() == 54);
  CHECK(c.val == std::vector<uint16_t>{3, 2, 4, 1, 3, 0});
}

TEST_CASE("corpus: train_length is floor(0.9 n) extended to the end of that line",
          "[data][corpus]") {
  const auto cut = [](const std::string& text) { return train_length(utf8_decode(text, "t")); };
  // Nine lines "aaaa\n" and "bb\n" (n = 48): floor(43.2) = 43 ends inside the ninth line.
  std::string nine;
  for (int i = 0; i < 9; ++i) nine += "aaaa\n";
  CHECK(cut(nine + "bb\n") == 45);
  // A cut that falls just after a newline stays where it is: n = 10, floor(9) = 9.
  CHECK(cut("12345678\nx") == 9);
  // One line: all of it (the final newline included, or up to the end without one).
  CHECK(cut("abcdefghijkl\n") == 13);
  CHECK(cut("abcdefghijkl") == 12);
  CHECK(cut("") == 0);
  CHECK(cut("x") == 0);  // floor(0.9) = 0: nothing to extend
  // Counted in code points, not bytes: 18 x "a" + "\n" + "éé\n" is 22 code points, floor(19.8)
  // = 19 ends at the first newline; its 24 bytes would cut at 21, inside "éé".
  CHECK(cut(std::string(18, 'a').append("\n\xC3\xA9\xC3\xA9\n")) == 19);
  // floor(0.9 n) exactly for every n (9n/10 in integers, no floating-point 0.9 rounding).
  for (size_t n = 1; n < 2000; ++n) {
    std::vector<char32_t> lines(n, '\n');
    CHECK(train_length(lines) == static_cast<size_t>(std::floor(0.9L * n)));
  }
}

TEST_CASE("corpus: every source is split on its own, its val part after its train part",
          "[data][corpus]") {
  std::string a, b;
  for (int i = 0; i < 9; ++i) a += "aaaa\n", b += "bbbbbbb\n";
  const Corpus c = build_corpus({{"first", a + "A\n"}, {"second", b + "B\n"}});
  const std::vector<std::string>& v = c.vocab;
  REQUIRE(c.parts.size() == 2);
  CHECK(c.parts[0].name == "first");
  CHECK(c.parts[0].train == 45);
  CHECK(c.parts[0].val == 2);
  CHECK(c.parts[1].train == 72);
  CHECK(c.parts[1].val == 2);
  CHECK(decode(v, c.train) == a + b);   // train parts in source order
  CHECK(decode(v, c.val) == "A\nB\n");  // val parts in the same order: both files sampled
  // A one-line source gives val nothing, but the corpus is fine while another one does.
  const Corpus d = build_corpus({{"one line", "xyz\n"}, {"second", b + "B\n"}});
  CHECK(d.parts[0].val == 0);
  CHECK(decode(d.vocab, d.val) == "B\n");
  REQUIRE_THROWS_WITH(
      build_corpus(std::string(20, 'x')),
      Contains("expected text for both a train and a val split") && Contains("20 train and 0 val"));
  REQUIRE_THROWS_WITH(build_corpus(""), Contains("0 train and 0 val"));
  REQUIRE_THROWS_WITH(build_corpus("ab\xFF"), Contains("corpus text: byte 2: invalid UTF-8"));
  REQUIRE_THROWS_WITH(build_corpus({{"/x/book.txt", "ok\n\xFF"}}),
                      Contains("/x/book.txt: byte 3: invalid UTF-8"));
}

TEST_CASE("corpus: a vocabulary above 65535 characters is refused", "[data][corpus]") {
  // "\n" and 65534 more distinct characters, a newline after every 100 (so val is not empty)
  std::string text;
  char32_t cp = 0x20;
  for (size_t count = 1; count < max_vocab_size; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    text += utf8_encode(cp);
    if (++count % 100 == 0) text += '\n';
  }
  CHECK(build_corpus(text).vocab.size() == max_vocab_size);  // exactly the limit fits
  text += utf8_encode(cp);
  REQUIRE_THROWS_WITH(build_corpus(text), Contains("at most 65535 distinct characters") &&
                                              Contains("the text has 65536"));
}

TEST_CASE("corpus: write_corpus files round-trip through the readers", "[data][corpus]") {
  test::TempDir tmp;
  // 300 distinct characters so that ids above 255 exercise the high byte; lines of 10 (the
  // last one without a newline) so that val gets the last ones.
  std::string text = "tab\there\nquote\" backslash\\ \xC3\xA9\xE4\xB8\xAD\x01";
  for (char32_t cp = 0x400; cp < 0x400 + 300; ++cp) {
    if (cp % 10 == 0) text += '\n';
    text += utf8_encode(cp);
  }
  const Corpus c = build_corpus(text);
  const std::string dir = tmp.file("nested/corpus");  // parents are created
  write_corpus(c, dir);

  const auto vocab = load_vocab(dir + "/vocab.json");
  CHECK(vocab == c.vocab);
  CHECK(load_tokens(dir + "/train.bin", vocab.size()) == c.train);
  CHECK(load_tokens(dir + "/val.bin", vocab.size()) == c.val);
  CHECK(decode(vocab, c.train) + decode(vocab, c.val) == text);

  // Little-endian: the last val id is the largest (U+052B is the last character).
  const std::string val = read_file(dir + "/val.bin");
  REQUIRE(val.size() == 2 * c.val.size());
  const uint16_t last = c.val.back();
  CHECK(last > 255);
  CHECK(static_cast<unsigned char>(val[val.size() - 2]) == (last & 0xFF));
  CHECK(static_cast<unsigned char>(val[val.size() - 1]) == (last >> 8));

  // vocab.json: control characters escaped, everything else raw UTF-8.
  const std::string json = read_file(dir + "/vocab.json");
  CHECK_THAT(json, Contains("\"\\u0001\"") && Contains("\"\\t\"") && Contains("\"\\n\"") &&
                       Contains("\"\\\"\"") && Contains("\"\\\\\"") &&
                       Contains("\"\xE4\xB8\xAD\""));
  CHECK(std::filesystem::exists(dir + "/train.bin"));
  CHECK(!std::filesystem::exists(dir + "/train.bin.tmp." + std::to_string(::getpid())));
}

TEST_CASE("corpus: load_vocab accepts \\u escapes and refuses bad entries", "[data][corpus]") {
  test::TempDir tmp;
  const std::string path = tmp.file("vocab.json");
  const auto load_text = [&](const std::string& text) {
    write_file_atomic(path, text);
    return load_vocab(path);
  };
  CHECK(load_text(R"(["\n", "\u00e9", "\u4E2D", "\ud83d\ude00"])") ==
        std::vector<std::string>{"\n", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80"});
  CHECK(load_text("[\"a\",\"\xC3\xA9\"]").size() == 2);

  REQUIRE_THROWS_WITH(
      load_text(R"(["a", "bc"])"),
      Contains(path + ": entry 1 (byte 6): expected exactly one character") && Contains("got 2"));
  REQUIRE_THROWS_WITH(load_text(R"(["a", ""])"), Contains("entry 1") && Contains("got 0"));
  REQUIRE_THROWS_WITH(load_text(R"(["b", "a"])"),
                      Contains("entry 1") && Contains("U+0061 follows U+0062"));
  REQUIRE_THROWS_WITH(load_text(R"(["a", "a"])"), Contains("without repeats"));
  REQUIRE_THROWS_WITH(load_text(R"(["a", 5])"),
                      Contains("entry 1 (byte 6): expected a string, but got a number"));
  REQUIRE_THROWS_WITH(load_text(R"({"a": 0})"), Contains("expected a JSON array"));
  REQUIRE_THROWS_WITH(load_text("[]"), Contains("expected 1 to 65535 entries, but got 0"));
  REQUIRE_THROWS_WITH(load_text(R"(["a" "b"])"),
                      Contains(path + ": byte 5: expected ',' or ']', but got '\"'"));
  REQUIRE_THROWS_WITH(load_text(R"(["\ud800"])"), Contains("low surrogate"));
  REQUIRE_THROWS_WITH(load_vocab(tmp.file("missing.json")), Contains("cannot open"));
}

TEST_CASE("corpus: load_tokens refuses odd sizes and ids past the vocabulary", "[data][corpus]") {
  test::TempDir tmp;
  const std::string path = tmp.file("train.bin");
  write_file_atomic(path, std::string("\x01\x00\x02\x00\x04\x00", 6));
  CHECK(load_tokens(path, 5) == std::vector<uint16_t>{1, 2, 4});
  REQUIRE_THROWS_WITH(load_tokens(path, 4),
                      Contains(path + ": token 2 (byte 4) is id 4") && Contains("size 4"));
  write_file_atomic(path, std::string("\x00\x01", 2));  // little-endian 256
  REQUIRE_THROWS_WITH(load_tokens(path, 256), Contains("token 0 (byte 0) is id 256"));
  CHECK(load_tokens(path, 257) == std::vector<uint16_t>{256});
  write_file_atomic(path, std::string("\x01\x00\x02", 3));
  REQUIRE_THROWS_WITH(load_tokens(path, 5), Contains("expected a whole number of uint16 values") &&
                                                Contains("got 3 bytes"));
  write_file_atomic(path, "");
  CHECK(load_tokens(path, 5).empty());
}

TEST_CASE("corpus: encode and decode", "[data][corpus]") {
  CHECK(encode(abc, "ab c\n") == std::vector<uint16_t>{2, 3, 1, 4, 0});
  CHECK(decode(abc, {2, 3, 1, 4, 0}) == "ab c\n");
  REQUIRE_THROWS_WITH(encode(abc, "abz"),
                      Contains("character 'z' (U+007A) at position 2 is not in the vocabulary"));
  REQUIRE_THROWS_WITH(encode(abc, "a\tb"), Contains("character U+0009 at position 1"));
  REQUIRE_THROWS_WITH(encode(abc, "a\xC3\xA9"), Contains("'\xC3\xA9' (U+00E9) at position 1"));
  REQUIRE_THROWS_WITH(decode(abc, {0, 7}), Contains("token 1 is id 7") && Contains("5 entries"));
  REQUIRE_THROWS_WITH(encode({"a", "bc"}, "a"), Contains("entry 1: expected exactly one"));
}
