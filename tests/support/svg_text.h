// svg_text.h — what a test reads back from the SVG our plot writer draws (plot/plot.h).
#pragma once
#include <string>
#include <vector>

namespace poslab::test {

// The words of every <text> of an SVG, its <tspan> exponents included, markup removed
// ("10<tspan>6</tspan>" -> "106"), in document order.
inline std::vector<std::string> svg_texts(const std::string& svg) {
  std::vector<std::string> out;
  for (size_t at = svg.find("<text"); at != std::string::npos; at = svg.find("<text", at + 1)) {
    const size_t body = svg.find('>', at) + 1, end = svg.find("</text>", body);
    std::string t;
    bool in_tag = false;
    for (size_t i = body; i < end; ++i) {
      if (svg[i] == '<' || svg[i] == '>')
        in_tag = svg[i] == '<';
      else if (!in_tag)
        t += svg[i];
    }
    out.push_back(t);
  }
  return out;
}

}  // namespace poslab::test
