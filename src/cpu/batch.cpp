// A batch of products on the CPU (src/cpu/batch.hpp).
#include "cpu/batch.hpp"

#include <algorithm>

#include "base/precision.hpp"
#include "cpu/blas.hpp"
#include "cpu/tasks.hpp"

namespace tandem::detail {
namespace {

template <class T>
void run(const Problem<T>& p) {
  if (p.m == 0 || p.n == 0) return;
  if (p.k == 0 || p.alpha == T(0)) {
    scale(p.c, p.m, p.n, p.ldc, p.beta);
    return;
  }
  cpu_blas::gemm(p.op_a(), p.op_b(), p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, p.c,
                 p.ldc);
}

// Tasks per thread: enough that threads which draw larger problems (a grouped batch's) are
// balanced by the others taking more tasks, few enough that a task's overhead stays small
// beside thousands of tiny products.
constexpr int64_t kTasksPerThread = 16;

}  // namespace

template <class T>
void cpu_batch(const std::vector<Problem<T>>& problems, int threads) {
  const auto count = static_cast<int64_t>(problems.size());
  if (count == 0) return;
  // Fewer problems than threads: one at a time, each on every thread (what a single call does),
  // rather than some cores idle. OpenBLAS's thread count is process-wide, so problems on several
  // threads each could not run side by side.
  if (count < threads) {
    cpu_blas::Threads all(threads);
    for (const Problem<T>& p : problems) run(p);
    return;
  }
  cpu_blas::Threads one(1);
  const int64_t tasks = std::min<int64_t>(count, kTasksPerThread * threads);
  tasks::in_arena(threads, [&] {
    tasks::parallel_for(tasks, [&](int64_t t) {
      for (int64_t i = count * t / tasks; i < count * (t + 1) / tasks; ++i) run(problems[i]);
    });
  });
}

#define INSTANTIATE(T) template void cpu_batch<T>(const std::vector<Problem<T>>&, int);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail
