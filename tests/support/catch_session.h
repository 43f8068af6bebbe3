// Catch2's session, for a test program's main. Catch2 itself (its whole implementation) is
// compiled once, in tests/catch_impl.cpp, and linked into every test program; a main calls this
// instead of compiling Catch2 again (Catch2 v2 declares Catch::Session only beside its
// implementation).
#pragma once

namespace poslab::test {

// Catch::Session().run(argc, argv): runs the test cases the arguments select; returns the exit
// status of a test program, 0 when all of them passed.
int run_catch_session(int argc, char** argv);

}  // namespace poslab::test
