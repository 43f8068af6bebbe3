// json.cpp — a recursive-descent parser for the grammar in json.h, and json_quote.
//
// One function per grammar rule. `pos` always indexes the next unread byte of `text`;
// every read is guarded by a bounds check, so truncated or hostile input ends in an error.
#include "data/json.h"

#include <charconv>
#include <cstdio>
#include <unordered_set>

#include "data/error.h"
#include "data/utf8.h"

namespace poslab {

Json::Json() = default;
Json::Json(const Json&) = default;
Json::Json(Json&&) noexcept = default;
Json& Json::operator=(const Json&) = default;
Json& Json::operator=(Json&&) noexcept = default;
Json::~Json() = default;

namespace {

constexpr int max_depth = 64;

class Parser {
 public:
  Parser(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  Json parse_document() {
    skip_whitespace();
    Json value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) fail("the end of the JSON text");
    return value;
  }

 private:
  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;

  bool at_end() const { return pos_ >= text_.size(); }
  // The next byte, or '\0' at the end (no expected character is '\0', so a NUL byte in
  // the text is also an error where it appears).
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  bool at_digit() const { return peek() >= '0' && peek() <= '9'; }

  // "'x'", "byte 0x0a" or "end of input": what sits at pos_.
  std::string describe_here() const {
    if (at_end()) return "end of input";
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
  }

  [[noreturn]] void fail(const std::string& expected) const {
    data_error(what_, ": byte ", pos_, ": expected ", expected, ", but got ", describe_here());
  }

  void expect(char c, const char* expected) {
    if (peek() != c) fail(expected);
    ++pos_;
  }

  void skip_whitespace() {
    while (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r') ++pos_;
  }

  Json parse_value(int depth) {
    Json value;
    value.offset = pos_;
    switch (peek()) {
      case '{':
        value = parse_object(depth + 1);
        break;
      case '[':
        value = parse_array(depth + 1);
        break;
      case '"':
        value.kind = Json::Kind::string;
        value.text = parse_string();
        break;
      case 't':
        parse_literal("true");
        value.kind = Json::Kind::boolean;
        value.boolean = true;
        break;
      case 'f':
        parse_literal("false");
        value.kind = Json::Kind::boolean;
        break;
      case 'n':
        parse_literal("null");
        break;
      default:
        if (peek() != '-' && !at_digit()) fail("a JSON value");
        parse_number(value);
    }
    return value;
  }

  void parse_literal(std::string_view word) {
    for (char c : word) {
      if (peek() != c) fail(std::string("'").append(word) + "'");
      ++pos_;
    }
  }

  void check_depth(int depth) const {
    if (depth > max_depth) {
      data_error(what_, ": byte ", pos_, ": expected arrays and objects nested at most ", max_depth,
                 " deep, but got deeper nesting");
    }
  }

  Json parse_array(int depth) {
    check_depth(depth);
    Json array;
    array.kind = Json::Kind::array;
    array.offset = pos_;
    ++pos_;  // '['
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return array;
    }
    while (true) {
      skip_whitespace();
      array.items.push_back(parse_value(depth));
      skip_whitespace();
      if (peek() == ']') break;
      expect(',', "',' or ']'");
    }
    ++pos_;  // ']'
    return array;
  }

  Json parse_object(int depth) {
    check_depth(depth);
    Json object;
    object.kind = Json::Kind::object;
    object.offset = pos_;
    ++pos_;  // '{'
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return object;
    }
    std::unordered_set<std::string> keys;
    while (true) {
      skip_whitespace();
      if (peek() != '"') fail("a string key");
      const size_t key_offset = pos_;
      std::string key = parse_string();
      if (!keys.insert(key).second) {
        data_error(what_, ": byte ", key_offset, ": expected unique keys, but got ",
                   json_quote(key), " twice");
      }
      skip_whitespace();
      expect(':', "':'");
      skip_whitespace();
      Json value = parse_value(depth);
      object.members.emplace_back(std::move(key), std::move(value));
      skip_whitespace();
      if (peek() == '}') break;
      expect(',', "',' or '}'");
    }
    ++pos_;  // '}'
    return object;
  }

  // Four hex digits after "\u".
  char32_t parse_hex4() {
    char32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = peek();
      int digit = -1;
      if (!at_end()) {
        if (c >= '0' && c <= '9') digit = c - '0';
        if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
      }
      if (digit < 0) fail("a hex digit of a \\u escape");
      v = v * 16 + static_cast<char32_t>(digit);
      ++pos_;
    }
    return v;
  }

