// The one main of the test binaries: Catch2's session over the test cases linked in.
#include "tests/support/catch_session.h"

int main(int argc, char** argv) {
  return poslab::test::run_catch_session(argc, argv);
}
