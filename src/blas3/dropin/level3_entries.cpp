// libtandem_blas.so's other level-3 routines (syrk, syr2k, symm, trmm, trsm for s and d, through
// CBLAS and Fortran): each runs as the recursive halving of src/blas3/level3.hpp, whose products go
// through tandem's GEMM by the drop-in's routing rule (src/blas3/dropin/gemm_entries.cpp). One
// whose largest product stays on the CPU is one OpenBLAS call; below the drop-in's threshold a
// valid call goes straight to OpenBLAS's own entry, as a GEMM call does. BLAS semantics and
// argument positions are the reference's, as for gemm.
#include <cblas.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/precision.hpp"
#include "base/problem.hpp"
#include "blas3/dropin/blas_entries.hpp"
#include "blas3/dropin/dropin.hpp"
#include "blas3/dropin/straight.hpp"
#include "blas3/level3.hpp"
#include "blas3/level3_rules.hpp"
#include "plan/plan.hpp"
#include "profile/defaults.hpp"
#include "tandem/tandem.hpp"

#define TANDEM_EXPORT __attribute__((visibility("default")))

namespace {

using namespace tandem::detail::dropin;

// The products of a level-3 routine: each goes through tandem's GEMM by the routing rule above,
// and one that fails there (C intact) is retried on the CPU, as a gemm call would be.
template <class T>
class Routed final : public tandem::detail::level3::Products<T> {
 public:
  explicit Routed(const char* routine) : routine_(routine) {}

  bool offloads(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, const T* c, int64_t ldc) override {
    if (tandem::detail::dropin::below_threshold(tandem::detail::precision_of<T>(), m, n, k))
      return false;
    // The column-major product as the row-major one the plan sees (C^T = B^T A^T).
    const tandem::detail::Problem<T> p{
        tb, ta, n, m, k, T(1), b, ldb, a, lda, beta, const_cast<T*>(c), ldc};
    try {
      return tandem::detail::uses_devices(p, tandem::Options{});
    } catch (const std::exception&) {
      return false;
    }
  }

  bool below_threshold(int64_t m, int64_t n, int64_t k) override {
    return tandem::detail::dropin::below_threshold(tandem::detail::precision_of<T>(), m, n, k);
  }

  // Under auto, the defaults' smallest diagonal block; a strategy the caller forces halves as far
  // as the products go (how the testers reach every halving with small matrices).
  int64_t min_diagonal() override {
    try {
      if (tandem::detail::request(tandem::Options{}).strategy != tandem::Strategy::Auto) return 0;
    } catch (const std::exception&) {
      return 0;
    }
    return tandem::detail::profile::level3_min_diagonal(tandem::detail::precision_of<T>());
  }

  void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
            const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    auto call = [&](const tandem::Options& o) {
      tandem::gemm<T>(tandem::Layout::ColMajor, ta ? tandem::Op::Trans : tandem::Op::NoTrans,
                      tb ? tandem::Op::Trans : tandem::Op::NoTrans, m, n, k, alpha, a, lda, b, ldb,
                      beta, c, ldc, o);
    };
    ++products;
    try {
      call(tandem::Options{});
    } catch (const std::exception& e) {
      recover(routine_, e, [&] { call(cpu_only()); });
    }
  }

  int products = 0;  // GEMMs sent to tandem

 private:
  const char* routine_;
};

// One level-3 call: runs `body` with the routed products, reports an invalid argument through
// `on_invalid` (given its Fortran position; CBLAS adds one for the layout, as the reference
// CBLAS reports the column-major Fortran call it makes, and the testers' cblas_xerbla maps
// row-major positions back) and logs the call under TANDEM_VERBOSE (`describe`
// gives its name and sizes, built only then). Any other failure is fatal: the routines update in
// place, so a call cannot simply be redone on the CPU (each product's own failures were already
// retried there).
template <class T, class Describe, class Body, class OnInvalid>
void level3_call(const char* routine, Describe&& describe, Body&& body, OnInvalid&& on_invalid) {
  Routed<T> products(routine);
  try {
    body(products);
  } catch (const tandem::Error& e) {
    if (e.kind() != tandem::Error::Kind::InvalidArgument) fatal(routine, e.what());
    on_invalid(e.argument());
    return;
  } catch (const std::exception& e) {
    fatal(routine, e.what());
  }
  if (tandem::detail::env_config().verbose)
    tandem::detail::log_line(tandem::detail::letter(tandem::detail::precision_of<T>()) +
                             describe() + " products=" + std::to_string(products.products));
}

std::string dims(const char* name, int64_t a, const char* name2, int64_t b) {
  return std::string(" ") + name + "=" + std::to_string(a) + " " + name2 + "=" + std::to_string(b);
}

// CBLAS's enumerations as Fortran characters ('\0' for a value that is none of them, which the
// routine then reports), and a row-major call as the column-major call for the transposes.
char uplo_char(int v) { return v == CblasUpper ? 'U' : v == CblasLower ? 'L' : '\0'; }
char side_char(int v) { return v == CblasLeft ? 'L' : v == CblasRight ? 'R' : '\0'; }
char diag_char(int v) { return v == CblasUnit ? 'U' : v == CblasNonUnit ? 'N' : '\0'; }
char trans_char(int v) {
  return v == CblasNoTrans ? 'N' : v == CblasTrans ? 'T' : v == CblasConjTrans ? 'C' : '\0';
}
char flip_uplo(char c) { return c == 'U' ? 'L' : c == 'L' ? 'U' : c; }
char flip_side(char c) { return c == 'L' ? 'R' : c == 'R' ? 'L' : c; }
char flip_trans(char c) { return c == 'N' ? 'T' : c == '\0' ? c : 'N'; }

using tandem::detail::blas_entries::Level3;
namespace rules = tandem::detail::level3_rules;

// OpenBLAS's `entry` that a call whose product is m x n x k goes straight to if its arguments
// allow (below), or null: the threshold is published (src/blas3/dropin/straight.hpp: never under
// TANDEM_VERBOSE), the product is at most it, the entry was found. Such a call is the one CPU BLAS
// call src/blas3/level3.cpp would make, without the machinery around it (as for gemm).
template <class T, class F>
[[gnu::always_inline]] inline F straight_to(F Level3<T>::*entry, blasint m, blasint n, blasint k) {
  namespace straight = tandem::detail::dropin::straight;
  if (!straight::product_at_most(straight::most(), m, n, k)) return nullptr;
  return straight::level3<T>().*entry;
}

// Whether the arguments let a call go straight (src/blas3/level3_rules.hpp, column-major terms).
// Where beta is 0, C is zeroed here first, as src/blas3/level3.cpp does (NaN in C does not
// survive).
template <class T>
[[gnu::always_inline]] inline bool rank_goes(char uplo, char trans, blasint n, blasint k, T alpha,
                                             const T* a, blasint lda, bool two, const T* b,
                                             blasint ldb, T beta, T* c, blasint ldc) {
  if (!rules::rank_goes(uplo, trans, n, k, alpha, a, lda, two, b, ldb, c, ldc)) return false;
  if (beta == T(0)) rules::scale(rules::upper(uplo), n, n, T(0), c, ldc);
  return true;
}

template <class T>
[[gnu::always_inline]] inline bool symm_goes(char side, char uplo, blasint m, blasint n, T alpha,
                                             const T* a, blasint lda, const T* b, blasint ldb,
                                             T beta, T* c, blasint ldc) {
  if (!rules::symm_goes(side, uplo, m, n, alpha, a, lda, b, ldb, c, ldc)) return false;
  if (beta == T(0)) rules::scale('\0', m, n, T(0), c, ldc);
  return true;
}

// The layout, or false after reporting it invalid (position 1).
bool cblas_layout(const char* routine, int order, bool* row) {
  if (order != CblasRowMajor && order != CblasColMajor) {
    cblas_invalid(routine, 1);
    return false;
  }
  *row = order == CblasRowMajor;
  return true;
}