  // The character of a \u escape; pos_ is just past "\u". A high surrogate must be
  // followed by "\u" and a low one; the pair encodes U+10000 + (hi-D800)*400h + (lo-DC00).
  char32_t parse_unicode_escape() {
    const size_t escape_start = pos_ - 2;
    const char32_t unit = parse_hex4();
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      data_error(what_, ": byte ", escape_start, ": expected a character, but got lone low ",
                 "surrogate ", code_point_name(unit));
    }
    if (unit < 0xD800 || unit > 0xDBFF) return unit;
    if (text_.substr(pos_, 2) != "\\u") {
      data_error(what_, ": byte ", pos_, ": expected \\u and a low surrogate after high ",
                 "surrogate ", code_point_name(unit), ", but got ", describe_here());
    }
    pos_ += 2;
    const char32_t low = parse_hex4();
    if (low < 0xDC00 || low > 0xDFFF) {
      data_error(what_, ": byte ", pos_ - 6, ": expected a low surrogate (U+DC00..U+DFFF) ",
                 "after ", code_point_name(unit), ", but got ", code_point_name(low));
    }
    return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }

  std::string parse_string() {
    ++pos_;  // opening '"'
    std::string out;
    while (true) {
      if (at_end()) fail("'\"' to close the string");
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') break;
      if (c < 0x20) fail("a character or an escape (control characters must be escaped)");
      if (c >= 0x80) {  // a multi-byte UTF-8 character: validate, copy as is
        const size_t start = pos_;
        utf8_next(text_, pos_, what_);
        out.append(text_.substr(start, pos_ - start));
        continue;
      }
      ++pos_;
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      switch (peek()) {  // the character after the backslash
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          ++pos_;
          out += utf8_encode(parse_unicode_escape());
          continue;
        default:
          fail("an escape: one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u");
      }
      ++pos_;
    }
    ++pos_;  // closing '"'
    return out;
  }

  void skip_digits() {
    while (at_digit()) ++pos_;
  }

  void parse_number(Json& value) {
    const size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (!at_digit()) fail("a digit");
    if (text_[pos_] == '0') {
      ++pos_;
      if (at_digit()) fail("'.', 'e' or the end of the number after a leading 0");
    } else {
      skip_digits();
    }
    if (peek() == '.') {
      ++pos_;
      if (!at_digit()) fail("a digit after '.'");
      skip_digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!at_digit()) fail("a digit in the exponent");
      skip_digits();
    }
    value.kind = Json::Kind::number;
    value.text = std::string(text_.substr(start, pos_ - start));
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    const auto [end, ec] = std::from_chars(first, last, value.number);
    if (ec != std::errc() || end != last) {
      data_error(what_, ": byte ", start, ": expected a number that fits a double, but got ",
                 value.text);
    }
  }
};

[[noreturn]] void kind_mismatch(const char* expected, Json::Kind got) {
  data_error("json: expected ", expected, ", but got ", json_kind_name(got));
}

}  // namespace

const char* json_kind_name(Json::Kind kind) {
  switch (kind) {
    case Json::Kind::null:
      return "null";
    case Json::Kind::boolean:
      return "a boolean";
    case Json::Kind::number:
      return "a number";
    case Json::Kind::string:
      return "a string";
    case Json::Kind::array:
      return "an array";
    case Json::Kind::object:
      return "an object";
  }
  return "?";
}

const Json* Json::find(std::string_view key) const {
  if (kind != Kind::object) return nullptr;
  for (const auto& [name, value] : members) {
    if (name == key) return &value;
  }
  return nullptr;
}

bool Json::as_bool() const {
  if (kind != Kind::boolean) kind_mismatch("a boolean", kind);
  return boolean;
}

double Json::as_number() const {
  if (kind != Kind::number) kind_mismatch("a number", kind);
  return number;
}

const std::string& Json::as_string() const {
  if (kind != Kind::string) kind_mismatch("a string", kind);
  return text;
}

const std::vector<Json>& Json::as_array() const {
  if (kind != Kind::array) kind_mismatch("an array", kind);
  return items;
}

const std::vector<std::pair<std::string, Json>>& Json::as_object() const {
  if (kind != Kind::object) kind_mismatch("an object", kind);
  return members;
}

std::optional<uint64_t> Json::to_uint64() const {
  if (kind != Kind::number || text.empty()) return std::nullopt;
  uint64_t v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [end, ec] = std::from_chars(first, last, v);  // digits only: no '-', '.', 'e'
  if (ec != std::errc() || end != last) return std::nullopt;
  return v;
}

Json json_parse(std::string_view text, const std::string& what) {
  return Parser(text, what).parse_document();
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t start = pos;
    const char32_t cp = utf8_next(s, pos, "json_quote");
    switch (cp) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
          out += buf;
        } else {
          out.append(s.substr(start, pos - start));
        }
    }
  }
  return out + "\"";
}

}  // namespace poslab
