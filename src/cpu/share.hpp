// The CPU's share of a GEMM: a band of C's rows on the CPU BLAS, inside a oneTBB arena of a
// given size.
#pragma once

#include <cstdint>

#include "base/problem.hpp"

namespace tandem::detail {

// Rows [row0, row0 + rows) of a product's C as one CPU BLAS call on the thread count currently
// set.
template <class T>
void cpu_rows(const Problem<T>& p, int64_t row0, int64_t rows);

// Rows [row0, row0 + rows) of C on `threads` CPU BLAS threads. `beside_gpu`: the rest of C is the
// GPU's, so a thin band is cut into column panels rather than left to OpenBLAS's row split.
template <class T>
void cpu_share(const Problem<T>& p, int64_t row0, int64_t rows, int threads, bool beside_gpu);

}  // namespace tandem::detail
