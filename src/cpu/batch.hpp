// A batch of products on the CPU: each problem whole on one core (a single-threaded CPU BLAS call),
// the problems dealt over the cores, where a loop of multi-threaded calls would pay each call's
// threading on products too small to share.
#pragma once

#include <cstdint>
#include <vector>

#include "base/problem.hpp"

namespace tandem::detail {

// Computes every problem of `problems` (valid, row-major) on `threads` threads: each whole on one
// core; a batch of one as one call on every thread; where there are fewer problems than threads,
// each cut into bands of its rows, a band to a core. A
// problem without a product (k or alpha 0) is C = beta * C, A and B unread; beta 0 never reads C.
// A problem whose m, n and k are all at most `small_edge` runs whole on the cores' small kernel
// (cpu/small_kernel.hpp), also where the others are cut into bands; any other as a CPU BLAS call
// (the edge is data: profile::cores_small_edge). A batch of one is the single call it would be.
template <class T>
void cpu_batch(const Problem<T>* problems, int64_t count, int threads, int64_t small_edge);
template <class T>
void cpu_batch(const std::vector<Problem<T>>& problems, int threads, int64_t small_edge) {
  cpu_batch(problems.data(), static_cast<int64_t>(problems.size()), threads, small_edge);
}

}  // namespace tandem::detail
