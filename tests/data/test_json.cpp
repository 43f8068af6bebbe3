// test_json.cpp — the strict JSON reader and json_quote: values, escapes, every refusal.
#include <catch2/catch.hpp>

#include "data/json.h"

using namespace poslab;
using Catch::Contains;

namespace {
Json parse(std::string_view text) {
  return json_parse(text, "t.json");
}
}  // namespace

TEST_CASE("json: scalars", "[data][json]") {
  CHECK(parse("null").is_null());
  CHECK(parse("true").as_bool() == true);
  CHECK(parse(" false ").as_bool() == false);
  CHECK(parse("0").as_number() == 0);
  CHECK(parse("-0").as_number() == 0);
  CHECK(parse("42").as_number() == 42);
  CHECK(parse("-1.5e3").as_number() == -1500);
  CHECK(parse("0.25").as_number() == 0.25);
  CHECK(parse("2E-2").as_number() == 0.02);
  CHECK(parse("1e+2").as_number() == 100);
  CHECK(parse("-1.5e3").text == "-1.5e3");  // the literal as written
  CHECK(parse("\"hi\"").as_string() == "hi");
  CHECK(parse("\t\r\n 7 \n").as_number() == 7);
}

TEST_CASE("json: string escapes decode to UTF-8", "[data][json]") {
  CHECK(parse(R"("a\"b\\c\/d\b\f\n\r\t")").as_string() == "a\"b\\c/d\b\f\n\r\t");
  CHECK(parse(R"("\u00e9")").as_string() == "\xC3\xA9");
  CHECK(parse(R"("\u00E9")").as_string() == "\xC3\xA9");
  CHECK(parse(R"("\u4e2d")").as_string() == "\xE4\xB8\xAD");
  CHECK(parse(R"("\ud83d\ude00")").as_string() == "\xF0\x9F\x98\x80");  // surrogate pair
  CHECK(parse(R"("\u0000")").as_string() == std::string(1, '\0'));
  CHECK(parse("\"\xE4\xB8\xAD\"").as_string() == "\xE4\xB8\xAD");  // raw UTF-8
}

TEST_CASE("json: arrays and objects keep order and offsets", "[data][json]") {
  const Json j = parse(R"({"b": [1, [2, {}], []], "a": {"x": null}, "c": "s"})");
  REQUIRE(j.is_object());
  REQUIRE(j.members.size() == 3);
  CHECK(j.members[0].first == "b");
  CHECK(j.members[1].first == "a");
  CHECK(j.members[2].first == "c");
  const Json* b = j.find("b");
  REQUIRE(b);
  REQUIRE(b->as_array().size() == 3);
  CHECK(b->items[0].as_number() == 1);
  CHECK(b->items[1].items[1].is_object());
  CHECK(b->items[2].items.empty());
  CHECK(b->offset == 6);
  CHECK(b->items[1].offset == 10);
  CHECK(j.find("a")->find("x")->is_null());
  CHECK(j.find("zzz") == nullptr);
  CHECK(b->find("x") == nullptr);  // not an object
  CHECK(parse("[]").as_array().empty());
  CHECK(parse("{}").as_object().empty());
}

TEST_CASE("json: to_uint64 is exact and only for integer literals", "[data][json]") {
  CHECK(parse("42").to_uint64() == 42u);
  CHECK(parse("0").to_uint64() == 0u);
  CHECK(parse("9007199254740993").to_uint64() == 9007199254740993ull);  // 2^53 + 1
  CHECK(parse("18446744073709551615").to_uint64() == 18446744073709551615ull);
  CHECK(!parse("18446744073709551616").to_uint64());
  CHECK(!parse("42.0").to_uint64());
  CHECK(!parse("4.2e1").to_uint64());
  CHECK(!parse("-1").to_uint64());
  CHECK(!parse("\"42\"").to_uint64());
}

TEST_CASE("json: accessor mismatches say what was expected", "[data][json]") {
  REQUIRE_THROWS_WITH(parse("1").as_string(), Contains("expected a string, but got a number"));
  REQUIRE_THROWS_WITH(parse("\"x\"").as_number(), Contains("expected a number, but got a string"));
  REQUIRE_THROWS_WITH(parse("{}").as_array(), Contains("expected an array, but got an object"));
  REQUIRE_THROWS_WITH(parse("[]").as_object(), Contains("expected an object, but got an array"));
  REQUIRE_THROWS_WITH(parse("null").as_bool(), Contains("expected a boolean, but got null"));
}

