// The drop-in's straight path: a valid GEMM call with a product below the threshold jumps from the
// exported entry to OpenBLAS's own, with the caller's arguments untouched. This header holds what
// decides it, in one place: the table the entries read (the threshold, OpenBLAS's GEMM entries of
// every precision, the Fortran transpose characters) and the rule. On x86-64 the GEMM entries of
// every precision are written in assembly (src/blas3/dropin/straight_x86_64.S), which includes
// this header for the table's layout; elsewhere, and as the reference that tests/straight_test.cpp
// holds the assembly to, they are C++ (src/blas3/dropin/gemm_entries.cpp). A complex product is
// counted in real multiply-adds. The other level-3 routines go straight by the same threshold
// (their argument rules in src/blas3/level3_rules.hpp; C++ entries in
// src/blas3/dropin/level3_entries.cpp, assembly ones in the same .S on x86-64) to OpenBLAS's
// entries the table holds after the GEMM ones, the complex ones' hemm, herk and her2k last.
//
// Why assembly: OpenBLAS does a 2^3 call in about 20 ns, so the drop-in has 2 ns to decide. The
// compilers (GCC 12, Clang 14) give a C++ entry that tail-calls with 15 arguments a frame: they
// save registers and rewrite the nine stack-passed arguments with the values already there,
// which by itself costs 1.06-1.10x (docs/PERFORMANCE.md, issue 14 item 3). The assembly checks
// in scratch registers and jumps with the stack and argument registers as it found them.
#pragma once

// The table's layout, for the assembly (static_asserts below keep it true).
#define TANDEM_STRAIGHT_MOST 0
// OpenBLAS's GEMM entries, Fortran then CBLAS, each an array by precision (s, d, c, z).
#define TANDEM_STRAIGHT_OWN_GEMM 8
#define TANDEM_STRAIGHT_OWN_CBLAS_GEMM 40
#define TANDEM_STRAIGHT_OWN_SGEMM (TANDEM_STRAIGHT_OWN_GEMM + 0)
#define TANDEM_STRAIGHT_OWN_DGEMM (TANDEM_STRAIGHT_OWN_GEMM + 8)
#define TANDEM_STRAIGHT_OWN_CGEMM (TANDEM_STRAIGHT_OWN_GEMM + 16)
#define TANDEM_STRAIGHT_OWN_ZGEMM (TANDEM_STRAIGHT_OWN_GEMM + 24)
#define TANDEM_STRAIGHT_OWN_CBLAS_SGEMM (TANDEM_STRAIGHT_OWN_CBLAS_GEMM + 0)
#define TANDEM_STRAIGHT_OWN_CBLAS_DGEMM (TANDEM_STRAIGHT_OWN_CBLAS_GEMM + 8)
#define TANDEM_STRAIGHT_OWN_CBLAS_CGEMM (TANDEM_STRAIGHT_OWN_CBLAS_GEMM + 16)
#define TANDEM_STRAIGHT_OWN_CBLAS_ZGEMM (TANDEM_STRAIGHT_OWN_CBLAS_GEMM + 24)
#define TANDEM_STRAIGHT_FORTRAN_OP 72
// tandem.h's enums, which the assembler cannot read.
#define TANDEM_STRAIGHT_ROW_MAJOR 101
#define TANDEM_STRAIGHT_COL_MAJOR 102
#define TANDEM_STRAIGHT_NO_TRANS 111
#define TANDEM_STRAIGHT_CONJ_TRANS 113
// The other level-3 routines' entries (src/blas3/dropin/straight_x86_64.S): where each
// precision's OpenBLAS entries lie in the table, each entry's place among them, and cblas.h's
// enums.
#define TANDEM_STRAIGHT_LEVEL3_S 1096
#define TANDEM_STRAIGHT_LEVEL3_D 1192
#define TANDEM_STRAIGHT_LEVEL3_C 1288
#define TANDEM_STRAIGHT_LEVEL3_Z 1384
#define TANDEM_STRAIGHT_HERMITIAN_C 1480
#define TANDEM_STRAIGHT_HERMITIAN_Z 1528
#define TANDEM_LEVEL3_SYRK 8
#define TANDEM_LEVEL3_SYR2K 16
#define TANDEM_LEVEL3_SYMM 24
#define TANDEM_LEVEL3_TRMM 32
#define TANDEM_LEVEL3_TRSM 40
#define TANDEM_LEVEL3_CBLAS_SYRK 56
#define TANDEM_LEVEL3_CBLAS_SYR2K 64
#define TANDEM_LEVEL3_CBLAS_SYMM 72
#define TANDEM_LEVEL3_CBLAS_TRMM 80
#define TANDEM_LEVEL3_CBLAS_TRSM 88
#define TANDEM_HERMITIAN_HEMM 0
#define TANDEM_HERMITIAN_HERK 8
#define TANDEM_HERMITIAN_HER2K 16
#define TANDEM_HERMITIAN_CBLAS_HEMM 24
#define TANDEM_HERMITIAN_CBLAS_HERK 32
#define TANDEM_HERMITIAN_CBLAS_HER2K 40
#define TANDEM_STRAIGHT_UPPER 121
#define TANDEM_STRAIGHT_LOWER 122
#define TANDEM_STRAIGHT_NON_UNIT 131
#define TANDEM_STRAIGHT_UNIT 132
#define TANDEM_STRAIGHT_LEFT 141
#define TANDEM_STRAIGHT_RIGHT 142

