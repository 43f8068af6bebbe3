// test_sources.cpp — where corpus text comes from (fortunes, fortunes-zh, kjv, a file) and
// the per-source split of the real corpora.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <filesystem>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "data/utf8.h"
#include "tests/support/temp_dir.h"

using namespace poslab;
using Catch::Contains;

// The split of every source follows docs/formats.md: its train part is train_length of it, ends at
// a line end, and its train part then its val part give back the source exactly; the parts follow
// the sources in order in train and val.
static void check_split(const Corpus& c, const std::vector<SourceText>& sources) {
  REQUIRE(c.parts.size() == sources.size());
  size_t t0 = 0, v0 = 0;
  for (size_t k = 0; k < sources.size(); ++k) {
    const SourcePart& part = c.parts[k];
    INFO(part.name);
    CHECK(part.name == sources[k].name);
    const std::vector<char32_t> cps = utf8_decode(sources[k].text, part.name);
    CHECK(part.train == train_length(cps));
    REQUIRE(part.train + part.val == cps.size());
    const std::vector<uint16_t> tr(c.train.begin() + t0, c.train.begin() + t0 + part.train);
    const std::vector<uint16_t> va(c.val.begin() + v0, c.val.begin() + v0 + part.val);
    const std::string train_text = decode(c.vocab, tr);
    CHECK(train_text + decode(c.vocab, va) == sources[k].text);
    CHECK((train_text.empty() || train_text.back() == '\n' || part.val == 0));
    CHECK(part.train >= 9 * cps.size() / 10);
    t0 += part.train, v0 += part.val;
  }
  CHECK(t0 == c.train.size());
  CHECK(v0 == c.val.size());
}

TEST_CASE("corpus: a text file is taken as is except BOM and CRLF", "[data][corpus]") {
  test::TempDir tmp;
  const std::string path = tmp.file("book.txt");
  const auto text_of = [](const std::string& file) {
    const std::vector<SourceText> sources = corpus_sources(file);
    REQUIRE(sources.size() == 1);  // a file is one source, named by its path
    CHECK(sources[0].name == file);
    return sources[0].text;
  };
  write_file_atomic(path, "\xEF\xBB\xBFline one\r\nline\rtwo\r\n%\n\x07\xC3\xA9");
  CHECK(text_of(path) == "line one\nline\rtwo\n%\n\x07\xC3\xA9");

  write_file_atomic(path, "ok\nthen \xE4\xB8");  // truncated 中 at byte 8
  REQUIRE_THROWS_WITH(text_of(path), Contains(path + ": byte 8: invalid UTF-8"));
  write_file_atomic(path,
                    "\xEF\xBB\xBF"
                    "abc\xC0\x80");  // offsets count the BOM
  REQUIRE_THROWS_WITH(text_of(path), Contains("byte 6: invalid UTF-8: overlong"));
  write_file_atomic(path, "");
  REQUIRE_THROWS_WITH(text_of(path), Contains(path + ": expected UTF-8 text, but the file "
                                                     "is empty"));
  write_file_atomic(path, "\xEF\xBB\xBF");
  REQUIRE_THROWS_WITH(text_of(path), Contains("only a BOM"));
  REQUIRE_THROWS_WITH(text_of(tmp.file("none.txt")), Contains("cannot open"));
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

  const std::vector<SourceText> sources = corpus_sources("fortunes");
  REQUIRE(sources.size() == files.size());
  std::string text;
  for (size_t k = 0; k < files.size(); ++k) {
    CHECK(sources[k].name == files[k]);
    text += sources[k].text;
  }
  CHECK(text.find("\n%\n") == std::string::npos);
  const Corpus c = prepare_corpus("fortunes");
  check_split(c, sources);
  for (const SourcePart& part : c.parts) {
    INFO(part.name);
    CHECK(part.val > 0);  // every fortune file contributes to val
  }
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
  CHECK(val.size() / n > 0.09);  // 10% of each file, less the rest of the cut line
  CHECK(val.size() / n <= 0.1);
  CHECK(train.size() == c.train.size());
  CHECK(val.size() == c.val.size());
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
  const std::vector<SourceText> sources = corpus_sources("fortunes-zh");
  REQUIRE(sources.size() == 2);
  for (const SourceText& s : sources) {
    CHECK(s.text.find('\x1b') == std::string::npos);
    CHECK(s.text.find("[32m") == std::string::npos);
  }
  const Corpus c = build_corpus(sources);
  check_split(c, sources);
  CHECK(c.parts[0].val > 0);
  CHECK(c.parts[1].val > 0);
  CHECK(c.vocab.size() > 1000);
  CHECK(std::find(c.vocab.begin(), c.vocab.end(), "\xE3\x80\x8A") != c.vocab.end());  // 《
}

