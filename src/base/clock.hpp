// The one clock tandem times things with: the steady clock, as nanoseconds since its epoch (what
// tandem::Report's timestamps hold) or as seconds elapsed since a start.
#pragma once

#include <chrono>
#include <cstdint>

namespace tandem::detail::clock {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Seconds since construction (or the last restart()).
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  void restart() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tandem::detail::clock
