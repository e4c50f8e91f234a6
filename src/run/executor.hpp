// The executor: runs one normalised GEMM as its plan says, the GPU's share and the CPU's at once,
// in the order RaijinCL found essential (enqueue all GPU work, flush, then the CPU share, then
// wait on the GPU's events), and falls back to the CPU when the GPU fails.
#pragma once

#include "base/problem.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// Runs p (m, n > 0, k > 0, alpha != 0) under `options`, filling `report`.
template <class T>
void execute(const Problem<T>& p, const Options& options, Report& report);

// Whether execute would send any of p's rows to an OpenCL device under `options`: plans the call
// (opening the devices and reading their profiles) without computing it. The first plan under
// auto from ordinary memory on a discrete device measures that device's feed with a few calls of
// its own (feed_cost.hpp). False when no device can be opened, and under strategy cpu. p's
// pointers are only compared with tandem_malloc memory.
template <class T>
bool uses_devices(const Problem<T>& p, const Options& options);

}  // namespace tandem::detail
