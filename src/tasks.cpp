// oneTBB behind tasks.hpp: arenas are created once per size and kept, never larger than oneTBB
// can staff.
#include "tasks.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "after_fork.hpp"

#if TANDEM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace tandem::detail::tasks {
namespace {

// The threads an arena asked for `threads` can have. Callers count the machine's cores (hwloc),
// but oneTBB staffs its arenas from a pool of workers sized by the affinity mask it read when it
// started (under mpirun, the one core the rank is bound to; under taskset, the cores it names), or
// by a global_control the program set: global_control's active value is that number. The first
// arena fixes the pool at max(mask - 1, its own workers): an arena of 1 (a CPU share on the one
// core OpenBLAS sees) left it at 0 workers, and the next arena of 2 (host packing, sized from
// hwloc) printed "TBB Warning: The number of workers is currently limited to 0" and ran on its
// calling thread alone anyway. Asking for no more than the pool avoids the warning, and never
// oversubscribes the cores the process was given.
int staffed(int threads) {
  const size_t most =
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  return static_cast<int>(
      std::clamp<size_t>(static_cast<size_t>(std::max(threads, 1)), 1, std::max<size_t>(most, 1)));
}

}  // namespace

namespace {

// ThreadSanitizer (scripts/sanitize.sh thread) cannot see oneTBB's synchronisation: Debian's
// libtbb is not instrumented, and neither is the oneTBB code inlined here
// (tests/sanitizers/tsan_ignorelist.txt). These tell it the two orders oneTBB guarantees: what
// the caller did before a loop happens before each of its tasks, and every task before the caller
// goes on. Without them each loop is a false race between the caller and the tasks (a
// std::function destroyed after the loop against a task that called it); with them, races
// between tandem's own tasks are still reported.
struct Orders {
#if TANDEM_TSAN
  char before = 0, after = 0;
  void caller_starts() { __tsan_release(&before); }
  void task_starts() { __tsan_acquire(&before); }
  void task_ends() { __tsan_release(&after); }
  void caller_goes_on() { __tsan_acquire(&after); }
#else
  void caller_starts() {}
  void task_starts() {}
  void task_ends() {}
  void caller_goes_on() {}
#endif
};

}  // namespace

// In a child forked after oneTBB's threads started, f runs on the calling thread alone
// (after_fork.hpp).
void in_arena(int threads, const std::function<void()>& f) {
  if (after_fork::threads_lost()) {
    f();
    return;
  }
  after_fork::threads_used();
  threads = staffed(threads);
  static std::mutex& mutex = *new std::mutex;
  static auto& arenas = *new std::map<int, std::unique_ptr<tbb::task_arena>>;
  tbb::task_arena* arena = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = arenas[threads];
    if (!slot) slot = std::make_unique<tbb::task_arena>(threads);
    arena = slot.get();
  }
  Orders orders;
  orders.caller_starts();
  arena->execute([&] {
    orders.task_starts();
    f();
    orders.task_ends();
  });
  orders.caller_goes_on();
}

void parallel_for(int64_t n, const std::function<void(int64_t)>& f) {
  if (after_fork::threads_lost()) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  Orders orders;
  orders.caller_starts();
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, n, 1),
      [&](const tbb::blocked_range<int64_t>& range) {
        orders.task_starts();
        for (int64_t i = range.begin(); i != range.end(); ++i) f(i);
        orders.task_ends();
      },
      tbb::simple_partitioner());
  orders.caller_goes_on();
}

}  // namespace tandem::detail::tasks
