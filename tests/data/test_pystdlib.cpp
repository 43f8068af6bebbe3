// test_pystdlib.cpp — the pystdlib corpus: its files (from dpkg's lists), the cleaning of a
// source file, the whole-file split, corpus.json, and the real corpus when installed.
#include <catch2/catch.hpp>
#include <filesystem>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "data/json.h"
#include "data/sha256.h"
#include "data/utf8.h"
#include "tests/support/temp_dir.h"

using namespace poslab;
using Catch::Contains;

TEST_CASE("pystdlib: the cleaning of one source file", "[data][corpus][pystdlib]") {
  // Every file ends in its newline and one more: an empty line between two files.
  CHECK(clean_source_file("x = 1\n", "f") == "x = 1\n\n");
  CHECK(clean_source_file("x = 1", "f") == "x = 1\n\n");  // a final newline added
  CHECK(clean_source_file("", "f") == "\n\n");
  CHECK(clean_source_file("\n", "f") == "\n\n");
  // A leading BOM goes; one anywhere else is text (U+FEFF is not a control character).
  CHECK(clean_source_file("\xEF\xBB\xBFpass\n", "f") == "pass\n\n");
  CHECK(clean_source_file("a\xEF\xBB\xBF\n", "f") == "a\xEF\xBB\xBF\n\n");
  // CRLF becomes LF; a lone CR, form feed, DEL and a C1 control (U+0085) are dropped;
  // tab stays.
  CHECK(clean_source_file("if x:\r\n\tpass\r\n", "f") == "if x:\n\tpass\n\n");
  CHECK(clean_source_file("a\rb\x0c\n\x7f\xC2\x85z\r\n", "f") == "ab\nz\n\n");
  // Other non-ASCII text is kept as it is: é, 中.
  CHECK(clean_source_file("s = '\xC3\xA9\xE4\xB8\xAD'", "f") == "s = '\xC3\xA9\xE4\xB8\xAD'\n\n");
  // Invalid UTF-8: the file and the offset of the bad sequence (the BOM counted).
  REQUIRE_THROWS_WITH(clean_source_file("\xEF\xBB\xBF# x\n\xE9t\xE9\n", "/usr/lib/x.py"),
                      Contains("/usr/lib/x.py: byte 7: invalid UTF-8"));
}

TEST_CASE("pystdlib: the whole-file split puts file k in val when k mod 10 = 9",
          "[data][corpus][pystdlib]") {
  CHECK(split_rule("pystdlib") == SplitRule::whole_files);
  for (const char* other : {"fortunes", "fortunes-zh", "kjv", "./pystdlib", "book.txt"})
    CHECK(split_rule(other) == SplitRule::per_source_90);

  // 21 files "f<k>\n\n": val = files 9 and 19, whole, in order; train = the other 19.
  std::vector<SourceText> sources;
  std::string train_text, val_text;
  for (size_t k = 0; k < 21; ++k) {
    const std::string text = "f" + std::to_string(k) + "\n\n";
    sources.push_back({"f" + std::to_string(k) + ".py", text, text.size() - 1});
    (k % 10 == 9 ? val_text : train_text) += text;
  }
  const Corpus c = build_corpus(sources, SplitRule::whole_files);
  CHECK(decode(c.vocab, c.train) == train_text);
  CHECK(decode(c.vocab, c.val) == val_text);
  CHECK(val_text == "f9\n\nf19\n\n");
  REQUIRE(c.parts.size() == 21);
  for (size_t k = 0; k < 21; ++k) {
    INFO("file " << k);
    CHECK(whole_file_goes_to_val(k) == (k == 9 || k == 19));
    const size_t n = sources[k].text.size();
    CHECK(c.parts[k].train == (whole_file_goes_to_val(k) ? 0 : n));
    CHECK(c.parts[k].val == (whole_file_goes_to_val(k) ? n : 0));
  }
  // The same sources under the per-source rule: every file has a train part.
  CHECK(build_corpus(sources).parts[9].train > 0);

  // Fewer than 10 files leave val empty.
  sources.resize(9);
  REQUIRE_THROWS_WITH(
      build_corpus(sources, SplitRule::whole_files),
      Contains("0 val characters") && Contains("k mod 10 = 9") && Contains("there are 9 files"));
}

