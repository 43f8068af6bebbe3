// xml_check.h — a small XML well-formedness check for the SVG the plots and the report write.
#pragma once
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

namespace report_test {

// A tiny XML well-formedness checker, enough for what plot.cpp writes: an optional <?xml ?>
// declaration, then exactly one root element; tags balance; attributes are name="value" with
// no '<' in the value; '&' only starts one of the five named entities or &#N;. Returns "" if
// the document is well-formed, otherwise what is wrong and where.
inline bool entity_ok(const std::string& doc, size_t i) {  // doc[i] == '&'
  for (const char* e : {"&lt;", "&gt;", "&amp;", "&quot;", "&apos;"}) {
    if (doc.compare(i, std::strlen(e), e) == 0) return true;
  }
  size_t k = i + 2;
  while (k < doc.size() && std::isdigit(static_cast<unsigned char>(doc[k]))) ++k;
  return doc.compare(i, 2, "&#") == 0 && k > i + 2 && k < doc.size() && doc[k] == ';';
}

inline bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '.' ||
         c == '-' || static_cast<unsigned char>(c) >= 0x80;
}

// The attributes of <name ...> from k up to the tag's end: "" if well-formed.
inline std::string attributes_error(const std::string& doc, size_t k, size_t end,
                                    const std::string& name) {
  while (true) {
    while (k < end && doc[k] == ' ') ++k;
    if (k == end || (doc[k] == '/' && k + 1 == end)) return "";
    const size_t attr = k;
    while (k < end && name_char(doc[k])) ++k;
    if (k == attr || doc.compare(k, 2, "=\"") != 0) {
      return "malformed attribute in <" + name + "> at " + std::to_string(attr);
    }
    const size_t close = doc.find('"', k + 2);
    if (close == std::string::npos || close > end) return "unclosed value at " + std::to_string(k);
    for (size_t c = k + 2; c < close; ++c) {
      if (doc[c] == '<') return "'<' in an attribute value at " + std::to_string(c);
      if (doc[c] == '&' && !entity_ok(doc, c))
        return "bad '&' in an attribute at " + std::to_string(c);
    }
    k = close + 1;
  }
}

inline std::string xml_error(const std::string& doc) {
  std::vector<std::string> open;
  int roots = 0;
  size_t i = doc.rfind("<?xml", 0) == 0 ? doc.find("?>") + 2 : 0;
  while (i < doc.size()) {
    if (doc[i] != '<') {  // character data: only allowed inside the root
      if (doc[i] == '&' && !entity_ok(doc, i)) return "bad '&' at " + std::to_string(i);
      if (doc[i] == '>') return "raw '>' in text at " + std::to_string(i);
      if (open.empty() && !std::isspace(static_cast<unsigned char>(doc[i]))) {
        return "text outside the root at " + std::to_string(i);
      }
      ++i;
      continue;
    }
    const size_t end = doc.find('>', i);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(i);
    if (doc[i + 1] == '/') {  // </name>
      const std::string name = doc.substr(i + 2, end - i - 2);
      if (open.empty() || open.back() != name) {
        return "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">");
      }
      open.pop_back();
      i = end + 1;
      continue;
    }
    // <name a="v" ...> or <name a="v" .../>
    size_t k = i + 1;
    while (k < end && name_char(doc[k])) ++k;
    const std::string name = doc.substr(i + 1, k - i - 1);
    if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) {
      return "bad element name at " + std::to_string(i);
    }
    if (std::string e = attributes_error(doc, k, end, name); !e.empty()) return e;
    if (open.empty() && ++roots > 1) return "second root element <" + name + ">";
    if (doc[end - 1] != '/') open.push_back(name);
    i = end + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return roots == 1 ? "" : "no root element";
}

}  // namespace report_test
