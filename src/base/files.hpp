// Every file tandem writes or reads by name (profiles, tuning logs, TANDEM_LOG, the tandem
// command's outputs) goes through here, under one rule: only a regular file is written or read,
// never through a symbolic link at the name (for writes), never by waiting on a FIFO or a device,
// and a replaced file is never seen half-written or left behind as a temporary file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace tandem::detail::files {

// Why `path` cannot be written ("" if it can): its directory must exist and be writable, and
// `path` must be absent or a regular file (not a symbolic link, FIFO, device or directory). What
// a command checks before any work.
std::string unwritable(const std::filesystem::path& path);

// Replaces `path` with `text`, whole: a temporary file created exclusively beside it (O_EXCL and
// O_NOFOLLOW, a random name), written, synced and closed with every status checked, then renamed
// over `path`, where `path` is absent or a regular file. On any failure the temporary file is
// removed, `path` is as it was, and std::runtime_error names the path and the reason.
void replace(const std::filesystem::path& path, const std::string& text);

// Appends `text` to `path` in one write(), creating it where absent: a regular file only, never
// through a symbolic link, never waiting on a FIFO. Empty `text` checks and creates alone.
// Throws std::runtime_error naming the path and the reason.
void append(const std::filesystem::path& path, const std::string& text);

// The same rule for a file kept open for appending (TANDEM_LOG): its descriptor (O_APPEND,
// close-on-exec), or -1 with *why set.
int open_append(const std::filesystem::path& path, std::string* why);

// The text of `path`, a regular file (a symbolic link to one is followed: reading writes nothing)
// of at most `max_bytes`, opened without waiting on a FIFO. Throws std::runtime_error naming the
// path and the reason; `what` names the kind of file in the size's ("a profile is at most N").
std::string read(const std::filesystem::path& path, uintmax_t max_bytes, const char* what);

// An exclusive advisory lock (flock) on `path`, a lock file created where absent (mode 0600, a
// regular file, never through a symbolic link, never waiting on a FIFO), held until the object is
// destroyed: what makes reading, changing and replacing a file one step among the threads and
// processes that take the same lock. The lock file stays (removing it would let a later taker
// lock another file). Waits at most `seconds` for another holder: where the file cannot be opened
// or locked in that time (another user's, or held that long) the object holds nothing (held() is
// false), and the caller goes on without it.
class Lock {
 public:
  Lock(const std::filesystem::path& path, double seconds);
  ~Lock();
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace tandem::detail::files
