// Catch2's implementation, compiled once for every test program (tests/CMakeLists.txt), and
// the session a main runs (tests/support/catch_session.h): tests/main.cpp's, or a program's
// own (gradcheck/main.cpp, cuda/main.cpp).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/support/catch_session.h"

int poslab::test::run_catch_session(int argc, char** argv) {
  return Catch::Session().run(argc, argv);
}