#ifndef __ASSEMBLER__

#include <complex>
#include <cstddef>
#include <cstdint>

#include "api/gemm_rules.hpp"
#include "base/precision.hpp"
#include "blas3/dropin/blas_entries.hpp"
#include "tandem/tandem.h"

// The table. `most` is the largest work that goes straight, in real multiply-adds: m * n * k for a
// real product, 4 * m * n * k for a complex one (exact, as a 64-bit integer; a product that
// overflows is larger): one less than the threshold, and 0 (no call goes straight) until the
// drop-in has read its settings, under TANDEM_VERBOSE (whose lines the other path writes) and when
// OpenBLAS's entries were not found. It is written last, with release order, so an entry that
// reads it above 0 also reads the entries published before it. `own_gemm` and `own_cblas_gemm`
// hold OpenBLAS's GEMM entries by precision (index_of: s, d, c, z). `fortran_op` maps a Fortran
// transpose character to tandem's op (0 for an invalid one).
struct TandemStraight {
  std::uint64_t most;
  void* own_gemm[tandem::detail::kPrecisionCount];
  void* own_cblas_gemm[tandem::detail::kPrecisionCount];
  int fortran_op[256];
  // OpenBLAS's level-3 entries for the other routines' straight path
  // (src/blas3/dropin/level3_entries.cpp), s and d where the assembly reads them.
  tandem::detail::blas_entries::Level3<float> level3_s;
  tandem::detail::blas_entries::Level3<double> level3_d;
  tandem::detail::blas_entries::Level3<std::complex<float>> level3_c;
  tandem::detail::blas_entries::Level3<std::complex<double>> level3_z;
  tandem::detail::blas_entries::Hermitian<std::complex<float>> hermitian_c;
  tandem::detail::blas_entries::Hermitian<std::complex<double>> hermitian_z;
};
extern "C" TandemStraight tandem_straight __attribute__((visibility("hidden")));

static_assert(offsetof(TandemStraight, most) == TANDEM_STRAIGHT_MOST);
static_assert(offsetof(TandemStraight, own_gemm) == TANDEM_STRAIGHT_OWN_GEMM);
static_assert(offsetof(TandemStraight, own_cblas_gemm) == TANDEM_STRAIGHT_OWN_CBLAS_GEMM);
#define TANDEM_OWN_AT(P, p)                                                           \
  static_assert(TANDEM_STRAIGHT_OWN_##P##GEMM ==                                      \
                    TANDEM_STRAIGHT_OWN_GEMM +                                        \
                        8 * tandem::detail::index_of(tandem::detail::Precision::p) && \
                TANDEM_STRAIGHT_OWN_CBLAS_##P##GEMM ==                                \
                    TANDEM_STRAIGHT_OWN_CBLAS_GEMM +                                  \
                        8 * tandem::detail::index_of(tandem::detail::Precision::p))
TANDEM_OWN_AT(S, s);
TANDEM_OWN_AT(D, d);
TANDEM_OWN_AT(C, c);
TANDEM_OWN_AT(Z, z);
#undef TANDEM_OWN_AT
static_assert(offsetof(TandemStraight, fortran_op) == TANDEM_STRAIGHT_FORTRAN_OP);
static_assert(TANDEM_ROW_MAJOR == TANDEM_STRAIGHT_ROW_MAJOR &&
              TANDEM_COL_MAJOR == TANDEM_STRAIGHT_COL_MAJOR);