TEST_CASE("json: malformed text names the byte, the expectation and what was found",
          "[data][json]") {
  REQUIRE_THROWS_WITH(json_parse("[1 x]", "vocab.json"),
                      Contains("vocab.json: byte 3: expected ',' or ']', but got 'x'"));
  REQUIRE_THROWS_WITH(parse("[1] x"), Contains("byte 4: expected the end of the JSON text"));
  REQUIRE_THROWS_WITH(parse("{} {}"), Contains("expected the end of the JSON text"));
  REQUIRE_THROWS_WITH(parse(""), Contains("byte 0: expected a JSON value, but got end of input"));
  REQUIRE_THROWS_WITH(parse("   "), Contains("end of input"));
  REQUIRE_THROWS_WITH(parse("[1,"), Contains("byte 3: expected a JSON value"));
  REQUIRE_THROWS_WITH(parse("[1,]"), Contains("byte 3: expected a JSON value, but got ']'"));
  REQUIRE_THROWS_WITH(parse("{\"a\":1,}"), Contains("expected a string key, but got '}'"));
  REQUIRE_THROWS_WITH(parse("{\"a\" 1}"), Contains("expected ':'"));
  REQUIRE_THROWS_WITH(parse("{\"a\":"), Contains("expected a JSON value, but got end of input"));
  REQUIRE_THROWS_WITH(parse("{a:1}"), Contains("expected a string key, but got 'a'"));
  REQUIRE_THROWS_WITH(parse("['a']"), Contains("expected a JSON value, but got '''"));
  REQUIRE_THROWS_WITH(parse("\"abc"), Contains("expected '\"' to close the string"));
  REQUIRE_THROWS_WITH(parse("nul"), Contains("expected 'null'"));
  REQUIRE_THROWS_WITH(parse("tru"), Contains("expected 'true'"));
  REQUIRE_THROWS_WITH(parse("True"), Contains("expected a JSON value, but got 'T'"));
  REQUIRE_THROWS_WITH(parse("NaN"), Contains("expected a JSON value"));
  REQUIRE_THROWS_WITH(parse("Infinity"), Contains("expected a JSON value"));
  REQUIRE_THROWS_WITH(parse(std::string("[1,\0]", 5)), Contains("but got byte 0x00"));
}

TEST_CASE("json: numbers follow the RFC grammar exactly", "[data][json]") {
  REQUIRE_THROWS_WITH(parse("01"), Contains("after a leading 0, but got '1'"));
  REQUIRE_THROWS_WITH(parse("-01"), Contains("leading 0"));
  REQUIRE_THROWS_WITH(parse("-"), Contains("expected a digit, but got end of input"));
  REQUIRE_THROWS_WITH(parse("+1"), Contains("expected a JSON value, but got '+'"));
  REQUIRE_THROWS_WITH(parse(".5"), Contains("expected a JSON value, but got '.'"));
  REQUIRE_THROWS_WITH(parse("1."), Contains("expected a digit after '.'"));
  REQUIRE_THROWS_WITH(parse("1.e5"), Contains("expected a digit after '.'"));
  REQUIRE_THROWS_WITH(parse("1e"), Contains("expected a digit in the exponent"));
  REQUIRE_THROWS_WITH(parse("1e+"), Contains("expected a digit in the exponent"));
  REQUIRE_THROWS_WITH(parse("0x10"), Contains("expected the end of the JSON text, but got 'x'"));
  REQUIRE_THROWS_WITH(parse("1e400"), Contains("expected a number that fits a double"));
  REQUIRE_THROWS_WITH(parse("-1e400"), Contains("fits a double"));
  REQUIRE_THROWS_WITH(parse("1e-400"), Contains("fits a double"));  // underflow, too
  CHECK(parse("5e-324").as_number() > 0);                           // a subnormal fits
}

