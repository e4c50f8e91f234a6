// Process-wide warning and verbose output; one mutex keeps each line whole.
#include "log.hpp"

#include <cstdio>
#include <mutex>
#include <set>

#include "after_fork.hpp"
#include "tandem/tandem.hpp"

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

void log_call(const char* routine, const Report& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s m=%lld n=%lld k=%lld strategy=%s gpu_rows=%lld cpu_rows=%lld cpu_threads=%d "
                "A=%s B=%s C=%s cpu=%.3fms gpu=%.3fms kernel=%.3fms total=%.3fms%s%s",
                routine, static_cast<long long>(r.m), static_cast<long long>(r.n),
                static_cast<long long>(r.k), to_string(r.strategy),
                static_cast<long long>(r.gpu_rows), static_cast<long long>(r.cpu_rows),
                r.cpu_threads, to_string(r.a), to_string(r.b), to_string(r.c),
                r.cpu_seconds() * 1e3, r.gpu_seconds() * 1e3, r.gpu_kernel_seconds * 1e3,
                r.seconds() * 1e3, r.fell_back ? " (GPU failed, CPU fallback)" : "",
                r.profile.empty() ? "" : (" profile=" + r.profile).c_str());
  log_line(line);
}

}  // namespace tandem::detail