template <class T>
[[gnu::noinline]] void cblas_syrk_rest(const char* routine, char ul, char tr, blasint n, blasint k,
                                       T alpha, const T* a, blasint lda, T beta, T* c,
                                       blasint ldc) {
  level3_call<T>(
      routine, [&] { return "syrk" + dims("n", n, "k", k); },
      [&](Routed<T>& pr) {
        tandem::detail::level3::syrk<T>(ul, tr, n, k, alpha, a, lda, beta, c, ldc, pr);
      },
      [&](int position) { cblas_invalid(routine, position + 1); });
}

template <class T>
void cblas_syrk(int order, int uplo, int trans, blasint n, blasint k, T alpha, const T* a,
                blasint lda, T beta, T* c, blasint ldc) {
  static constexpr auto kName =
      tandem::detail::cblas_name(tandem::detail::precision_of<T>(), "syrk");
  const char* routine = kName.c_str();
  bool row = false;
  if (!cblas_layout(routine, order, &row)) return;
  char ul = uplo_char(uplo), tr = trans_char(trans);
  if (row) ul = flip_uplo(ul), tr = flip_trans(tr);
  if (const auto to = straight_to<T>(&Level3<T>::cblas_syrk, n, n, k);
      to != nullptr && rank_goes<T>(ul, tr, n, k, alpha, a, lda, false, nullptr, 0, beta, c, ldc))
    return to(CBLAS_ORDER(order), CBLAS_UPLO(uplo), CBLAS_TRANSPOSE(trans), n, k, alpha, a, lda,
              beta, c, ldc);
  cblas_syrk_rest<T>(routine, ul, tr, n, k, alpha, a, lda, beta, c, ldc);
}

template <class T>
[[gnu::noinline]] void cblas_syr2k_rest(const char* routine, char ul, char tr, blasint n, blasint k,
                                        T alpha, const T* a, blasint lda, const T* b, blasint ldb,
                                        T beta, T* c, blasint ldc) {
  level3_call<T>(
      routine, [&] { return "syr2k" + dims("n", n, "k", k); },
      [&](Routed<T>& pr) {
        tandem::detail::level3::syr2k<T>(ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pr);
      },
      [&](int position) { cblas_invalid(routine, position + 1); });
}

