// The CPU share: one OpenBLAS call on the arena's threads, column panels for a thin band beside
// the GPU, or (seam cpu_mode) row panels of single-threaded calls.
#include "cpu/share.hpp"

#include <algorithm>

#include "base/precision.hpp"
#include "base/seams.hpp"
#include "cpu/blas.hpp"
#include "cpu/tasks.hpp"

namespace tandem::detail {
namespace {

// A hybrid's CPU share with fewer rows than this per thread is cut into column panels: OpenBLAS
// 0.3.21 gives each of its threads a band of rows (32 or more), so a share of 256 rows used 8 of
// 15 threads and ran at half the CPU's rate beside the H100 (docs/PERFORMANCE.md).
constexpr int64_t kRowsPerThread = 64;
constexpr int64_t kPanelColumns = 64;  // panel widths are multiples of this

// One single-threaded call per panel of columns, each on all the share's rows.
template <class T>
void column_panels(const Problem<T>& p, int64_t row0, int64_t rows, int threads, int64_t panels) {
  const T* a = p.trans_a ? p.a + row0 : p.a + row0 * p.lda;
  const int64_t units =
      p.n / kPanelColumns;  // whole panels of kPanelColumns; the last takes the rest
  cpu_blas::Threads scope(1);
  tasks::in_arena(threads, [&] {
    tasks::parallel_for(panels, [&](int64_t i) {
      const int64_t j0 = units * i / panels * kPanelColumns;
      const int64_t j1 = i + 1 == panels ? p.n : units * (i + 1) / panels * kPanelColumns;
      const T* b = p.trans_b ? p.b + j0 * p.ldb : p.b + j0;
      cpu_blas::gemm(p.op_a(), p.op_b(), rows, j1 - j0, p.k, p.alpha, a, p.lda, b, p.ldb, p.beta,
                     p.c + row0 * p.ldc + j0, p.ldc);
    });
  });
}

}  // namespace

template <class T>
void cpu_rows(const Problem<T>& p, int64_t r0, int64_t count) {
  const T* a = p.trans_a ? p.a + r0 : p.a + r0 * p.lda;
  cpu_blas::gemm(p.op_a(), p.op_b(), count, p.n, p.k, p.alpha, a, p.lda, p.b, p.ldb, p.beta,
                 p.c + r0 * p.ldc, p.ldc);
}

template <class T>
void cpu_share(const Problem<T>& p, int64_t row0, int64_t rows, int threads, bool beside_gpu) {
  if (rows <= 0) return;
  const bool single_call = seams::cpu_mode() == seams::CpuMode::SingleCall;
  const int64_t panels = std::min<int64_t>(threads, p.n / kPanelColumns);
  if (beside_gpu && single_call && rows < kRowsPerThread * threads && panels > 1) {
    column_panels(p, row0, rows, threads, panels);
    return;
  }
  if (single_call || threads == 1) {
    cpu_blas::Threads scope(threads);
    tasks::in_arena(threads, [&] { cpu_rows(p, row0, rows); });
    return;
  }
  cpu_blas::Threads scope(1);
  const int64_t bands = std::min<int64_t>(threads, rows);
  tasks::in_arena(threads, [&] {
    tasks::parallel_for(bands, [&](int64_t i) {
      const int64_t begin = row0 + rows * i / bands, end = row0 + rows * (i + 1) / bands;
      cpu_rows(p, begin, end - begin);
    });
  });
}

#define INSTANTIATE(T)                                            \
  template void cpu_rows<T>(const Problem<T>&, int64_t, int64_t); \
  template void cpu_share<T>(const Problem<T>&, int64_t, int64_t, int, bool);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail
