// test_utf8.cpp — strict UTF-8: hand-worked bytes, exhaustive round trips, every refusal.
#include <catch2/catch.hpp>

#include <algorithm>

#include "data/utf8.h"

using namespace poslab;
using Catch::Contains;

TEST_CASE("utf8: hand-worked encodings", "[data][utf8]") {
  CHECK(utf8_encode(U'A') == "A");
  CHECK(utf8_encode(0xE9) == "\xC3\xA9");             // é
  CHECK(utf8_encode(0x4E2D) == "\xE4\xB8\xAD");       // 中
  CHECK(utf8_encode(0x1F600) == "\xF0\x9F\x98\x80");  // 😀
  CHECK(utf8_decode("a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80", "t") ==
        std::vector<char32_t>{U'a', 0xE9, 0x4E2D, 0x1F600});
  CHECK(utf8_decode("", "t").empty());
  CHECK(code_point_name(0xE9) == "U+00E9");
  CHECK(code_point_name(0x1F600) == "U+1F600");
}

TEST_CASE("utf8: every scalar value round-trips at its minimal length", "[data][utf8]") {
  size_t checked = 0;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::string bytes = utf8_encode(cp);
    const size_t want_len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    const auto back = utf8_decode(bytes, "t");
    if (bytes.size() != want_len || back.size() != 1 || back[0] != cp)
      FAIL("code point " << code_point_name(cp));
    ++checked;
  }
  CHECK(checked == 0x110000 - 0x800);
}

TEST_CASE("utf8: all two-byte inputs are accepted exactly when valid", "[data][utf8]") {
  // Valid: two ASCII bytes, or a lead C2..DF followed by a continuation 80..BF.
  for (int b0 = 0; b0 < 256; ++b0) {
    for (int b1 = 0; b1 < 256; ++b1) {
      const std::string s{static_cast<char>(b0), static_cast<char>(b1)};
      const bool valid =
          (b0 < 0x80 && b1 < 0x80) || (b0 >= 0xC2 && b0 <= 0xDF && b1 >= 0x80 && b1 <= 0xBF);
      bool accepted = true;
      try {
        utf8_decode(s, "t");
      } catch (const std::runtime_error&) {
        accepted = false;
      }
      if (accepted != valid) FAIL("bytes " << b0 << " " << b1);
    }
  }
}

TEST_CASE("utf8: refusals name the byte offset and the reason", "[data][utf8]") {
  REQUIRE_THROWS_WITH(utf8_decode("a\x80", "f.txt"),
                      Contains("f.txt: byte 1:") && Contains("continuation byte 0x80"));
  REQUIRE_THROWS_WITH(utf8_decode("xy\xC0\xAF", "f"),
                      Contains("byte 2") && Contains("overlong encoding of U+002F"));
  REQUIRE_THROWS_WITH(utf8_decode("\xE0\x80\xAF", "f"), Contains("overlong"));
  REQUIRE_THROWS_WITH(utf8_decode("\xF0\x80\x80\xAF", "f"), Contains("overlong"));
  REQUIRE_THROWS_WITH(utf8_decode("\xF0\x8F\xBF\xBF", "f"), Contains("overlong"));
  REQUIRE_THROWS_WITH(utf8_decode("\xED\xA0\x80", "f"), Contains("surrogate U+D800"));
  REQUIRE_THROWS_WITH(utf8_decode("\xED\xBF\xBF", "f"), Contains("surrogate U+DFFF"));
  REQUIRE_THROWS_WITH(utf8_decode("\xF4\x90\x80\x80", "f"), Contains("above U+10FFFF"));
  REQUIRE_THROWS_WITH(utf8_decode("\xF5\x80\x80\x80", "f"), Contains("above U+10FFFF"));
  REQUIRE_THROWS_WITH(utf8_decode("\xFF", "f"), Contains("byte 0xff never occurs"));
  REQUIRE_THROWS_WITH(utf8_decode("\xF8\x88\x80\x80\x80", "f"), Contains("never occurs"));
  REQUIRE_THROWS_WITH(utf8_decode("ab\xE4\xB8", "f"),
                      Contains("byte 2") && Contains("truncated") && Contains("ends after 1"));
  REQUIRE_THROWS_WITH(utf8_decode("\xE4\x41\x42", "f"),
                      Contains("truncated") && Contains("got 0x41 at byte 1"));
  REQUIRE_THROWS_WITH(utf8_decode("\xF0\x9F\x98", "f"), Contains("truncated"));
  // The largest values at each boundary are fine.
  CHECK(utf8_decode("\xF4\x8F\xBF\xBF", "f") == std::vector<char32_t>{0x10FFFF});
  CHECK(utf8_decode("\xEF\xBF\xBF", "f") == std::vector<char32_t>{0xFFFF});
  CHECK(utf8_decode("\xED\x9F\xBF", "f") == std::vector<char32_t>{0xD7FF});
}

TEST_CASE("utf8: encode refuses non-characters", "[data][utf8]") {
  REQUIRE_THROWS_WITH(utf8_encode(0xD800), Contains("surrogate U+D800"));
  REQUIRE_THROWS_WITH(utf8_encode(0x110000), Contains("U+110000"));
}

TEST_CASE("utf8: every truncation of a multi-byte text is refused at its last character",
          "[data][utf8]") {
  const std::string text = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80";  // starts at 0, 1, 3, 6
  const size_t starts[] = {0, 1, 3, 6, 10};
  for (size_t len = 0; len <= text.size(); ++len) {
    const bool on_boundary =
        std::find(std::begin(starts), std::end(starts), len) != std::end(starts);
    if (on_boundary) {
      CHECK_NOTHROW(utf8_decode(text.substr(0, len), "t"));
    } else {
      CHECK_THROWS_WITH(utf8_decode(text.substr(0, len), "t"), Contains("truncated"));
    }
  }
}
