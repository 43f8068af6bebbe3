// atomic_file.h — whole-file reads, and writes that never leave a half-written file.
//
// write_file_atomic(path, bytes) follows the usual POSIX recipe:
//   1. write the bytes to "<path>.tmp.<pid>" (same directory, so step 3 is one rename);
//   2. fsync that file, so its contents are on disk before its name is;
//   3. rename() it over <path>: readers see either the old file or the new one, never a mix;
//   4. fsync the directory, so the rename itself survives a crash.
// On any failure (disk full, no permission, missing directory) the temporary file is
// removed and a std::runtime_error names the path and the system's reason (strerror).
#pragma once
#include <string>
#include <string_view>

namespace poslab {

void write_file_atomic(const std::string& path, std::string_view bytes);

// The whole file as bytes; "<path>: cannot open: No such file or directory" when missing.
std::string read_file(const std::string& path);

}  // namespace poslab
