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

// The level-3 routines in Fortran: one row per precision, T its element type and p its letter.
// GEMM for every precision (a complex argument is its real and imaginary parts, as
// std::complex lays them out); the other routines for s and d, the ones the drop-in serves.
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
#undef TANDEM_FORTRAN_LEVEL3
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

// One real precision's entries, Fortran and CBLAS. trmm and trsm share a type, as do symm and syr2k
// (side, uplo, m, n, ... where syr2k has uplo, trans, n, k, ...).
template <class T>
struct Level3 {
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
  using CblasRank = void (*)(CBLAS_ORDER, CBLAS_UPLO, CBLAS_TRANSPOSE, blasint, blasint, T,
                             const T*, blasint, T, T*, blasint);
  using CblasRank2 = void (*)(CBLAS_ORDER, CBLAS_UPLO, CBLAS_TRANSPOSE, blasint, blasint, T,
                              const T*, blasint, const T*, blasint, T, T*, blasint);
  using CblasSymm = void (*)(CBLAS_ORDER, CBLAS_SIDE, CBLAS_UPLO, blasint, blasint, T, const T*,
                             blasint, const T*, blasint, T, T*, blasint);
  using CblasTriangle = void (*)(CBLAS_ORDER, CBLAS_SIDE, CBLAS_UPLO, CBLAS_TRANSPOSE, CBLAS_DIAG,
                                 blasint, blasint, T, const T*, blasint, T*, blasint);

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
#undef TANDEM_RESOLVED_LEVEL3

// The entries `find` gives by name (as "ssyrk_" or "cblas_dtrsm"; null where it finds none).
template <class T, class Find>
Level3<T> found(Find&& find) {
  constexpr Precision precision = precision_of<T>();
  auto at = [&](auto& entry, bool cblas, const char* routine) {
    const RoutineName name =
        cblas ? cblas_name(precision, routine) : fortran_symbol(precision, routine);
    entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(find(name.c_str()));
  };
  Level3<T> e{};
  at(e.gemm, false, "gemm");
  at(e.syrk, false, "syrk");
  at(e.syr2k, false, "syr2k");
  at(e.symm, false, "symm");
  at(e.trmm, false, "trmm");
  at(e.trsm, false, "trsm");
  at(e.cblas_gemm, true, "gemm");
  at(e.cblas_syrk, true, "syrk");
  at(e.cblas_syr2k, true, "syr2k");
  at(e.cblas_symm, true, "symm");
  at(e.cblas_trmm, true, "trmm");
  at(e.cblas_trsm, true, "trsm");
  return e;
}

}  // namespace tandem::detail::blas_entries
