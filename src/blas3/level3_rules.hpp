// BLAS's rules for the level-3 routines besides gemm (syrk, syr2k, symm, trmm, trsm), in one place
// for src/blas3/level3.cpp, which checks every call and reports its first invalid argument, and the
// drop-in's straight path (src/blas3/dropin/level3_entries.cpp), which hands a valid call below its
// threshold to OpenBLAS's own entry whole. Column-major (Fortran) terms; characters in either
// case. Inline, so the straight path costs a few compares.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tandem::detail::level3_rules {

// The characters each option allows.
inline constexpr char kSide[] = "LR";
inline constexpr char kUplo[] = "UL";
inline constexpr char kTrans[] = "NTC";
inline constexpr char kDiag[] = "UN";

[[gnu::always_inline]] inline char upper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
}

// Whether `c` is the upper-case `letter` in either case: setting bit 5 lowers an upper-case letter,
// and no other character meets a letter's lower case there.
[[gnu::always_inline]] inline bool is(char c, char letter) { return (c | 0x20) == (letter | 0x20); }

// Whether `c` is one of `allowed` (upper-case letters), in either case. Without branches: the
// straight path asks this of every option of every call.
template <std::size_t N>
[[gnu::always_inline]] inline bool allows(const char (&allowed)[N], char c) {
  bool any = false;
  for (std::size_t i = 0; i + 1 < N; ++i) any |= is(c, allowed[i]);
  return any;
}

// The least leading dimension of a matrix of `rows` rows.
template <class I>
[[gnu::always_inline]] inline I least(I rows) {
  return rows > 1 ? rows : I(1);
}

// The rows of syrk's and syr2k's A (and syr2k's B): n x k, or k x n transposed.
template <class I>
[[gnu::always_inline]] inline I rank_rows(char trans, I n, I k) {
  return is(trans, 'N') ? n : k;
}

// The order of symm's, trmm's and trsm's A: m on the left, n on the right.
template <class I>
[[gnu::always_inline]] inline I side_order(char side, I m, I n) {
  return is(side, 'L') ? m : n;
}

// Whether a call has a product to compute and BLAS rules out none of its arguments: such a call
// computes exactly what one CPU BLAS call with the same arguments computes, once C = beta * C is
// done here where beta is 0 (scale below). syr2k passes its B (`two`); syrk none.
template <class T, class I>
[[gnu::always_inline]] inline bool rank_goes(char uplo, char trans, I n, I k, T alpha, const T* a,
                                             I lda, bool two, const T* b, I ldb, const T* c,
                                             I ldc) {
  const I rows = least(rank_rows(trans, n, k));
  return allows(kUplo, uplo) && allows(kTrans, trans) && n > 0 && k > 0 && alpha != T(0) &&
         a != nullptr && lda >= rows && (!two || (b != nullptr && ldb >= rows)) && c != nullptr &&
         ldc >= least(n);
}

template <class T, class I>
[[gnu::always_inline]] inline bool symm_goes(char side, char uplo, I m, I n, T alpha, const T* a,
                                             I lda, const T* b, I ldb, const T* c, I ldc) {
  return allows(kSide, side) && allows(kUplo, uplo) && m > 0 && n > 0 && alpha != T(0) &&
         a != nullptr && lda >= least(side_order(side, m, n)) && b != nullptr && ldb >= least(m) &&
         c != nullptr && ldc >= least(m);
}

// trmm and trsm (B is updated in place; there is no beta).
template <class T, class I>
[[gnu::always_inline]] inline bool triangle_goes(char side, char uplo, char trans, char diag, I m,
                                                 I n, T alpha, const T* a, I lda, const T* b,
                                                 I ldb) {
  return allows(kSide, side) && allows(kUplo, uplo) && allows(kTrans, trans) &&
         allows(kDiag, diag) && m > 0 && n > 0 && alpha != T(0) && a != nullptr &&
         lda >= least(side_order(side, m, n)) && b != nullptr && ldb >= least(m);
}

// C = beta * C over a rows x cols block, or over the triangle of an n x n block (`triangle`: 'L'
// or 'U', upper case; anything else: the whole block); beta = 0 writes zeros without reading C,
// so NaN there does not survive.
template <class T>
void scale(char triangle, int64_t rows, int64_t cols, T beta, T* c, int64_t ldc) {
  if (beta == T(1)) return;
  for (int64_t j = 0; j < cols; ++j) {
    const int64_t i0 = triangle == 'L' ? j : 0;
    const int64_t i1 = triangle == 'U' ? (j + 1 < rows ? j + 1 : rows) : rows;
    T* col = c + j * ldc;
    for (int64_t i = i0; i < i1; ++i) col[i] = beta == T(0) ? T(0) : beta * col[i];
  }
}

}  // namespace tandem::detail::level3_rules
