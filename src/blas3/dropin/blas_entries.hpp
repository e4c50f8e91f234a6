// The level-3 BLAS entries libtandem_blas.so exports, by type: the Fortran ones with their real
// arguments only (no system header declares them), and the CBLAS ones of the system's cblas.h.
// gfortran passes each character argument's length after the others, but C callers (scipy's
// wrappers, older LAPACK builds, many C programs) pass none, and on x86-64 those lengths sit in
// stack slots a callee owns only when its caller passed them: an entry that declared them could
// write its caller's frame (a tail call reusing the slots does), as OpenBLAS's and the reference
// BLAS's never do. BLAS options are one character, so the lengths carry nothing. The drop-in's
// definitions include this header, so a declaration here that did not match one would not compile;
// its tests and benchmarks call the entries through it, and find OpenBLAS's own entries by these
// types.
#pragma once

#include <cblas.h>

#include <complex>
#include <cstddef>
#include <type_traits>

#include "base/precision.hpp"

// The level-3 routines in Fortran: one row per precision, T its element type and p its letter (a
// complex argument is its real and imaginary parts, as std::complex lays them out). Every routine
// for every precision, and hemm, herk and her2k (R: the real type of their real scalars) for c
// and z.
extern "C" {
#define TANDEM_FORTRAN_GEMM(T, p)                                                           \
  void p##gemm_(const char*, const char*, const blasint*, const blasint*, const blasint*,   \
                const T*, const T*, const blasint*, const T*, const blasint*, const T*, T*, \
                const blasint*);
TANDEM_FORTRAN_GEMM(float, s)
TANDEM_FORTRAN_GEMM(double, d)
TANDEM_FORTRAN_GEMM(std::complex<float>, c)
TANDEM_FORTRAN_GEMM(std::complex<double>, z)
#undef TANDEM_FORTRAN_GEMM
#define TANDEM_FORTRAN_LEVEL3(T, p)                                                            \
  void p##syrk_(const char*, const char*, const blasint*, const blasint*, const T*, const T*,  \
                const blasint*, const T*, T*, const blasint*);                                 \
  void p##syr2k_(const char*, const char*, const blasint*, const blasint*, const T*, const T*, \
                 const blasint*, const T*, const blasint*, const T*, T*, const blasint*);      \
  void p##symm_(const char*, const char*, const blasint*, const blasint*, const T*, const T*,  \
                const blasint*, const T*, const blasint*, const T*, T*, const blasint*);       \
  void p##trmm_(const char*, const char*, const char*, const char*, const blasint*,            \
                const blasint*, const T*, const T*, const blasint*, T*, const blasint*);       \
  void p##trsm_(const char*, const char*, const char*, const char*, const blasint*,            \
                const blasint*, const T*, const T*, const blasint*, T*, const blasint*);
TANDEM_FORTRAN_LEVEL3(float, s)
TANDEM_FORTRAN_LEVEL3(double, d)
TANDEM_FORTRAN_LEVEL3(std::complex<float>, c)
TANDEM_FORTRAN_LEVEL3(std::complex<double>, z)
#undef TANDEM_FORTRAN_LEVEL3
#define TANDEM_FORTRAN_HERMITIAN(T, R, p)                                                      \
  void p##hemm_(const char*, const char*, const blasint*, const blasint*, const T*, const T*,  \
                const blasint*, const T*, const blasint*, const T*, T*, const blasint*);       \
  void p##herk_(const char*, const char*, const blasint*, const blasint*, const R*, const T*,  \
                const blasint*, const R*, T*, const blasint*);                                 \
  void p##her2k_(const char*, const char*, const blasint*, const blasint*, const T*, const T*, \
                 const blasint*, const T*, const blasint*, const R*, T*, const blasint*);
TANDEM_FORTRAN_HERMITIAN(std::complex<float>, float, c)
TANDEM_FORTRAN_HERMITIAN(std::complex<double>, double, z)
#undef TANDEM_FORTRAN_HERMITIAN
}

