// A batch of products on the CPU (src/cpu/batch.hpp).
#include "cpu/batch.hpp"

#include <algorithm>

#include "base/precision.hpp"
#include "cpu/blas.hpp"
#include "cpu/share.hpp"
#include "cpu/small_kernel.hpp"
#include "cpu/tasks.hpp"

namespace tandem::detail {
namespace {

// Rows [row0, row0 + rows) of a problem (a band of a row-major C), on the current thread count;
// without a product, C = beta * C.
template <class T>
void run_rows(const Problem<T>& p, int64_t row0, int64_t rows) {
  if (rows <= 0 || p.n == 0) return;
  if (p.has_product())
    cpu_rows(p, row0, rows);
  else
    scale(p.c + row0 * p.ldc, rows, p.n, p.ldc, p.beta);
}

// Whether a problem's product runs on the small kernel: it has one within `small_edge`.
template <class T>
bool takes_small(const Problem<T>& p, int64_t small_edge) {
  return p.has_product() && std::max({p.m, p.n, p.k}) <= small_edge;
}

// A whole problem: on the small kernel where it takes it, else as run_rows.
template <class T>
void run_whole(const Problem<T>& p, int64_t small_edge) {
  if (takes_small(p, small_edge))
    small_product(p);
  else
    run_rows(p, 0, p.m);
}

// Tasks per thread: enough that threads which draw larger problems (a grouped batch's) are
// balanced by the others taking more tasks, few enough that a task's overhead stays small
// beside thousands of tiny products.
constexpr int64_t kTasksPerThread = 16;

}  // namespace

template <class T>
void cpu_batch(const Problem<T>* problems, int64_t count, int threads, int64_t small_edge) {
  if (count <= 0) return;
  // One problem: on every thread, as a single call's CPU share.
  if (count == 1 && threads > 1 && problems[0].has_product()) {
    cpu_share(problems[0], 0, problems[0].m, threads, false);
    return;
  }
  cpu_blas::Threads one(1);
  // One thread: the calling one, one problem after another (no arena to wake).
  if (threads <= 1) {
    for (int64_t i = 0; i < count; ++i) run_whole(problems[i], small_edge);
    return;
  }
  // Fewer problems than threads: each cut into bands of its rows, so that every thread has one
  // (OpenBLAS's thread count is process-wide: calls on several threads each could not run side
  // by side).
  if (count < threads) {
    const int64_t bands = (threads + count - 1) / count;
    tasks::in_arena(threads, [&] {
      tasks::parallel_for(count * bands, [&](int64_t t) {
        const Problem<T>& p = problems[t / bands];
        const int64_t b = t % bands, parts = std::min(bands, std::max<int64_t>(p.m, 1));
        // A product the small kernel takes is too small to cut: whole, in its first band's task.
        if (takes_small(p, small_edge)) {
          if (b == 0) small_product(p);
        } else if (b < parts) {
          run_rows(p, p.m * b / parts, p.m * (b + 1) / parts - p.m * b / parts);
        }
      });
    });
    return;
  }
  const int64_t tasks = std::min<int64_t>(count, kTasksPerThread * threads);
  tasks::in_arena(threads, [&] {
    tasks::parallel_for(tasks, [&](int64_t t) {
      for (int64_t i = count * t / tasks; i < count * (t + 1) / tasks; ++i)
        run_whole(problems[i], small_edge);
    });
  });
}

#define INSTANTIATE(T) template void cpu_batch<T>(const Problem<T>*, int64_t, int, int64_t);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail
