// Process-wide warning and verbose output; one mutex keeps each line whole.
#include "log.hpp"

#include <cstdio>
#include <mutex>
#include <set>

#include "after_fork.hpp"

namespace tandem::detail {
namespace {
std::mutex& log_mutex() {
  static std::mutex& m = []() -> std::mutex& {
    auto* fresh = new std::mutex;  // never destroyed: a fork handler holds it
    after_fork::hold(*fresh, after_fork::Rank::Log);
    return *fresh;
  }();
  return m;
}
}  // namespace

bool warn_once(const std::string& key, const std::string& message) {
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(log_mutex());
  if (!seen.insert(key).second) return false;
  std::fprintf(stderr, "tandem: warning: %s\n", message.c_str());
  std::fflush(stderr);
  return true;
}

void log_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mutex());
  std::fprintf(stderr, "tandem: %s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace tandem::detail
