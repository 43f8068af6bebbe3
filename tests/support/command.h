// command.h — run a shell command from a test, as a user runs the program: its output (standard
// output and error together) and its exit status.
#pragma once
#include <cstdio>
#include <string>

namespace poslab::test {

// The standard output and error of a shell command; its exit status (pclose's) in *status.
inline std::string output_of(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return *status = -1, out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  *status = ::pclose(p);
  return out;
}

}  // namespace poslab::test