static_assert(offsetof(TandemStraight, level3_s) == TANDEM_STRAIGHT_LEVEL3_S);
static_assert(offsetof(TandemStraight, level3_d) == TANDEM_STRAIGHT_LEVEL3_D);
static_assert(offsetof(TandemStraight, level3_c) == TANDEM_STRAIGHT_LEVEL3_C);
static_assert(offsetof(TandemStraight, level3_z) == TANDEM_STRAIGHT_LEVEL3_Z);
static_assert(offsetof(TandemStraight, hermitian_c) == TANDEM_STRAIGHT_HERMITIAN_C);
static_assert(offsetof(TandemStraight, hermitian_z) == TANDEM_STRAIGHT_HERMITIAN_Z);
// Every precision's entries lie alike (each is a pointer), as the assembly reads them.
#define TANDEM_LEVEL3_AT(T, entry, at) \
  static_assert(offsetof(tandem::detail::blas_entries::Level3<T>, entry) == at)
#define TANDEM_LEVEL3_ALL_AT(T)                                \
  TANDEM_LEVEL3_AT(T, syrk, TANDEM_LEVEL3_SYRK);               \
  TANDEM_LEVEL3_AT(T, syr2k, TANDEM_LEVEL3_SYR2K);             \
  TANDEM_LEVEL3_AT(T, symm, TANDEM_LEVEL3_SYMM);               \
  TANDEM_LEVEL3_AT(T, trmm, TANDEM_LEVEL3_TRMM);               \
  TANDEM_LEVEL3_AT(T, trsm, TANDEM_LEVEL3_TRSM);               \
  TANDEM_LEVEL3_AT(T, cblas_syrk, TANDEM_LEVEL3_CBLAS_SYRK);   \
  TANDEM_LEVEL3_AT(T, cblas_syr2k, TANDEM_LEVEL3_CBLAS_SYR2K); \
  TANDEM_LEVEL3_AT(T, cblas_symm, TANDEM_LEVEL3_CBLAS_SYMM);   \
  TANDEM_LEVEL3_AT(T, cblas_trmm, TANDEM_LEVEL3_CBLAS_TRMM);   \
  TANDEM_LEVEL3_AT(T, cblas_trsm, TANDEM_LEVEL3_CBLAS_TRSM)
TANDEM_LEVEL3_ALL_AT(float);
TANDEM_LEVEL3_ALL_AT(double);
TANDEM_LEVEL3_ALL_AT(std::complex<float>);
TANDEM_LEVEL3_ALL_AT(std::complex<double>);
#define TANDEM_HERMITIAN_AT(T)                                                                 \
  static_assert(                                                                               \
      offsetof(tandem::detail::blas_entries::Hermitian<T>, hemm) == TANDEM_HERMITIAN_HEMM &&   \
      offsetof(tandem::detail::blas_entries::Hermitian<T>, herk) == TANDEM_HERMITIAN_HERK &&   \
      offsetof(tandem::detail::blas_entries::Hermitian<T>, her2k) == TANDEM_HERMITIAN_HER2K && \
      offsetof(tandem::detail::blas_entries::Hermitian<T>, cblas_hemm) ==                      \
          TANDEM_HERMITIAN_CBLAS_HEMM &&                                                       \
      offsetof(tandem::detail::blas_entries::Hermitian<T>, cblas_herk) ==                      \
          TANDEM_HERMITIAN_CBLAS_HERK &&                                                       \
      offsetof(tandem::detail::blas_entries::Hermitian<T>, cblas_her2k) ==                     \
          TANDEM_HERMITIAN_CBLAS_HER2K)
TANDEM_HERMITIAN_AT(std::complex<float>);
TANDEM_HERMITIAN_AT(std::complex<double>);
#undef TANDEM_HERMITIAN_AT
#undef TANDEM_LEVEL3_ALL_AT
#undef TANDEM_LEVEL3_AT
static_assert(CblasUpper == TANDEM_STRAIGHT_UPPER && CblasLower == TANDEM_STRAIGHT_LOWER &&
              CblasNonUnit == TANDEM_STRAIGHT_NON_UNIT && CblasUnit == TANDEM_STRAIGHT_UNIT &&
              CblasLeft == TANDEM_STRAIGHT_LEFT && CblasRight == TANDEM_STRAIGHT_RIGHT);
static_assert(TANDEM_NO_TRANS == TANDEM_STRAIGHT_NO_TRANS &&
              TANDEM_TRANS == TANDEM_STRAIGHT_NO_TRANS + 1 &&
              TANDEM_CONJ_TRANS == TANDEM_STRAIGHT_CONJ_TRANS);

