// BLAS's rules for a GEMM call that need no product, in one place for tandem::gemm
// (src/api/gemm.cpp) and the drop-in's straight path below its threshold
// (src/blas3/dropin/gemm_entries.cpp): which argument is invalid, and C = beta * C when there is
// nothing to multiply. Inline, so the straight path costs a few compares.
#pragma once

#include <algorithm>
#include <cstdint>

#include "base/precision.hpp"
#include "base/problem.hpp"
#include "tandem/tandem.h"

namespace tandem::detail::gemm_rules {

// The smallest leading dimension allowed, and how the reference BLAS states it. I is the
// caller's integer type (the drop-in checks its 32-bit arguments as they come).
template <class I>
struct Least {
  I value;
  const char* rule;
};

template <class I>
Least<I> at_least(I size, const char* rule) {
  return {std::max<I>(1, size), rule};
}

// A stored operand's leading dimension spans a row (row-major) or a column (column-major) of the
// matrix as stored: A is m x k, or k x m when transposed; B is k x n, or n x k.
template <class I>
Least<I> least_lda(bool row, bool ta, I m, I k) {
  return row == !ta ? at_least(k, "max(1, k)") : at_least(m, "max(1, m)");
}
template <class I>
Least<I> least_ldb(bool row, bool tb, I n, I k) {
  return row == !tb ? at_least(n, "max(1, n)") : at_least(k, "max(1, k)");
}
template <class I>
Least<I> least_ldc(bool row, I m, I n) {
  return row ? at_least(n, "max(1, n)") : at_least(m, "max(1, m)");
}

inline bool valid_op(int op) {
  return op == TANDEM_NO_TRANS || op == TANDEM_TRANS || op == TANDEM_CONJ_TRANS;
}

// The position (in tandem_sgemm's signature, 1-based) of the first argument BLAS rules out, in
// signature order, or 0 if there is none. A and B may be NULL when no product is needed (m, n or
// k zero, or alpha zero), C when C is empty.
template <class T, class I>
[[gnu::always_inline]] inline int first_invalid(int layout, int op_a, int op_b, I m, I n, I k,
                                                T alpha, const T* a, I lda, const T* b, I ldb,
                                                const T* c, I ldc) {
  if (layout != TANDEM_ROW_MAJOR && layout != TANDEM_COL_MAJOR) return 1;
  if (!valid_op(op_a)) return 2;
  if (!valid_op(op_b)) return 3;
  if (m < 0) return 4;
  if (n < 0) return 5;
  if (k < 0) return 6;
  const bool row = layout == TANDEM_ROW_MAJOR;
  const bool product = m > 0 && n > 0 && k > 0 && alpha != T(0);
  if (product && a == nullptr) return 8;
  if (lda < least_lda(row, op_a != TANDEM_NO_TRANS, m, k).value) return 9;
  if (product && b == nullptr) return 10;
  if (ldb < least_ldb(row, op_b != TANDEM_NO_TRANS, n, k).value) return 11;
  if (m > 0 && n > 0 && c == nullptr) return 13;
  if (ldc < least_ldc(row, m, n).value) return 14;
  return 0;
}

// C = beta * C (src/base/problem.hpp), here for the straight path and tandem::gemm.
using detail::scale;

// A valid call as the row-major problem every backend sees: a column-major one becomes
// C^T = op(B)^T op(A)^T, and a complex type's conjugate transposes conjugate (for a real one
// TANDEM_CONJ_TRANS is the transpose).
template <class T>
Problem<T> row_major(int layout, int op_a, int op_b, int64_t m, int64_t n, int64_t k, T alpha,
                     const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const bool ta = op_a != TANDEM_NO_TRANS, tb = op_b != TANDEM_NO_TRANS;
  constexpr bool complex = is_complex(precision_of<T>());
  const bool ca = complex && op_a == TANDEM_CONJ_TRANS, cb = complex && op_b == TANDEM_CONJ_TRANS;
  Problem<T> p;
  if (layout == TANDEM_ROW_MAJOR) {
    p = {ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
    p.conj_a = ca;
    p.conj_b = cb;
  } else {
    p = {tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc};
    p.conj_a = cb;
    p.conj_b = ca;
  }
  return p;
}

}  // namespace tandem::detail::gemm_rules