TEST_CASE("pystdlib: corpus.json counts files, bytes and the SHA-256", "[data][corpus][pystdlib]") {
  // Ten files; the val one (k = 9) holds a 2-byte character, so bytes and characters differ.
  std::vector<SourceText> sources;
  std::string all;
  for (size_t k = 0; k < 10; ++k) {
    const std::string text = k == 9 ? "\xC3\xA9\n\n" : "ab\n\n";
    sources.push_back({"f" + std::to_string(k), text, text.size() - 1 + (k == 0)});
    all += text;
  }
  Corpus c = build_corpus(sources, SplitRule::whole_files);
  const CorpusInfo info = corpus_info("pystdlib", "pkg 1.0", sources, c.parts);
  CHECK(info.files == 10);
  CHECK(info.file_bytes == 9 * 3 + 1 + 3);  // as given: file 0 one byte more
  CHECK(info.bytes == all.size());
  CHECK(info.bytes == 9 * 4 + 4);
  CHECK(info.sha256 == sha256_hex(all));
  CHECK(info.train_files == 9);
  CHECK(info.val_files == 1);
  CHECK(info.val_file_bytes == 3);
  CHECK(info.val_bytes == 4);  // "é\n\n": bytes, not its 3 characters

  // Under the per-source rule, val bytes are those after each source's cut.
  const std::vector<SourceText> two = {
      {"a", "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\n\xC3\xA9\xC3\xA9\n", 30}, {"b", "one line\n", 9}};
  const Corpus d = build_corpus(two);
  const CorpusInfo per = corpus_info("book", "book", two, d.parts);
  CHECK(per.train_files == 2);
  CHECK(per.val_files == 1);  // a one-line source has no val part
  CHECK(per.val_file_bytes == 30);
  CHECK(per.val_bytes == 5);  // "éé\n"

  // write_corpus writes corpus.json when the corpus has its info, and not otherwise.
  test::TempDir tmp;
  write_corpus(c, tmp.file("plain"));
  CHECK(!std::filesystem::exists(tmp.file("plain/corpus.json")));
  c.info = info;
  write_corpus(c, tmp.file("with"));
  const std::string text = read_file(tmp.file("with/corpus.json"));
  CHECK(text == corpus_info_json(info));
  const Json json = json_parse(text, "corpus.json");
  REQUIRE(json.is_object());
  const std::vector<std::string> keys = {"corpus",         "source",   "files",       "file_bytes",
                                         "bytes",          "sha256",   "train_files", "val_files",
                                         "val_file_bytes", "val_bytes"};
  REQUIRE(json.members.size() == keys.size());
  for (size_t i = 0; i < keys.size(); ++i) CHECK(json.members[i].first == keys[i]);
  CHECK(json.find("corpus")->as_string() == "pystdlib");
  CHECK(json.find("source")->as_string() == "pkg 1.0");
  CHECK(json.find("sha256")->as_string() == sha256_hex(all));
  CHECK(json.find("bytes")->to_uint64() == 40u);
  CHECK(json.find("val_bytes")->to_uint64() == 4u);
}

