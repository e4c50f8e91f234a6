// The checks of tandem's calls that report an argument by its value (tandem::Error, C untouched):
// a GEMM's, in one place for tandem::gemm (src/api/gemm.cpp) and each group or problem of a batch
// (src/api/batch.cpp), whose signatures place the same arguments elsewhere.
#pragma once

#include <array>
#include <cstdint>

namespace tandem::detail {

// Where a GEMM's arguments sit in the caller's signature: at[p] for the argument at position p
// of tandem_sgemm's (1-14; 0 unused).
using Positions = std::array<int, 15>;
inline constexpr Positions kGemmPositions = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};

// Throws tandem::Error for the first argument BLAS rules out (gemm_rules::first_invalid decides
// which), named with its value and position `at` gives it; TooLarge for a size or leading
// dimension beyond the CPU BLAS's 32-bit integers.
template <class T>
void check_gemm(int layout, int op_a, int op_b, int64_t m, int64_t n, int64_t k, T alpha,
                const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc,
                const Positions& at = kGemmPositions);

// Throws tandem::Error (at `position`) unless `layout` is row-major or column-major; for an empty
// batch, which has nothing else to check.
void check_layout(int layout, int position = 1);

}  // namespace tandem::detail
