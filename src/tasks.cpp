// oneTBB behind tasks.hpp: arenas are created once per size and kept.
#include "tasks.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <map>
#include <memory>
#include <mutex>

#include "after_fork.hpp"

namespace tandem::detail::tasks {

// In a child forked after oneTBB's threads started, f runs on the calling thread alone
// (after_fork.hpp).
void in_arena(int threads, const std::function<void()>& f) {
  if (after_fork::threads_lost()) {
    f();
    return;
  }
  after_fork::threads_used();
  static std::mutex& mutex = *new std::mutex;
  static auto& arenas = *new std::map<int, std::unique_ptr<tbb::task_arena>>;
  tbb::task_arena* arena = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = arenas[threads];
    if (!slot) slot = std::make_unique<tbb::task_arena>(threads);
    arena = slot.get();
  }
  arena->execute(f);
}

void parallel_for(int64_t n, const std::function<void(int64_t)>& f) {
  if (after_fork::threads_lost()) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, n, 1),
      [&](const tbb::blocked_range<int64_t>& range) {
        for (int64_t i = range.begin(); i != range.end(); ++i) f(i);
      },
      tbb::simple_partitioner());
}

}  // namespace tandem::detail::tasks
