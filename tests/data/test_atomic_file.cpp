// test_atomic_file.cpp — write_file_atomic leaves either the old file or the new one, and
// never a temporary file; read_file reports what is wrong.
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "data/atomic_file.h"
#include "tests/support/temp_dir.h"

using namespace poslab;
using Catch::Contains;

namespace {
// Names in dir, so a test can see that no "*.tmp.<pid>" was left behind.
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}
}  // namespace

TEST_CASE("atomic_file: write then read round-trips, overwrite replaces", "[data][file]") {
  test::TempDir dir;
  const std::string path = dir.file("a.bin");
  const std::string bytes("x\0y\n\xFF", 5);
  write_file_atomic(path, bytes);
  CHECK(read_file(path) == bytes);
  write_file_atomic(path, "second");
  CHECK(read_file(path) == "second");
  write_file_atomic(path, "");
  CHECK(read_file(path).empty());
  CHECK(names_in(dir.path()) == std::vector<std::string>{"a.bin"});

  const std::string big(3'000'000, 'q');  // more than one read() chunk
  write_file_atomic(path, big);
  CHECK(read_file(path) == big);
}

TEST_CASE("atomic_file: failures name the path and the reason", "[data][file]") {
  test::TempDir dir;
  const std::string missing_dir = dir.file("no/such/dir/f.bin");
  REQUIRE_THROWS_WITH(write_file_atomic(missing_dir, "x"),
                      Contains(missing_dir) && Contains("No such file or directory"));
  REQUIRE_THROWS_WITH(read_file(dir.file("nope")),
                      Contains(dir.file("nope") + ": cannot open: No such file or directory"));
  REQUIRE_THROWS_WITH(read_file(dir.path()), Contains("cannot read: Is a directory"));

  // rename() cannot replace a non-empty directory: the temporary file must be cleaned up.
  const std::string target = dir.file("d");
  std::filesystem::create_directories(target + "/inside");
  REQUIRE_THROWS_WITH(write_file_atomic(target, "x"), Contains(target + ": cannot rename"));
  CHECK(names_in(dir.path()) == std::vector<std::string>{"d"});
}

TEST_CASE("atomic_file: a full disk leaves the old file intact and no temporary file",
          "[data][file]") {
  test::TempDir dir;
  const std::string path = dir.file("ckpt");
  write_file_atomic(path, "old contents");

  // Simulate a full disk: a file-size limit makes write() fail with EFBIG.
  struct rlimit saved {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 1000;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string message;
  try {
    write_file_atomic(path, std::string(100000, 'n'));
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);

  CHECK_THAT(message, Contains(path + ": cannot write") && Contains("File too large"));
  CHECK(read_file(path) == "old contents");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"ckpt"});
}
