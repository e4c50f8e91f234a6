// BLAS's rules for the level-3 routines besides gemm (syrk, syr2k, symm, trmm, trsm, and hemm,
// herk, her2k for the complex types), in one place for src/blas3/level3.cpp, which checks every
// call and reports its first invalid argument, and the drop-in's straight path
// (src/blas3/dropin/level3_entries.cpp), which hands a valid call below its threshold to OpenBLAS's
// own entry whole. Column-major (Fortran) terms; characters in either case. Inline, so the straight
// path costs a few compares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace tandem::detail::level3_rules {

// The characters each option allows. trmm's and trsm's transpose, and a real syrk's and syr2k's
// ('C' is the transpose there), is any of kTrans; a complex syrk and syr2k allow kTransSymmetric
// and herk and her2k kTransHermitian, as the reference BLAS does.
inline constexpr char kSide[] = "LR";
inline constexpr char kUplo[] = "UL";
inline constexpr char kTrans[] = "NTC";
inline constexpr char kTransSymmetric[] = "NT";
inline constexpr char kTransHermitian[] = "NC";
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

// Whether `trans` is one that syrk and syr2k (herk and her2k, where `Hermitian`) allow for T.
template <bool Hermitian, class T>
[[gnu::always_inline]] inline bool rank_trans(char trans) {
  if constexpr (Hermitian)
    return allows(kTransHermitian, trans);
  else if constexpr (std::is_floating_point_v<T>)
    return allows(kTrans, trans);
  else
    return allows(kTransSymmetric, trans);
}

// Whether a call has a product to compute and BLAS rules out none of its arguments: such a call
// computes exactly what one CPU BLAS call with the same arguments computes, once C = beta * C is
// done here where beta is 0 (scale below). syr2k passes its B (`two`); syrk none. herk and her2k
// (`Hermitian`) have their own transposes; herk's alpha (S) is real.
template <bool Hermitian = false, class S, class T, class I>
[[gnu::always_inline]] inline bool rank_goes(char uplo, char trans, I n, I k, S alpha, const T* a,
                                             I lda, bool two, const T* b, I ldb, const T* c,
                                             I ldc) {
  const I rows = least(rank_rows(trans, n, k));
  return allows(kUplo, uplo) && rank_trans<Hermitian, T>(trans) && n > 0 && k > 0 &&
         alpha != S(0) && a != nullptr && lda >= rows && (!two || (b != nullptr && ldb >= rows)) &&
         c != nullptr && ldc >= least(n);
}

// symm and hemm.
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

// As scale, for herk's and her2k's Hermitian C (n x n): beta is real, and the diagonal keeps only
// its real part (beta times it), as the reference BLAS leaves it.
template <class T>
void scale_hermitian(char triangle, int64_t n, typename T::value_type beta, T* c, int64_t ldc) {
  for (int64_t j = 0; j < n; ++j) {
    const int64_t i0 = triangle == 'L' ? j : 0;
    const int64_t i1 = triangle == 'U' ? j + 1 : n;
    T* col = c + j * ldc;
    for (int64_t i = i0; i < i1; ++i)
      col[i] = beta == 0 ? T(0) : T(beta * col[i].real(), i == j ? 0 : beta * col[i].imag());
  }
}

}  // namespace tandem::detail::level3_rules
