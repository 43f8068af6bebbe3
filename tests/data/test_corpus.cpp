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
  // "hello world": 11 characters, vocabulary " dehlorw", train = first floor(99/10) = 9.
  const Corpus c = build_corpus("hello world");
  CHECK(c.vocab == std::vector<std::string>{" ", "d", "e", "h", "l", "o", "r", "w"});
  CHECK(c.train == std::vector<uint16_t>{3, 2, 4, 4, 5, 0, 7, 5, 6});
  CHECK(c.val == std::vector<uint16_t>{4, 1});
}

TEST_CASE("corpus: the vocabulary is sorted by code point, Chinese included", "[data][corpus]") {
  // 中 U+4E2D, é U+00E9, 😀 U+1F600, a U+0061.
  const Corpus c = build_corpus(
      "\xE4\xB8\xAD\xC3\xA9\xF0\x9F\x98\x80"
      "a\xE4\xB8\xAD");
  CHECK(c.vocab == std::vector<std::string>{"a", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80"});
  CHECK(c.train == std::vector<uint16_t>{2, 1, 3, 0});  // floor(45/10) = 4
  CHECK(c.val == std::vector<uint16_t>{2});
}

TEST_CASE("corpus: val is the last N - floor(9N/10) characters", "[data][corpus]") {
  for (size_t n : {2, 9, 10, 11, 15, 19, 20, 1001}) {
    const Corpus c = build_corpus(std::string(n, 'x'));
    CHECK(c.train.size() == 9 * n / 10);
    CHECK(c.train.size() + c.val.size() == n);
    CHECK(!c.val.empty());
  }
  REQUIRE_THROWS_WITH(build_corpus(""),
                      Contains("expected at least 2 characters") && Contains("but got 0"));
  REQUIRE_THROWS_WITH(build_corpus("\xE4\xB8\xAD"), Contains("but got 1"));
  REQUIRE_THROWS_WITH(build_corpus("ab\xFF"), Contains("corpus text: byte 2: invalid UTF-8"));
}

TEST_CASE("corpus: a vocabulary above 65535 characters is refused", "[data][corpus]") {
  std::string text;
  char32_t cp = 0x20;
  for (size_t count = 0; count < max_vocab_size; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    text += utf8_encode(cp);
    ++count;
  }
  CHECK(build_corpus(text).vocab.size() == max_vocab_size);  // exactly the limit fits
  text += utf8_encode(cp);
  REQUIRE_THROWS_WITH(build_corpus(text), Contains("at most 65535 distinct characters") &&
                                              Contains("the text has 65536"));
}

TEST_CASE("corpus: write_corpus files round-trip through the readers", "[data][corpus]") {
  test::TempDir tmp;
  // 300 distinct characters so that ids above 255 exercise the high byte.
  std::string text = "tab\there\nquote\" backslash\\ \xC3\xA9\xE4\xB8\xAD\x01";
  for (char32_t cp = 0x400; cp < 0x400 + 300; ++cp) text += utf8_encode(cp);
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

TEST_CASE("corpus: a text file is taken as is except BOM and CRLF", "[data][corpus]") {
  test::TempDir tmp;
  const std::string path = tmp.file("book.txt");
  write_file_atomic(path, "\xEF\xBB\xBFline one\r\nline\rtwo\r\n%\n\x07\xC3\xA9");
  CHECK(corpus_text(path) == "line one\nline\rtwo\n%\n\x07\xC3\xA9");

  write_file_atomic(path, "ok\nthen \xE4\xB8");  // truncated 中 at byte 8
  REQUIRE_THROWS_WITH(corpus_text(path), Contains(path + ": byte 8: invalid UTF-8"));
  write_file_atomic(path,
                    "\xEF\xBB\xBF"
                    "abc\xC0\x80");  // offsets count the BOM
  REQUIRE_THROWS_WITH(corpus_text(path), Contains("byte 6: invalid UTF-8: overlong"));
  write_file_atomic(path, "");
  REQUIRE_THROWS_WITH(corpus_text(path), Contains(path + ": expected UTF-8 text, but the file "
                                                         "is empty"));
  write_file_atomic(path, "\xEF\xBB\xBF");
  REQUIRE_THROWS_WITH(corpus_text(path), Contains("only a BOM"));
  REQUIRE_THROWS_WITH(corpus_text(tmp.file("none.txt")), Contains("cannot open"));
}

TEST_CASE("corpus: fortune cleaning", "[data][corpus]") {
  // % separator lines become empty lines; "%%" or " %" are text.
  CHECK(clean_fortune_text("a\n%\nb\n%\n", false, "f") == "a\n\nb\n\n");
  CHECK(clean_fortune_text("%%\n %\n", false, "f") == "%%\n %\n");
  // Control characters (C0, DEL, C1) go, except newline and tab; a line that is "%" once
  // they are gone is a separator too.
  CHECK(clean_fortune_text("_\bx\ty\x7f\xC2\x85z\r\n%\r\n\x07", false, "f") == "_x\tyz\n\n");
  // A missing final newline is added.
  CHECK(clean_fortune_text("no newline", false, "f") == "no newline\n");
  CHECK(clean_fortune_text("", false, "f").empty());
  // ANSI colour escapes go only when asked; otherwise ESC is dropped as a control.
  const std::string title = "\x1b[32m\xE3\x80\x8A\xE8\xA9\xA9\xE3\x80\x8B\x1b[m\n";  // 《詩》
  CHECK(clean_fortune_text(title, true, "f") == "\xE3\x80\x8A\xE8\xA9\xA9\xE3\x80\x8B\n");
  CHECK(clean_fortune_text(title, false, "f") == "[32m\xE3\x80\x8A\xE8\xA9\xA9\xE3\x80\x8B[m\n");
  CHECK(clean_fortune_text("\x1b[1;33mx\x1b[3q\x1b", true, "f") == "x[3q\n");
  REQUIRE_THROWS_WITH(clean_fortune_text("abc\n\xE9t\xE9\n", false, "/f/x"),
                      Contains("/f/x: byte 4: invalid UTF-8"));
}

TEST_CASE("corpus: a missing fortune package says what to install", "[data][corpus]") {
  test::TempDir empty_dpkg;
  REQUIRE_THROWS_WITH(fortune_files("fortunes", empty_dpkg.path()),
                      Contains("apt-get install fortunes fortunes-min"));
  REQUIRE_THROWS_WITH(fortune_files("fortunes-zh", empty_dpkg.path()),
                      Contains("apt-get install fortunes-zh"));
  // A package list that names only files elsewhere, subfolders and *.dat gives no files.
  write_file_atomic(empty_dpkg.file("fortunes.list"),
                    "/.\n/usr/share/games/fortunes\n/usr/share/games/fortunes/off/art\n"
                    "/usr/share/games/fortunes/art.dat\n/usr/share/doc/fortunes/copyright\n");
  write_file_atomic(empty_dpkg.file("fortunes-min.list"), "/usr/share/games/fortunes/x.u8\n");
  REQUIRE_THROWS_WITH(fortune_files("fortunes", empty_dpkg.path()),
                      Contains("its packages list no fortune files"));
}

TEST_CASE("corpus: the real fortunes corpus, when installed", "[data][corpus][slow]") {
  if (!std::filesystem::exists("/var/lib/dpkg/info/fortunes.list") ||
      !std::filesystem::exists("/var/lib/dpkg/info/fortunes-min.list")) {
    WARN("fortunes / fortunes-min not installed: skipped");
    return;
  }
  const auto files = fortune_files("fortunes");
  CHECK(std::is_sorted(files.begin(), files.end()));
  for (const std::string& f : files) {
    CHECK(std::filesystem::path(f).parent_path() == "/usr/share/games/fortunes");
    CHECK_THAT(f, !Catch::EndsWith(".dat") && !Catch::EndsWith(".u8") &&
                      !Catch::EndsWith("/chinese") && !Catch::EndsWith("/tang300"));
  }
  CHECK(std::find(files.begin(), files.end(), "/usr/share/games/fortunes/literature") !=
        files.end());  // from fortunes-min

  const std::string text = corpus_text("fortunes");
  CHECK(text.find("\n%\n") == std::string::npos);
  const Corpus c = build_corpus(text);
  test::TempDir tmp;
  write_corpus(c, tmp.path());
  const auto vocab = load_vocab(tmp.file("vocab.json"));  // checks sorted, one char each
  const auto train = load_tokens(tmp.file("train.bin"), vocab.size());  // checks ids < V
  const auto val = load_tokens(tmp.file("val.bin"), vocab.size());
  CHECK(vocab.size() < 256);
  for (const std::string& ch : vocab) {
    const char32_t cp = utf8_decode(ch, "vocab")[0];
    CHECK((cp == '\n' || cp == '\t' || cp >= 0x20));
    CHECK(!(cp >= 0x7F && cp <= 0x9F));
  }
  const double n = static_cast<double>(train.size() + val.size());
  CHECK(n > 1e6);
  CHECK(std::abs(val.size() / n - 0.1) < 1e-6);
  CHECK(decode(vocab, train) + decode(vocab, val) == text);
}

TEST_CASE("corpus: the real fortunes-zh corpus, when installed", "[data][corpus][slow]") {
  if (!std::filesystem::exists("/var/lib/dpkg/info/fortunes-zh.list")) {
    WARN("fortunes-zh not installed: skipped");
    return;
  }
  const auto files = fortune_files("fortunes-zh");
  REQUIRE(files.size() == 2);
  CHECK_THAT(files[0], Catch::EndsWith("/song100"));
  CHECK_THAT(files[1], Catch::EndsWith("/tang300"));
  const std::string text = corpus_text("fortunes-zh");
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find("[32m") == std::string::npos);
  const Corpus c = build_corpus(text);
  CHECK(c.vocab.size() > 1000);
  CHECK(std::find(c.vocab.begin(), c.vocab.end(), "\xE3\x80\x8A") != c.vocab.end());  // 《
}
