// The one rule for files written and read by name (files.hpp), on POSIX calls: what std::ofstream
// cannot say (follow no symbolic link, create exclusively, open without blocking, check the kind
// of file it opened, report a failed close).
#include "base/files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>

namespace tandem::detail::files {
namespace fs = std::filesystem;

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Why `path` may not be written in place: "" where it is absent or a regular file. lstat, so that
// a link is refused rather than followed, and no device or FIFO is ever opened to find out.
std::string not_regular(const fs::path& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? "" : std::strerror(errno);
  return S_ISREG(st.st_mode) ? "" : std::string("it is ") + kind_of(st.st_mode);
}

fs::path directory_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

[[noreturn]] void cannot_write(const fs::path& path, const std::string& why) {
  throw std::runtime_error("cannot write " + path.string() + ": " + why);
}

// The whole of `text`; false with errno set where a write failed (a full disk: ENOSPC).
bool write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// A file beside `path`, created exclusively under a name no one can have planted a link at in
// advance: ".NAME.<random>.tmp". Its descriptor, its name in *tmp.
int create_temporary(const fs::path& path, fs::path* tmp) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  for (int attempt = 0; attempt < 100; ++attempt) {
    char tail[32];
    std::snprintf(tail, sizeof tail, ".%016llx.tmp", static_cast<unsigned long long>(random()));
    *tmp = directory_of(path) / ("." + path.filename().string() + tail);
    const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

}  // namespace

std::string unwritable(const fs::path& path) {
  if (path.empty()) return "no file named";
  const fs::path dir = directory_of(path);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "no directory " + dir.string();
  if (::access(dir.c_str(), W_OK) != 0) return dir.string() + " is not writable";
  return not_regular(path);
}

void replace(const fs::path& path, const std::string& text) {
  if (const std::string why = not_regular(path); !why.empty()) cannot_write(path, why);
  fs::path tmp;
  const int fd = create_temporary(path, &tmp);
  if (fd < 0)
    cannot_write(path, "no temporary file in " + directory_of(path).string() + " (" +
                           std::strerror(errno) + ")");
  // Synced before the rename, so that a crash leaves the old file or the new one, never an empty
  // one in its place; closed with its status read, where a network filesystem reports errors.
  bool written = write_all(fd, text) && ::fsync(fd) == 0;
  int error = errno;
  if (::close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  std::string why = written ? not_regular(path) : std::strerror(error);
  if (why.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) why = std::strerror(errno);
  if (!why.empty()) {
    ::unlink(tmp.c_str());
    cannot_write(path, why);
  }
}

int open_append(const fs::path& path, std::string* why) {
  *why = not_regular(path);
  if (!why->empty()) return -1;
  // O_NOFOLLOW and O_NONBLOCK for what lstat could not see: a link or a FIFO put there since.
  const int fd = ::open(path.c_str(),
                        O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    *why = not_regular(path);
    if (why->empty()) *why = std::strerror(errno);
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0)
    *why = std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    *why = std::string("it is ") + kind_of(st.st_mode);
  if (!why->empty()) {
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, O_APPEND);  // a regular file: blocking or not is the same, said plainly
  return fd;
}

void append(const fs::path& path, const std::string& text) {
  std::string why;
  const int fd = open_append(path, &why);
  if (fd < 0) cannot_write(path, why);
  bool written = write_all(fd, text);
  int error = errno;
  if (::close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  if (!written) cannot_write(path, std::strerror(error));
}

std::string read(const fs::path& path, uintmax_t max_bytes, const char* what) {
  const auto fail = [&](const std::string& why) {
    throw std::runtime_error("cannot read " + path.string() + ": " + why);
  };
  // Checked before opening (no FIFO or device is opened to find out) and again on what was opened,
  // should the name have changed hands in between.
  const auto check = [&](const struct stat& st) {
    if (!S_ISREG(st.st_mode))
      throw std::runtime_error(path.string() + " is not a regular file (it is " +
                               kind_of(st.st_mode) + ")");
    if (static_cast<uintmax_t>(st.st_size) > max_bytes)
      throw std::runtime_error(path.string() + " is " + std::to_string(st.st_size) +
                               " bytes: " + what + " is at most " + std::to_string(max_bytes));
  };
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) fail(std::strerror(errno));
  check(st);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(std::strerror(errno));
  std::string text;
  try {
    if (::fstat(fd, &st) != 0) fail(std::strerror(errno));
    check(st);
    text.reserve(static_cast<size_t>(st.st_size));
    char block[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, block, sizeof block);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(std::strerror(errno));
      if (n == 0) break;
      text.append(block, static_cast<size_t>(n));
      if (text.size() > max_bytes)  // it grew since
        fail(std::string("it grew past ") + std::to_string(max_bytes) + " bytes, and " + what +
             " is at most that");
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

Lock::Lock(const fs::path& path, double seconds) {
  if (!not_regular(path).empty()) return;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd_ < 0) return;
  struct stat st;
  int locked = -1;
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    // Polled, not a blocking flock: a holder that never lets go (another user's process that
    // opened the file) costs `seconds`, not the caller's whole run.
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while ((locked = ::flock(fd_, LOCK_EX | LOCK_NB)) != 0 &&
           (errno == EINTR || errno == EWOULDBLOCK) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (locked != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

Lock::~Lock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
}

}  // namespace tandem::detail::files