namespace tandem::detail::dropin::straight {

// Stores OpenBLAS's GEMM entries of one precision (null where not found), before publish().
void publish_gemm(Precision precision, void* fortran, void* cblas);

// Publishes the threshold (work below it goes straight), once, after the entries and before any
// call goes straight.
void publish(double threshold);

inline std::uint64_t most() { return __atomic_load_n(&tandem_straight.most, __ATOMIC_ACQUIRE); }

// Stores OpenBLAS's level-3 entries, each found with `find` by name (null where it is not), before
// publish() publishes the bound: a caller that reads a bound above 0 reads them too.
void publish_level3(void* (*find)(const char* name));

// The precisions' other level-3 entries in the table: a precision is a row here, beside its
// fields in the table (and, for s and d, their offsets, for the assembly).
template <class T>
struct Row;
#define TANDEM_STRAIGHT_ROW(T, p)                               \
  template <>                                                   \
  struct Row<T> {                                               \
    static constexpr auto level3 = &TandemStraight::level3_##p; \
  };
TANDEM_STRAIGHT_ROW(float, s)
TANDEM_STRAIGHT_ROW(double, d)
TANDEM_STRAIGHT_ROW(std::complex<float>, c)
TANDEM_STRAIGHT_ROW(std::complex<double>, z)
#undef TANDEM_STRAIGHT_ROW
template <class T>
struct HermitianRow;
#define TANDEM_STRAIGHT_ROW(T, p)                                     \
  template <>                                                         \
  struct HermitianRow<T> {                                            \
    static constexpr auto hermitian = &TandemStraight::hermitian_##p; \
  };
TANDEM_STRAIGHT_ROW(std::complex<float>, c)
TANDEM_STRAIGHT_ROW(std::complex<double>, z)
#undef TANDEM_STRAIGHT_ROW

// Those entries, and OpenBLAS's GEMM entries of any precision, for a caller that has read a bound
// above 0.
template <class T>
const tandem::detail::blas_entries::Level3<T>& level3() {
  return tandem_straight.*Row<T>::level3;
}
template <class T>
const tandem::detail::blas_entries::Hermitian<T>& hermitian() {
  return tandem_straight.*HermitianRow<T>::hermitian;
}
template <class T>
void* own_gemm() {
  return tandem_straight.own_gemm[index_of(precision_of<T>())];
}
template <class T>
void* own_cblas_gemm() {
  return tandem_straight.own_cblas_gemm[index_of(precision_of<T>())];
}

// The threshold's measure of a product of T: its real multiply-adds per m * n * k, 1 for a real
// type and 4 for a complex one (four real products and their sums), so that one threshold means
// the same work in every precision.
template <class T>
inline constexpr std::uint64_t kWorkPerMultiplyAdd =
    static_cast<std::uint64_t>(flops_per_multiply_add(precision_of<T>()) / 2);

// A Fortran transpose character as tandem's op, or 0.
inline int fortran_op(char c) { return tandem_straight.fortran_op[static_cast<unsigned char>(c)]; }

// Whether the product m * n * k is at least 1 and at most `most`, exactly: as a 64-bit integer,
// where a product that overflows is larger (the assembly's test: the product less 1, unsigned, is
// below `most`). So nothing passes while `most` is 0 (before publication: no entry is read then),
// and no product of 0; a negative one fails unless two sizes are negative, which the rules that
// use this rule out.
template <class I>
[[gnu::always_inline]] inline bool product_at_most(std::uint64_t most, I m, I n, I k) {
  std::int64_t mn = 0, product = 0;
  return !__builtin_mul_overflow(static_cast<std::int64_t>(m), static_cast<std::int64_t>(n), &mn) &&
         !__builtin_mul_overflow(mn, static_cast<std::int64_t>(k), &product) &&
         static_cast<std::uint64_t>(product) - 1 < most;
}

// The rule: a call goes straight when it has a product (m, n, k above 0, alpha not 0), its work
// (m * n * k times kWorkPerMultiplyAdd<T>) is at most `most`, and BLAS rules out none of its
// arguments. For a real T the work is the product itself, as the assembly tests it.
template <class T, class I>
[[gnu::always_inline]] inline bool goes(std::uint64_t most, int layout, int ta, int tb, I m, I n,
                                        I k, T alpha, const T* a, I lda, const T* b, I ldb,
                                        const T* c, I ldc) {
  // w * p <= most exactly when p <= most / w (whole numbers).
  return m > 0 && n > 0 && k > 0 && alpha != T(0) &&
         product_at_most(most / kWorkPerMultiplyAdd<T>, m, n, k) &&
         gemm_rules::first_invalid(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, c, ldc) == 0;
}

}  // namespace tandem::detail::dropin::straight

#endif  // __ASSEMBLER__