namespace tandem::detail::blas_entries {

// How cblas.h passes a GEMM's scalars and matrices of T: a real type's scalars by value and its
// matrices as typed pointers; a complex type's scalars by address and its matrices, all as untyped
// pointers (const void* alpha, A, B, beta; void* C). value(), in() and out() read them as T.
template <class T>
struct Cblas {
  using Scalar = T;
  using In = const T*;
  using Out = T*;
  static T value(Scalar s) { return s; }
  static const T* in(In p) { return p; }
  static T* out(Out p) { return p; }
};
template <class R>
struct Cblas<std::complex<R>> {
  using T = std::complex<R>;
  using Scalar = const void*;
  using In = const void*;
  using Out = void*;
  static T value(Scalar s) { return *static_cast<const T*>(s); }
  static const T* in(In p) { return static_cast<const T*>(p); }
  static T* out(Out p) { return static_cast<T*>(p); }
};
template <class T>
using CblasScalar = typename Cblas<T>::Scalar;
template <class T>
using CblasIn = typename Cblas<T>::In;
template <class T>
using CblasOut = typename Cblas<T>::Out;

// The GEMM entries of any precision, Fortran and CBLAS.
template <class T>
using FortranGemm = void (*)(const char*, const char*, const blasint*, const blasint*,
                             const blasint*, const T*, const T*, const blasint*, const T*,
                             const blasint*, const T*, T*, const blasint*);
template <class T>
using CblasGemm = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                           typename Cblas<T>::Scalar, typename Cblas<T>::In, blasint,
                           typename Cblas<T>::In, blasint, typename Cblas<T>::Scalar,
                           typename Cblas<T>::Out, blasint);

// One precision's entries, Fortran and CBLAS (a complex one's CBLAS scalars and matrices as
// Cblas<T> has them). trmm and trsm share a type, as do symm and syr2k (side, uplo, m, n, ...
// where syr2k has uplo, trans, n, k, ...). The layout of the real ones' is the assembly's
// (src/blas3/dropin/straight.hpp).
template <class T>
struct Level3 {
  using S = typename Cblas<T>::Scalar;
  using In = typename Cblas<T>::In;
  using Out = typename Cblas<T>::Out;
  using Gemm = FortranGemm<T>;
  using Rank = void (*)(const char*, const char*, const blasint*, const blasint*, const T*,
                        const T*, const blasint*, const T*, T*, const blasint*);
  using Rank2 = void (*)(const char*, const char*, const blasint*, const blasint*, const T*,
                         const T*, const blasint*, const T*, const blasint*, const T*, T*,
                         const blasint*);
  using Symm = Rank2;
  using Triangle = void (*)(const char*, const char*, const char*, const char*, const blasint*,
                            const blasint*, const T*, const T*, const blasint*, T*, const blasint*);
  using CblasGemm = blas_entries::CblasGemm<T>;
  using CblasRank = void (*)(CBLAS_ORDER, CBLAS_UPLO, CBLAS_TRANSPOSE, blasint, blasint, S, In,
                             blasint, S, Out, blasint);
  using CblasRank2 = void (*)(CBLAS_ORDER, CBLAS_UPLO, CBLAS_TRANSPOSE, blasint, blasint, S, In,
                              blasint, In, blasint, S, Out, blasint);
  using CblasSymm = void (*)(CBLAS_ORDER, CBLAS_SIDE, CBLAS_UPLO, blasint, blasint, S, In, blasint,
                             In, blasint, S, Out, blasint);
  using CblasTriangle = void (*)(CBLAS_ORDER, CBLAS_SIDE, CBLAS_UPLO, CBLAS_TRANSPOSE, CBLAS_DIAG,
                                 blasint, blasint, S, In, blasint, Out, blasint);

  Gemm gemm;
  Rank syrk;
  Rank2 syr2k;
  Symm symm;
  Triangle trmm, trsm;
  CblasGemm cblas_gemm;
  CblasRank cblas_syrk;
  CblasRank2 cblas_syr2k;
  CblasSymm cblas_symm;
  CblasTriangle cblas_trmm, cblas_trsm;
};

// A complex precision's Hermitian entries, Fortran and CBLAS: hemm has symm's types; herk takes a
// real alpha and beta (R), her2k a real beta.
template <class T>
struct Hermitian {
  using R = typename T::value_type;
  using Hemm = typename Level3<T>::Symm;
  using Herk = void (*)(const char*, const char*, const blasint*, const blasint*, const R*,
                        const T*, const blasint*, const R*, T*, const blasint*);
  using Her2k = void (*)(const char*, const char*, const blasint*, const blasint*, const T*,
                         const T*, const blasint*, const T*, const blasint*, const R*, T*,
                         const blasint*);
  using CblasHemm = typename Level3<T>::CblasSymm;
  using CblasHerk = void (*)(CBLAS_ORDER, CBLAS_UPLO, CBLAS_TRANSPOSE, blasint, blasint, R,
                             const void*, blasint, R, void*, blasint);
  using CblasHer2k = void (*)(CBLAS_ORDER, CBLAS_UPLO, CBLAS_TRANSPOSE, blasint, blasint,
                              const void*, const void*, blasint, const void*, blasint, R, void*,
                              blasint);

