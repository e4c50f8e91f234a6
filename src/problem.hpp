// A GEMM normalised to row-major, as the executor, the GPU share and the CPU share all see it.
#pragma once

#include <cstdint>

namespace tandem::detail {

// C[m x n] = alpha * op(A) * op(B) + beta * C, all row-major with leading dimensions.
template <class T>
struct Problem {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  T alpha{};
  const T* a = nullptr;
  int64_t lda = 0;
  const T* b = nullptr;
  int64_t ldb = 0;
  T beta{};
  T* c = nullptr;
  int64_t ldc = 0;
};

}  // namespace tandem::detail
