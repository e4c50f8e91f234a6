// oneTBB behind tasks.hpp: arenas are created once per size and kept, never larger than oneTBB
// can staff.
#include "cpu/tasks.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "base/after_fork.hpp"

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
// between tandem's own tasks are still reported (the tasks' ends are kept apart from their
// starts, so one task ending orders nothing before another starting). `at` is an address a task
// knows before it reads anything of the caller's; the orders are kept on at and at + 1.
struct Orders {
#if TANDEM_TSAN
  static void* before(const void* at) { return const_cast<void*>(at); }
  static void* after(const void* at) { return static_cast<char*>(before(at)) + 1; }
  static void caller_starts(const void* at) { __tsan_release(before(at)); }
  static void task_starts(const void* at) { __tsan_acquire(before(at)); }
  static void task_ends(const void* at) { __tsan_release(after(at)); }
  static void caller_goes_on(const void* at) { __tsan_acquire(after(at)); }
#else
  static void caller_starts(const void*) {}
  static void task_starts(const void*) {}
  static void task_ends(const void*) {}
  static void caller_goes_on(const void*) {}
#endif
};

// What an arena runs for in_arena. oneTBB may hand it to one of its workers, which finds it on
// the caller's stack; TSan does not know that the caller's earlier frames at those addresses are
// gone. A lambda's captures are read before any statement of its body, so a worker's first read
// (of the reference to f) came before the order it could learn, and was reported as racing with
// the caller's older writes at that stack address (DropIn.ConcurrentCallersSmallAndLarge, 2 of 9
// TSan runs). This object's own address is the one thing the worker has without reading.
class ArenaTask {
 public:
  explicit ArenaTask(const std::function<void()>& f) : f_(f) {}
  void operator()() const {
    Orders::task_starts(this);
    f_();
    Orders::task_ends(this);
  }

 private:
  const std::function<void()>& f_;
};

}  // namespace

// In a child forked after oneTBB's threads started, f runs on the calling thread alone
// (after_fork.hpp).
void in_arena(int threads, const std::function<void()>& f, int lane) {
  if (after_fork::threads_lost()) {
    f();
    return;
  }
  after_fork::threads_used();
  threads = staffed(threads);
  static std::mutex& mutex = *new std::mutex;
  static auto& arenas = *new std::map<std::pair<int, int>, std::unique_ptr<tbb::task_arena>>;
  tbb::task_arena* arena = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = arenas[{lane, threads}];
    if (!slot) slot = std::make_unique<tbb::task_arena>(threads);
    arena = slot.get();
  }
  const ArenaTask task(f);
  Orders::caller_starts(&task);
  arena->execute(task);
  Orders::caller_goes_on(&task);
}

void parallel_for(int64_t n, const std::function<void(int64_t)>& f) {
  if (after_fork::threads_lost()) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  // oneTBB copies the body into its own task objects, written by its uninstrumented code, so
  // a task's read of its copy races with nothing TSan saw; the caller's memory it reads first is
  // f, whose address every copy carries.
  const void* at = &f;
  Orders::caller_starts(at);
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, n, 1),
      [&f, at](const tbb::blocked_range<int64_t>& range) {
        Orders::task_starts(at);
        for (int64_t i = range.begin(); i != range.end(); ++i) f(i);
        Orders::task_ends(at);
      },
      tbb::simple_partitioner());
  Orders::caller_goes_on(at);
}

}  // namespace tandem::detail::tasks