TEST_CASE("pystdlib: its files come from dpkg's lists of the two packages",
          "[data][corpus][pystdlib]") {
  test::TempDir dpkg;
  // Neither installed: both named; one missing: that one.
  REQUIRE_THROWS_WITH(pystdlib_files(dpkg.path()),
                      Contains("expected Debian package libpython3.11-minimal to be installed") &&
                          Contains("apt-get install libpython3.11-minimal libpython3.11-stdlib"));
  // Multi-Arch: same packages have lists named <package>:<arch>.list.
  write_file_atomic(dpkg.file("libpython3.11-minimal:amd64.list"),
                    "/.\n/usr/lib/python3.11\n/usr/lib/python3.11/os.py\n"
                    "/usr/lib/python3.11/_abc.py\n/usr/lib/python3.11/encodings/utf_8.py\n"
                    "/usr/lib/python3.11/LICENSE.txt\n/usr/lib/python3.11/site.pyc\n"
                    "/usr/share/doc/x/example.py\n");
  REQUIRE_THROWS_WITH(pystdlib_files(dpkg.path()),
                      Contains("libpython3.11-stdlib to be installed") &&
                          Contains("install it with: apt-get install libpython3.11-stdlib") &&
                          !Contains("minimal"));
  write_file_atomic(dpkg.file("libpython3.11-stdlib:amd64.list"),
                    "/usr/lib/python3.11/Zeta.py\n/usr/lib/python3.11/os.py\n"
                    "/usr/lib/python3.11/json/__init__.py\n/usr/lib/python3.11/abc.py");
  // Only *.py directly in the folder, each once, in byte order ('Z' < '_' < 'a').
  CHECK(pystdlib_files(dpkg.path()) ==
        std::vector<std::string>{"/usr/lib/python3.11/Zeta.py", "/usr/lib/python3.11/_abc.py",
                                 "/usr/lib/python3.11/abc.py", "/usr/lib/python3.11/os.py"});
  write_file_atomic(dpkg.file("libpython3.11-stdlib:amd64.list"), "/usr/lib/python3.11/a.txt\n");
  write_file_atomic(dpkg.file("libpython3.11-minimal:amd64.list"), "/.\n");
  REQUIRE_THROWS_WITH(pystdlib_files(dpkg.path()), Contains("its packages list no *.py file"));
}

TEST_CASE("pystdlib: a package's version from dpkg's status file", "[data][corpus]") {
  test::TempDir tmp;
  const std::string status = tmp.file("status");
  write_file_atomic(status,
                    "Package: libpython3.11-stdlib\nStatus: deinstall ok config-files\n"
                    "Architecture: i386\nVersion: 3.11.0-1\n\n"
                    "Package: libpython3.11-stdlib-dbg\nStatus: install ok installed\n"
                    "Version: 9\n\n"
                    "Package: libpython3.11-stdlib\nStatus: install ok installed\n"
                    "Architecture: amd64\nMulti-Arch: same\nVersion: 3.11.2-6+deb12u6\n"
                    "Description: the standard library\n");
  CHECK(package_version("libpython3.11-stdlib", status) == "3.11.2-6+deb12u6");
  CHECK(package_version("libpython3.11-minimal", status).empty());
  CHECK(corpus_origin("some/file.txt") == "some/file.txt");
}

TEST_CASE("pystdlib: the real corpus, when installed", "[data][corpus][pystdlib][slow]") {
  if (!std::filesystem::exists("/var/lib/dpkg/status") ||
      package_version("libpython3.11-minimal").empty() ||
      package_version("libpython3.11-stdlib").empty()) {
    WARN("libpython3.11-minimal / libpython3.11-stdlib not installed: skipped");
    return;
  }
  const Corpus c = prepare_corpus("pystdlib");
  const CorpusInfo& info = c.info;
  INFO("source: " << info.source << ", sha256 " << info.sha256);
  // Debian 12 (3.11.2-6+deb12u6): 171 files of 4,742,373 bytes; the prepared text is those
  // bytes and 171 newlines (one empty line after each file; no file needed any other change).
  CHECK(info.corpus == "pystdlib");
  CHECK_THAT(info.source,
             Contains("libpython3.11-minimal 3.11") && Contains(", libpython3.11-stdlib 3.11"));
  CHECK(info.files == 171);
  CHECK(info.file_bytes == 4742373);
  CHECK(info.bytes == 4742544);
  CHECK(info.sha256.rfind("0781466e", 0) == 0);
  CHECK(info.train_files == 154);
  CHECK(info.val_files == 17);
  CHECK(info.val_file_bytes == 481148);  // the 17 val files as installed
  CHECK(info.val_bytes == 481148 + 17);  // and the empty line after each
  // val.bin decodes to the val files, whole, in order.
  const std::vector<SourceText> sources = corpus_sources("pystdlib");
  REQUIRE(sources.size() == 171);
  std::string val_text;
  for (size_t k = 9; k < sources.size(); k += 10) val_text += sources[k].text;
  CHECK(decode(c.vocab, c.val) == val_text);
  CHECK(sources[0].name == "/usr/lib/python3.11/__future__.py");
  for (const SourceText& s : sources) CHECK(s.text.size() == s.file_bytes + 1);
}
