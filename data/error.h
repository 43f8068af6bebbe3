// error.h — how data/ reports bad input.
//
// Every error in data/ is a std::runtime_error whose message names the file (or the
// function), where in it the problem is, and what was expected against what was found:
//   "vocab.json: byte 17: expected ',' or ']', but got 'x'"
// data/ depends on nothing else in poslab, so it carries this one helper itself.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace poslab {

// Concatenates any streamable parts into one message and throws it.
template <class... Args>
[[noreturn]] void data_error(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw std::runtime_error(os.str());
}

}  // namespace poslab
