// utf8.h — strict UTF-8 decoding and encoding (RFC 3629).
//
// A code point U is written in 1 to 4 bytes:
//   U+0000..U+007F     0xxxxxxx
//   U+0080..U+07FF     110xxxxx 10xxxxxx
//   U+0800..U+FFFF     1110xxxx 10xxxxxx 10xxxxxx
//   U+10000..U+10FFFF  11110xxx 10xxxxxx 10xxxxxx 10xxxxxx
// The decoder refuses everything else: a continuation byte (10xxxxxx) where a sequence
// should start, a sequence cut short, an overlong form (a code point written with more
// bytes than it needs, e.g. C0 AF for '/'), the UTF-16 surrogates U+D800..U+DFFF, and
// anything above U+10FFFF. Errors read "<what>: byte 5: invalid UTF-8: ...", where the
// byte offset is the start of the offending sequence.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace poslab {

// Decodes the one code point that starts at bytes[pos] and moves pos past it.
// Requires pos < bytes.size(). `what` names the input in errors (a file name).
char32_t utf8_next(std::string_view bytes, size_t& pos, const std::string& what);

// Decodes a whole byte string into code points.
std::vector<char32_t> utf8_decode(std::string_view bytes, const std::string& what);

// The UTF-8 bytes of one code point; throws for a surrogate or a value above U+10FFFF.
std::string utf8_encode(char32_t code_point);

// Unicode category Cc: the C0 controls, DEL and the C1 controls.
inline bool is_control(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

// "U+00E9": how errors name a code point.
std::string code_point_name(char32_t code_point);

}  // namespace poslab
