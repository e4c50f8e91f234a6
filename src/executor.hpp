// The hybrid executor: splits a row-major GEMM's rows between the GPU and the CPU BLAS and runs
// both at once, in the order RaijinCL found essential (enqueue all GPU work, flush, CPU share on
// the calling thread, wait on the GPU's last event).
#pragma once

#include <cstdint>

#include "problem.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// How the CPU share is run inside its oneTBB arena: one OpenBLAS call using all the arena's
// threads, or row panels, one per arena thread, each a single-threaded OpenBLAS call.
enum class CpuMode { SingleCall, Panels };
CpuMode cpu_mode();
void set_cpu_mode(CpuMode mode);  // for benchmarks that compare the two

// The GPU's rows for a fraction f of m rows: round(f * m), moved to the nearest multiple of the
// kernel's row tile when that keeps both sides non-empty; f = 0 gives 0 and f = 1 gives m.
int64_t gpu_rows(double fraction, int64_t m, int64_t tile);

// Runs p (m, n > 0, k > 0, alpha != 0) under `options`, filling `report`.
template <class T>
void execute(const Problem<T>& p, const Options& options, Report& report);

}  // namespace tandem::detail
