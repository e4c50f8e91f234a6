// The cores' small kernel: tandem's own product of one small problem on the calling thread, for
// the cores' batches, where a CPU BLAS call per product does not scale over the cores.
//
// Why: on the H200 host a batch of c 16^3 products ran no faster on 16 threads than on one, where
// s and d gained 6.1-6.4x (docs/PERFORMANCE.md, "The cores' small kernel"). Calls that queue on
// one lock would do this, and OpenBLAS's issues 478, 2575 and 2712 describe such a lock around the
// work buffers its calls take (Debian's 0.3.21 was not traced here). This kernel allocates nothing
// per call: each thread packs op(A) and op(B) into its own planes (the real and imaginary parts
// apart, the conjugates applied) and runs a register-blocked loop over them. Which products take
// it is data (database/defaults.json's cores_small; profile::cores_small_edge).
#pragma once

#include <cstdint>

#include "base/problem.hpp"

namespace tandem::detail {

// The largest edge the data may give the small kernel (profile::cores_small_edge refuses more):
// each thread's planes grow to the largest product it packed, so this bounds them (4 x 128^2
// parts, 256 KiB of floats); a bound, not a tuned value.
inline constexpr int64_t kSmallKernelMax = 128;

// C = alpha op(A) op(B) + beta C for a valid row-major problem with a product (has_product()) whose
// m, n and k are at most kSmallKernelMax, on the calling thread. beta = 0 never reads C.
// Every multiply-add runs in T's precision; the sums run in another order than a CPU BLAS's, so
// results differ from one within rounding.
template <class T>
void small_product(const Problem<T>& p);

}  // namespace tandem::detail