TEST_CASE("json: strings refuse raw control characters, bad escapes and bad UTF-8",
          "[data][json]") {
  REQUIRE_THROWS_WITH(parse("\"a\nb\""), Contains("byte 2") && Contains("control characters"));
  REQUIRE_THROWS_WITH(parse("\"a\tb\""), Contains("control characters"));
  REQUIRE_THROWS_WITH(parse(R"("\x")"), Contains("byte 2: expected an escape"));
  REQUIRE_THROWS_WITH(parse(R"("\)"), Contains("expected an escape"));
  REQUIRE_THROWS_WITH(parse(R"("\u12G4")"), Contains("expected a hex digit"));
  REQUIRE_THROWS_WITH(parse(R"("\u12)"), Contains("expected a hex digit"));
  REQUIRE_THROWS_WITH(parse(R"("\udc00")"), Contains("byte 1") && Contains("lone low surrogate"));
  REQUIRE_THROWS_WITH(parse(R"("\ud800")"), Contains("expected \\u and a low surrogate"));
  REQUIRE_THROWS_WITH(parse(R"("\ud800x")"), Contains("low surrogate") && Contains("got 'x'"));
  REQUIRE_THROWS_WITH(parse(R"("\ud800\u0041")"),
                      Contains("byte 7: expected a low surrogate") && Contains("U+0041"));
  REQUIRE_THROWS_WITH(parse(R"("\ud800\ud800")"), Contains("expected a low surrogate"));
  REQUIRE_THROWS_WITH(parse("\"ab\xC0\xAF\""), Contains("t.json: byte 3: invalid UTF-8"));
  REQUIRE_THROWS_WITH(parse("\"\xE4\xB8\""), Contains("byte 1: invalid UTF-8: truncated"));
  REQUIRE_THROWS_WITH(parse("\xE4\xB8\xAD"), Contains("expected a JSON value, but got byte 0xe4"));
}

TEST_CASE("json: duplicate keys are refused", "[data][json]") {
  REQUIRE_THROWS_WITH(parse(R"({"a":1,"b":2,"a":3})"),
                      Contains("byte 13: expected unique keys, but got \"a\" twice"));
  CHECK_NOTHROW(parse(R"({"a":{"a":1}})"));  // same key at different levels is fine
}

TEST_CASE("json: nesting is limited to 64 levels", "[data][json]") {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK_NOTHROW(parse(nested(64)));
  REQUIRE_THROWS_WITH(parse(nested(65)), Contains("byte 64") && Contains("nested at most 64"));
  REQUIRE_THROWS_WITH(parse(std::string(1000000, '[')), Contains("nested at most 64"));
  std::string objects;
  for (int i = 0; i < 65; ++i) objects += "{\"a\":";
  REQUIRE_THROWS_WITH(parse(objects + "1" + std::string(65, '}')), Contains("nested at most"));
}

TEST_CASE("json: every prefix of a valid document is refused", "[data][json]") {
  const std::string doc = R"({"k": [1, -2.5e1, "\u00e9\ud83d\ude00", true, null], "z": {}})";
  CHECK_NOTHROW(parse(doc));
  for (size_t len = 0; len < doc.size(); ++len) {
    CHECK_THROWS_AS(parse(doc.substr(0, len)), std::runtime_error);
  }
}

TEST_CASE("json_quote: escapes exactly what must be escaped", "[data][json]") {
  CHECK(json_quote("abc") == "\"abc\"");
  CHECK(json_quote("a\"b\\c") == R"("a\"b\\c")");
  CHECK(json_quote("\n\t\r\b\f") == R"("\n\t\r\b\f")");
  CHECK(json_quote(std::string("\x01\x1f\x7f", 3)) == R"("\u0001\u001f\u007f")");
  CHECK(json_quote(std::string(1, '\0')) == R"("\u0000")");
  CHECK(json_quote("\xC2\x85") == R"("\u0085")");  // a C1 control
  CHECK(json_quote("/") == "\"/\"");
  CHECK(json_quote("\xC3\xA9\xE4\xB8\xAD") == "\"\xC3\xA9\xE4\xB8\xAD\"");  // raw UTF-8
  REQUIRE_THROWS_WITH(json_quote("a\xFF"), Contains("json_quote: byte 1: invalid UTF-8"));
}

TEST_CASE("json_quote: parse(quote(s)) == s for every character class", "[data][json]") {
  std::string s;
  for (int c = 0; c < 0x80; ++c) s += static_cast<char>(c);
  s += "\xC2\x80\xC2\x9F\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\xEF\xBB\xBF";
  CHECK(parse(json_quote(s)).as_string() == s);
}
