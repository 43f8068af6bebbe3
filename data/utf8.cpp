// utf8.cpp — see utf8.h for the encoding table and what is refused.
#include "data/utf8.h"

#include <cstdio>

#include "data/error.h"

namespace poslab {

namespace {

// "0xe4": how errors name a raw byte.
std::string byte_name(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

bool is_continuation(unsigned char b) {
  return (b & 0xC0) == 0x80;
}

}  // namespace

std::string code_point_name(char32_t code_point) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(code_point));
  return buf;
}

char32_t utf8_next(std::string_view bytes, size_t& pos, const std::string& what) {
  const size_t start = pos;
  const auto lead = static_cast<unsigned char>(bytes[start]);
  if (lead < 0x80) {  // ASCII: the common case
    pos = start + 1;
    return lead;
  }

  // The lead byte says how many continuation bytes follow and carries the top bits.
  size_t n_cont = 0;
  char32_t cp = 0;
  char32_t min_cp = 0;  // smallest code point that needs this many bytes
  if (is_continuation(lead)) {
    data_error(what, ": byte ", start, ": invalid UTF-8: expected the start of a character, ",
               "but got continuation byte ", byte_name(lead));
  } else if ((lead & 0xE0) == 0xC0) {
    n_cont = 1, cp = lead & 0x1F, min_cp = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    n_cont = 2, cp = lead & 0x0F, min_cp = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    n_cont = 3, cp = lead & 0x07, min_cp = 0x10000;
  } else {
    data_error(what, ": byte ", start, ": invalid UTF-8: byte ", byte_name(lead),
               " never occurs in UTF-8");
  }

  for (size_t k = 1; k <= n_cont; ++k) {
    if (start + k >= bytes.size()) {
      data_error(what, ": byte ", start, ": invalid UTF-8: truncated sequence: lead byte ",
                 byte_name(lead), " expects ", n_cont, " continuation byte(s), but the input ",
                 "ends after ", k - 1);
    }
    const auto b = static_cast<unsigned char>(bytes[start + k]);
    if (!is_continuation(b)) {
      data_error(what, ": byte ", start, ": invalid UTF-8: truncated sequence: lead byte ",
                 byte_name(lead), " expects ", n_cont, " continuation byte(s), but got ",
                 byte_name(b), " at byte ", start + k);
    }
    cp = (cp << 6) | (b & 0x3F);
  }

  if (cp < min_cp) {
    data_error(what, ": byte ", start, ": invalid UTF-8: overlong encoding of ",
               code_point_name(cp), " in ", n_cont + 1, " bytes");
  }
  if (cp >= 0xD800 && cp <= 0xDFFF) {
    data_error(what, ": byte ", start, ": invalid UTF-8: encoded surrogate ", code_point_name(cp),
               " (surrogates are not characters)");
  }
  if (cp > 0x10FFFF) {
    data_error(what, ": byte ", start, ": invalid UTF-8: code point ", code_point_name(cp),
               " is above U+10FFFF");
  }
  pos = start + 1 + n_cont;
  return cp;
}

std::vector<char32_t> utf8_decode(std::string_view bytes, const std::string& what) {
  std::vector<char32_t> out;
  out.reserve(bytes.size());  // an upper bound: at least one byte per code point
  size_t pos = 0;
  while (pos < bytes.size()) out.push_back(utf8_next(bytes, pos, what));
  return out;
}

std::string utf8_encode(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      data_error("utf8_encode: expected a Unicode scalar value, but got surrogate ",
                 code_point_name(cp));
    }
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp <= 0x10FFFF) {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    data_error("utf8_encode: expected a code point up to U+10FFFF, but got ", code_point_name(cp));
  }
  return out;
}

}  // namespace poslab