  Hemm hemm;
  Herk herk;
  Her2k her2k;
  CblasHemm cblas_hemm;
  CblasHerk cblas_herk;
  CblasHer2k cblas_her2k;
};

// The entries as this program resolves them: libtandem_blas.so's where it comes first. One row per
// precision, by its letter.
template <class T>
Level3<T> resolved();
#define TANDEM_RESOLVED_LEVEL3(T, p)                                                  \
  template <>                                                                         \
  inline Level3<T> resolved<T>() {                                                    \
    return {&p##gemm_,         &p##syrk_,        &p##syr2k_,       &p##symm_,         \
            &p##trmm_,         &p##trsm_,        &cblas_##p##gemm, &cblas_##p##syrk,  \
            &cblas_##p##syr2k, &cblas_##p##symm, &cblas_##p##trmm, &cblas_##p##trsm}; \
  }
TANDEM_RESOLVED_LEVEL3(float, s)
TANDEM_RESOLVED_LEVEL3(double, d)
TANDEM_RESOLVED_LEVEL3(std::complex<float>, c)
TANDEM_RESOLVED_LEVEL3(std::complex<double>, z)
#undef TANDEM_RESOLVED_LEVEL3
template <class T>
Hermitian<T> resolved_hermitian();
#define TANDEM_RESOLVED_HERMITIAN(T, p)                             \
  template <>                                                       \
  inline Hermitian<T> resolved_hermitian<T>() {                     \
    return {&p##hemm_,        &p##herk_,        &p##her2k_,         \
            &cblas_##p##hemm, &cblas_##p##herk, &cblas_##p##her2k}; \
  }
TANDEM_RESOLVED_HERMITIAN(std::complex<float>, c)
TANDEM_RESOLVED_HERMITIAN(std::complex<double>, z)
#undef TANDEM_RESOLVED_HERMITIAN

// The entry `find` gives for a routine's CBLAS or Fortran name (as "ssyrk_" or "cblas_dtrsm"),
// as `entry`'s type; null where it finds none.
template <class T, class Entry, class Find>
void find_entry(Entry& entry, Find&& find, bool cblas, const char* routine) {
  constexpr Precision precision = precision_of<T>();
  const RoutineName name =
      cblas ? cblas_name(precision, routine) : fortran_symbol(precision, routine);
  entry = reinterpret_cast<Entry>(find(name.c_str()));
}

// The entries `find` gives by name.
template <class T, class Find>
Level3<T> found(Find&& find) {
  Level3<T> e{};
  find_entry<T>(e.gemm, find, false, "gemm");
  find_entry<T>(e.syrk, find, false, "syrk");
  find_entry<T>(e.syr2k, find, false, "syr2k");
  find_entry<T>(e.symm, find, false, "symm");
  find_entry<T>(e.trmm, find, false, "trmm");
  find_entry<T>(e.trsm, find, false, "trsm");
  find_entry<T>(e.cblas_gemm, find, true, "gemm");
  find_entry<T>(e.cblas_syrk, find, true, "syrk");
  find_entry<T>(e.cblas_syr2k, find, true, "syr2k");
  find_entry<T>(e.cblas_symm, find, true, "symm");
  find_entry<T>(e.cblas_trmm, find, true, "trmm");
  find_entry<T>(e.cblas_trsm, find, true, "trsm");
  return e;
}

template <class T, class Find>
Hermitian<T> found_hermitian(Find&& find) {
  Hermitian<T> e{};
  find_entry<T>(e.hemm, find, false, "hemm");
  find_entry<T>(e.herk, find, false, "herk");
  find_entry<T>(e.her2k, find, false, "her2k");
  find_entry<T>(e.cblas_hemm, find, true, "hemm");
  find_entry<T>(e.cblas_herk, find, true, "herk");
  find_entry<T>(e.cblas_her2k, find, true, "her2k");
  return e;
}

}  // namespace tandem::detail::blas_entries
