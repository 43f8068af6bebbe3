// json.h — a small, strict JSON reader (RFC 8259) and a string quoter.
//
// Grammar (whitespace = space, tab, LF, CR, allowed between tokens):
//   value  = null | true | false | number | string | array | object
//   number = [ "-" ] ( "0" | [1-9][0-9]* ) [ "." [0-9]+ ] [ ( "e" | "E" ) [ "+" | "-" ] [0-9]+ ]
//   string = '"' { any UTF-8 character except '"', '\' and U+0000..U+001F | escape } '"'
//   escape = \" \\ \/ \b \f \n \r \t | \uXXXX  (a surrogate pair \uD83D\uDE00 is one character)
//   array  = "[" [ value { "," value } ] "]"
//   object = "{" [ string ":" value { "," string ":" value } ] "}"
// The parser is strict where RFC 8259 leaves room: the text is exactly one value (trailing
// garbage is an error), no leading zeros, no NaN/Infinity, no trailing commas, no duplicate
// keys in an object, no lone surrogates, invalid UTF-8 is an error, numbers must fit a double,
// and arrays/objects nest at most 64 deep (so hostile input cannot exhaust the stack).
// Errors read "vocab.json: byte 17: expected ',' or ']', but got 'x'".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace poslab {

struct Json {
  enum class Kind { null, boolean, number, string, array, object };

  Kind kind = Kind::null;
  bool boolean = false;                               // kind == boolean
  double number = 0;                                  // kind == number
  std::string text;                                   // string: its UTF-8 contents;
                                                      // number: the literal as written
  std::vector<Json> items;                            // kind == array
  std::vector<std::pair<std::string, Json>> members;  // kind == object, in file order
  size_t offset = 0;                                  // byte where the value starts

  // Declared here, defaulted in json.cpp: `members` holds pair<string, Json> while Json is
  // still incomplete, and clang with libstdc++ refuses to instantiate the implicit ones here.
  Json();
  Json(const Json&);
  Json(Json&&) noexcept;
  Json& operator=(const Json&);
  Json& operator=(Json&&) noexcept;
  ~Json();

  bool is_null() const { return kind == Kind::null; }
  bool is_bool() const { return kind == Kind::boolean; }
  bool is_number() const { return kind == Kind::number; }
  bool is_string() const { return kind == Kind::string; }
  bool is_array() const { return kind == Kind::array; }
  bool is_object() const { return kind == Kind::object; }

  // The member named key, or nullptr when absent or when this is not an object.
  const Json* find(std::string_view key) const;

  // Typed access; each throws "json: expected a string, but got a number" on a mismatch.
  bool as_bool() const;
  double as_number() const;
  const std::string& as_string() const;
  const std::vector<Json>& as_array() const;
  const std::vector<std::pair<std::string, Json>>& as_object() const;

  // The number as an exact unsigned integer, when it was written as one ("42", not "42.0",
  // "4.2e1" or "-1") and fits 64 bits; nullopt otherwise. Exact even above 2^53.
  std::optional<uint64_t> to_uint64() const;
};

// "null", "a boolean", "a number", ...: how errors name a kind.
const char* json_kind_name(Json::Kind kind);

// Parses one JSON text. `what` names it in errors (usually the file name).
Json json_parse(std::string_view text, const std::string& what);

// The JSON string literal for UTF-8 text: quotes around it; '"' and '\' escaped; control
// characters (U+0000..U+001F, U+007F..U+009F) escaped as \n \t \r \b \f or \u00XX; every
// other character written as raw UTF-8. Throws if s is not valid UTF-8.
std::string json_quote(std::string_view s);

}  // namespace poslab
