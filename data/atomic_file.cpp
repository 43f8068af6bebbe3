// atomic_file.cpp — see atomic_file.h for the recipe. POSIX calls, errno-checked.
#include "data/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "data/error.h"

namespace poslab {

namespace {

// The directory that holds path ("." for a bare file name).
std::string parent_directory(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// Writes all of bytes to fd, retrying short writes and EINTR. Returns errno, 0 on success.
int write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

// fsync of the directory makes the rename durable. Some file systems cannot fsync a
// directory (EINVAL); there the rename is as durable as the system allows.
void sync_directory(const std::string& path) {
  const std::string dir = parent_directory(path);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    data_error(path, ": cannot open directory ", dir, " to sync it: ", std::strerror(errno));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL) {
    data_error(path, ": cannot sync directory ", dir, ": ", std::strerror(err));
  }
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) data_error(path, ": cannot create ", tmp, ": ", std::strerror(errno));

  // On any failure: remove the temporary file, then report the step and errno.
  auto fail_step = [&](const std::string& step, int err) {
    ::unlink(tmp.c_str());
    data_error(path, ": ", step, ": ", std::strerror(err));
  };
  if (const int err = write_all(fd, bytes); err != 0) {
    ::close(fd);
    fail_step("cannot write " + tmp, err);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail_step("cannot sync " + tmp, err);
  }
  if (::close(fd) != 0) {
    const int err = errno;  // read before building the message, which may touch errno
    fail_step("cannot close " + tmp, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    fail_step("cannot rename " + tmp + " over it", err);
  }
  sync_directory(path);
}

std::string read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) data_error(path, ": cannot open: ", std::strerror(errno));
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      data_error(path, ": cannot read: ", std::strerror(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace poslab