template <class T>
void cblas_syr2k(int order, int uplo, int trans, blasint n, blasint k, T alpha, const T* a,
                 blasint lda, const T* b, blasint ldb, T beta, T* c, blasint ldc) {
  static constexpr auto kName =
      tandem::detail::cblas_name(tandem::detail::precision_of<T>(), "syr2k");
  const char* routine = kName.c_str();
  bool row = false;
  if (!cblas_layout(routine, order, &row)) return;
  char ul = uplo_char(uplo), tr = trans_char(trans);
  if (row) ul = flip_uplo(ul), tr = flip_trans(tr);
  if (const auto to = straight_to<T>(&Level3<T>::cblas_syr2k, n, n, k);
      to != nullptr && rank_goes<T>(ul, tr, n, k, alpha, a, lda, true, b, ldb, beta, c, ldc))
    return to(CBLAS_ORDER(order), CBLAS_UPLO(uplo), CBLAS_TRANSPOSE(trans), n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
  cblas_syr2k_rest<T>(routine, ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
[[gnu::noinline]] void cblas_symm_rest(const char* routine, char sd, char ul, blasint m, blasint n,
                                       blasint rows, blasint cols, T alpha, const T* a, blasint lda,
                                       const T* b, blasint ldb, T beta, T* c, blasint ldc) {
  level3_call<T>(
      routine, [&] { return "symm" + dims("m", m, "n", n); },
      [&](Routed<T>& pr) {
        tandem::detail::level3::symm<T>(sd, ul, rows, cols, alpha, a, lda, b, ldb, beta, c, ldc,
                                        pr);
      },
      [&](int position) { cblas_invalid(routine, position + 1); });
}

template <class T>
void cblas_symm(int order, int side, int uplo, blasint m, blasint n, T alpha, const T* a,
                blasint lda, const T* b, blasint ldb, T beta, T* c, blasint ldc) {
  static constexpr auto kName =
      tandem::detail::cblas_name(tandem::detail::precision_of<T>(), "symm");
  const char* routine = kName.c_str();
  bool row = false;
  if (!cblas_layout(routine, order, &row)) return;
  char sd = side_char(side), ul = uplo_char(uplo);
  blasint rows = m, cols = n;
  if (row) sd = flip_side(sd), ul = flip_uplo(ul), rows = n, cols = m;
  if (const auto to =
          straight_to<T>(&Level3<T>::cblas_symm, rows, cols, rules::side_order(sd, rows, cols));
      to != nullptr && symm_goes<T>(sd, ul, rows, cols, alpha, a, lda, b, ldb, beta, c, ldc))
    return to(CBLAS_ORDER(order), CBLAS_SIDE(side), CBLAS_UPLO(uplo), m, n, alpha, a, lda, b, ldb,
              beta, c, ldc);
  cblas_symm_rest<T>(routine, sd, ul, m, n, rows, cols, alpha, a, lda, b, ldb, beta, c, ldc);
}

// trmm and trsm: `solve` picks the routine.
template <class T>
[[gnu::noinline]] void cblas_triangle_rest(const char* routine, bool solve, char sd, char ul,
                                           char tr, char dg, blasint m, blasint n, blasint rows,
                                           blasint cols, T alpha, const T* a, blasint lda, T* b,
                                           blasint ldb) {
  level3_call<T>(
      routine, [&] { return std::string(solve ? "trsm" : "trmm") + dims("m", m, "n", n); },
      [&](Routed<T>& pr) {
        if (solve)
          tandem::detail::level3::trsm<T>(sd, ul, tr, dg, rows, cols, alpha, a, lda, b, ldb, pr);
        else
          tandem::detail::level3::trmm<T>(sd, ul, tr, dg, rows, cols, alpha, a, lda, b, ldb, pr);
      },
      [&](int position) { cblas_invalid(routine, position + 1); });
}

template <class T>
void cblas_triangle(bool solve, int order, int side, int uplo, int trans, int diag, blasint m,
                    blasint n, T alpha, const T* a, blasint lda, T* b, blasint ldb) {
  constexpr tandem::detail::Precision kPrecision = tandem::detail::precision_of<T>();
  static constexpr auto kTrsm = tandem::detail::cblas_name(kPrecision, "trsm"),
                        kTrmm = tandem::detail::cblas_name(kPrecision, "trmm");
  const char* routine = solve ? kTrsm.c_str() : kTrmm.c_str();
  bool row = false;
  if (!cblas_layout(routine, order, &row)) return;
  char sd = side_char(side), ul = uplo_char(uplo), tr = trans_char(trans), dg = diag_char(diag);
  blasint rows = m, cols = n;
  if (row) sd = flip_side(sd), ul = flip_uplo(ul), rows = n, cols = m;
  if (const auto to = straight_to<T>(solve ? &Level3<T>::cblas_trsm : &Level3<T>::cblas_trmm, rows,
                                     cols, rules::side_order(sd, rows, cols));
      to != nullptr && rules::triangle_goes(sd, ul, tr, dg, rows, cols, alpha, a, lda, b, ldb))
    return to(CBLAS_ORDER(order), CBLAS_SIDE(side), CBLAS_UPLO(uplo), CBLAS_TRANSPOSE(trans),
              CBLAS_DIAG(diag), m, n, alpha, a, lda, b, ldb);
  cblas_triangle_rest<T>(routine, solve, sd, ul, tr, dg, m, n, rows, cols, alpha, a, lda, b, ldb);
}

template <class T>
[[gnu::noinline]] void fortran_syrk_rest(const char* name, const char* uplo, const char* trans,
                                         const blasint* n, const blasint* k, const T* alpha,
                                         const T* a, const blasint* lda, const T* beta, T* c,
                                         const blasint* ldc) {
  level3_call<T>(
      name, [&] { return "syrk" + dims("n", *n, "k", *k); },
      [&](Routed<T>& pr) {
        tandem::detail::level3::syrk<T>(*uplo, *trans, *n, *k, *alpha, a, *lda, *beta, c, *ldc, pr);
      },
      [&](int position) { fortran_invalid(name, position); });
}

template <class T>
void fortran_syrk(const char* uplo, const char* trans, const blasint* n, const blasint* k,
                  const T* alpha, const T* a, const blasint* lda, const T* beta, T* c,
                  const blasint* ldc) {
  static constexpr auto kName =
      tandem::detail::xerbla_name(tandem::detail::precision_of<T>(), "syrk");
  const char* name = kName.c_str();
  if (const auto to = straight_to<T>(&Level3<T>::syrk, *n, *n, *k);
      to != nullptr &&
      rank_goes<T>(*uplo, *trans, *n, *k, *alpha, a, *lda, false, nullptr, 0, *beta, c, *ldc))
    return to(uplo, trans, n, k, alpha, a, lda, beta, c, ldc);
  fortran_syrk_rest<T>(name, uplo, trans, n, k, alpha, a, lda, beta, c, ldc);
}

template <class T>
[[gnu::noinline]] void fortran_syr2k_rest(const char* name, const char* uplo, const char* trans,
                                          const blasint* n, const blasint* k, const T* alpha,
                                          const T* a, const blasint* lda, const T* b,
                                          const blasint* ldb, const T* beta, T* c,
                                          const blasint* ldc) {
  level3_call<T>(
      name, [&] { return "syr2k" + dims("n", *n, "k", *k); },
      [&](Routed<T>& pr) {
        tandem::detail::level3::syr2k<T>(*uplo, *trans, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c,
                                         *ldc, pr);
      },
      [&](int position) { fortran_invalid(name, position); });
}

template <class T>
void fortran_syr2k(const char* uplo, const char* trans, const blasint* n, const blasint* k,
                   const T* alpha, const T* a, const blasint* lda, const T* b, const blasint* ldb,
                   const T* beta, T* c, const blasint* ldc) {
  static constexpr auto kName =
      tandem::detail::xerbla_name(tandem::detail::precision_of<T>(), "syr2k");
  const char* name = kName.c_str();
  if (const auto to = straight_to<T>(&Level3<T>::syr2k, *n, *n, *k);
      to != nullptr &&
      rank_goes<T>(*uplo, *trans, *n, *k, *alpha, a, *lda, true, b, *ldb, *beta, c, *ldc))
    return to(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  fortran_syr2k_rest<T>(name, uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
[[gnu::noinline]] void fortran_symm_rest(const char* name, const char* side, const char* uplo,
                                         const blasint* m, const blasint* n, const T* alpha,
                                         const T* a, const blasint* lda, const T* b,
                                         const blasint* ldb, const T* beta, T* c,
                                         const blasint* ldc) {
  level3_call<T>(
      name, [&] { return "symm" + dims("m", *m, "n", *n); },
      [&](Routed<T>& pr) {
        tandem::detail::level3::symm<T>(*side, *uplo, *m, *n, *alpha, a, *lda, b, *ldb, *beta, c,
                                        *ldc, pr);
      },
      [&](int position) { fortran_invalid(name, position); });
}

template <class T>
void fortran_symm(const char* side, const char* uplo, const blasint* m, const blasint* n,
                  const T* alpha, const T* a, const blasint* lda, const T* b, const blasint* ldb,
                  const T* beta, T* c, const blasint* ldc) {
  static constexpr auto kName =
      tandem::detail::xerbla_name(tandem::detail::precision_of<T>(), "symm");
  const char* name = kName.c_str();
  if (const auto to = straight_to<T>(&Level3<T>::symm, *m, *n, rules::side_order(*side, *m, *n));
      to != nullptr && symm_goes<T>(*side, *uplo, *m, *n, *alpha, a, *lda, b, *ldb, *beta, c, *ldc))
    return to(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
  fortran_symm_rest<T>(name, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
[[gnu::noinline]] void fortran_triangle_rest(const char* name, bool solve, const char* side,
                                             const char* uplo, const char* trans, const char* diag,
                                             const blasint* m, const blasint* n, const T* alpha,
                                             const T* a, const blasint* lda, T* b,
                                             const blasint* ldb) {
  level3_call<T>(
      name, [&] { return std::string(solve ? "trsm" : "trmm") + dims("m", *m, "n", *n); },
      [&](Routed<T>& pr) {
        if (solve)
          tandem::detail::level3::trsm<T>(*side, *uplo, *trans, *diag, *m, *n, *alpha, a, *lda, b,
                                          *ldb, pr);
        else
          tandem::detail::level3::trmm<T>(*side, *uplo, *trans, *diag, *m, *n, *alpha, a, *lda, b,
                                          *ldb, pr);
      },
      [&](int position) { fortran_invalid(name, position); });
}

template <class T>
void fortran_triangle(bool solve, const char* side, const char* uplo, const char* trans,
                      const char* diag, const blasint* m, const blasint* n, const T* alpha,
                      const T* a, const blasint* lda, T* b, const blasint* ldb) {
  constexpr tandem::detail::Precision kPrecision = tandem::detail::precision_of<T>();
  static constexpr auto kTrsm = tandem::detail::xerbla_name(kPrecision, "trsm"),
                        kTrmm = tandem::detail::xerbla_name(kPrecision, "trmm");
  const char* name = solve ? kTrsm.c_str() : kTrmm.c_str();
  if (const auto to = straight_to<T>(solve ? &Level3<T>::trsm : &Level3<T>::trmm, *m, *n,
                                     rules::side_order(*side, *m, *n));
      to != nullptr &&
      rules::triangle_goes(*side, *uplo, *trans, *diag, *m, *n, *alpha, a, *lda, b, *ldb))
    return to(side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
  fortran_triangle_rest<T>(name, solve, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
}

}  // namespace

// The exported entries: on x86-64 src/blas3/dropin/straight_x86_64.S, which goes straight or on to
// these (tandem_rest_*; tests/straight_test.cpp); elsewhere these. Both go straight by one rule,
// but the assembly leaves calls with beta = 0 to these, which zero C first.
#ifdef TANDEM_STRAIGHT_ASM
#define TANDEM_LEVEL3_ENTRY(name) __attribute__((visibility("hidden"))) tandem_rest_##name
// Declared with the exported entries' types (src/blas3/dropin/blas_entries.hpp): a definition below
// that took other arguments would not compile.
#define TANDEM_REST(name) decltype(name) tandem_rest_##name
#define TANDEM_RESTS(p)          \
  TANDEM_REST(cblas_##p##syrk);  \
  TANDEM_REST(cblas_##p##syr2k); \
  TANDEM_REST(cblas_##p##symm);  \
  TANDEM_REST(cblas_##p##trmm);  \
  TANDEM_REST(cblas_##p##trsm);  \
  TANDEM_REST(p##syrk_);         \
  TANDEM_REST(p##syr2k_);        \
  TANDEM_REST(p##symm_);         \
  TANDEM_REST(p##trmm_);         \
  TANDEM_REST(p##trsm_);
extern "C" {
TANDEM_RESTS(s)
TANDEM_RESTS(d)
}
#else
#define TANDEM_LEVEL3_ENTRY(name) TANDEM_EXPORT name
#endif

// The exported entries of one precision: T its element type, p its letter.
#define TANDEM_LEVEL3_ENTRIES(T, p)                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##syrk)(                                                      \
      const enum CBLAS_ORDER Order, const enum CBLAS_UPLO Uplo, const enum CBLAS_TRANSPOSE Trans, \
      const blasint N, const blasint K, const T alpha, const T* A, const blasint lda,             \
      const T beta, T* C, const blasint ldc) {                                                    \
    cblas_syrk<T>(Order, Uplo, Trans, N, K, alpha, A, lda, beta, C, ldc);                         \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##syr2k)(                                                     \
      const enum CBLAS_ORDER Order, const enum CBLAS_UPLO Uplo, const enum CBLAS_TRANSPOSE Trans, \
      const blasint N, const blasint K, const T alpha, const T* A, const blasint lda, const T* B, \
      const blasint ldb, const T beta, T* C, const blasint ldc) {                                 \
    cblas_syr2k<T>(Order, Uplo, Trans, N, K, alpha, A, lda, B, ldb, beta, C, ldc);                \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##symm)(                                                      \
      const enum CBLAS_ORDER Order, const enum CBLAS_SIDE Side, const enum CBLAS_UPLO Uplo,       \
      const blasint M, const blasint N, const T alpha, const T* A, const blasint lda, const T* B, \
      const blasint ldb, const T beta, T* C, const blasint ldc) {                                 \
    cblas_symm<T>(Order, Side, Uplo, M, N, alpha, A, lda, B, ldb, beta, C, ldc);                  \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##trmm)(                                                      \
      const enum CBLAS_ORDER Order, const enum CBLAS_SIDE Side, const enum CBLAS_UPLO Uplo,       \
      const enum CBLAS_TRANSPOSE TransA, const enum CBLAS_DIAG Diag, const blasint M,             \
      const blasint N, const T alpha, const T* A, const blasint lda, T* B, const blasint ldb) {   \
    cblas_triangle<T>(false, Order, Side, Uplo, TransA, Diag, M, N, alpha, A, lda, B, ldb);       \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##trsm)(                                                      \
      const enum CBLAS_ORDER Order, const enum CBLAS_SIDE Side, const enum CBLAS_UPLO Uplo,       \
      const enum CBLAS_TRANSPOSE TransA, const enum CBLAS_DIAG Diag, const blasint M,             \
      const blasint N, const T alpha, const T* A, const blasint lda, T* B, const blasint ldb) {   \
    cblas_triangle<T>(true, Order, Side, Uplo, TransA, Diag, M, N, alpha, A, lda, B, ldb);        \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##syrk_)(                                                             \
      const char* uplo, const char* trans, const blasint* n, const blasint* k, const T* alpha,    \
      const T* a, const blasint* lda, const T* beta, T* c, const blasint* ldc) {                  \
    fortran_syrk<T>(uplo, trans, n, k, alpha, a, lda, beta, c, ldc);                              \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##syr2k_)(const char* uplo, const char* trans, const blasint* n,      \
                                      const blasint* k, const T* alpha, const T* a,               \
                                      const blasint* lda, const T* b, const blasint* ldb,         \
                                      const T* beta, T* c, const blasint* ldc) {                  \
    fortran_syr2k<T>(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                     \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##symm_)(const char* side, const char* uplo, const blasint* m,        \
                                     const blasint* n, const T* alpha, const T* a,                \
                                     const blasint* lda, const T* b, const blasint* ldb,          \
                                     const T* beta, T* c, const blasint* ldc) {                   \
    fortran_symm<T>(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);                       \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##trmm_)(const char* side, const char* uplo, const char* transa,      \
                                     const char* diag, const blasint* m, const blasint* n,        \
                                     const T* alpha, const T* a, const blasint* lda, T* b,        \
                                     const blasint* ldb) {                                        \
    fortran_triangle<T>(false, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);            \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##trsm_)(const char* side, const char* uplo, const char* transa,      \
                                     const char* diag, const blasint* m, const blasint* n,        \
                                     const T* alpha, const T* a, const blasint* lda, T* b,        \
                                     const blasint* ldb) {                                        \
    fortran_triangle<T>(true, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);             \
  }

extern "C" {
TANDEM_LEVEL3_ENTRIES(float, s)
TANDEM_LEVEL3_ENTRIES(double, d)
}  // extern "C"