// A dpkg info folder whose bible-kjv.list names a stand-in `bible`: a shell script.
static void fake_bible(const test::TempDir& dir, const std::string& script_body) {
  const std::string program = dir.file("usr/bin/bible");
  std::filesystem::create_directories(dir.file("usr/bin"));
  write_file_atomic(program, "#!/bin/sh\n" + script_body + "\n");
  std::filesystem::permissions(program, std::filesystem::perms::owner_all);
  write_file_atomic(dir.file("bible-kjv.list"), "/.\n" + dir.file("usr/bin") + "\n" + program +
                                                    "\n/usr/share/man/man1/bible.1.gz\n");
}

TEST_CASE("corpus: kjv runs the package's bible and checks what it prints", "[data][corpus]") {
  test::TempDir dpkg;
  REQUIRE_THROWS_WITH(kjv_text(dpkg.path()),
                      Contains("corpus kjv: expected Debian package bible-kjv to be installed") &&
                          Contains("install it with: apt-get install bible-kjv"));
  write_file_atomic(dpkg.file("bible-kjv.list"), "/.\n/usr/share/doc/bible-kjv\n");
  REQUIRE_THROWS_WITH(kjv_text(dpkg.path()), Contains("lists no program bin/bible"));

  // The flags reach the program; what it prints is the text.
  fake_bible(dpkg,
             "[ \"$*\" = \"-f Gen1:1-Rev22:21\" ] || exit 9\n"
             "printf 'Ge1:1 In the beginning\\nRev22:21 Amen.\\n'");
  CHECK(kjv_text(dpkg.path()) == "Ge1:1 In the beginning\nRev22:21 Amen.\n");
  fake_bible(dpkg, "exit 3");
  REQUIRE_THROWS_WITH(kjv_text(dpkg.path()),
                      Contains("corpus kjv: `bible -f Gen1:1-Rev22:21`: failed (exit status 3)"));
  fake_bible(dpkg, "echo 'Bad Book'");  // bible's answer to a range it cannot read
  REQUIRE_THROWS_WITH(
      kjv_text(dpkg.path()),
      Contains("expected one verse a line from \"Ge1:1 ...\" to \"Rev22:21 ...\"") &&
          Contains("starting \"Bad Book"));
  fake_bible(dpkg, "printf 'Ge1:1 In the beginning\\nRev22:20 Surely\\n'");  // cut short
  REQUIRE_THROWS_WITH(kjv_text(dpkg.path()), Contains("expected one verse a line"));
  fake_bible(dpkg, "printf 'Ge1:1 x\\nRev22:21 no final newline'");
  REQUIRE_THROWS_WITH(kjv_text(dpkg.path()), Contains("expected one verse a line"));
}

TEST_CASE("corpus: the real kjv corpus, when installed", "[data][corpus][slow]") {
  if (!std::filesystem::exists("/var/lib/dpkg/info/bible-kjv.list")) {
    WARN("bible-kjv not installed: skipped");
    return;
  }
  const std::vector<SourceText> sources = corpus_sources("kjv");
  REQUIRE(sources.size() == 1);
  CHECK(sources[0].name == "bible -f Gen1:1-Rev22:21");
  const std::string& text = sources[0].text;
  CHECK(text.size() ==
        4404412);  // docs/formats.md: 4.4 MB, 31,102 lines (Debian 12's bible-kjv 4.38)
  CHECK(std::count(text.begin(), text.end(), '\n') == 31102);
  CHECK(text.rfind("Ge1:1 In the beginning God created the heaven and the earth.\n", 0) == 0);
  const Corpus c = build_corpus(sources);
  check_split(c, sources);
  // val begins with a whole verse, its reference first, and holds the last 10% or so.
  const std::string val = decode(c.vocab, c.val);
  const std::string ref = val.substr(0, val.find(' '));  // e.g. "1Jo3:4": book, chapter:verse
  INFO("val starts with " << ref);
  const size_t colon = ref.find(':');
  REQUIRE(colon != std::string::npos);
  CHECK(std::isalpha(static_cast<unsigned char>(ref[ref[0] >= '1' && ref[0] <= '3' ? 1 : 0])));
  CHECK(std::isdigit(static_cast<unsigned char>(ref[colon - 1])));
  CHECK(ref.find_first_not_of("0123456789", colon + 1) == std::string::npos);
  CHECK(c.val.size() > 0.099 * (c.train.size() + c.val.size()));
  CHECK(c.vocab.size() < 100);
}
