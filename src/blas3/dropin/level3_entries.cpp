// libtandem_blas.so's other level-3 routines (syrk, syr2k, symm, trmm, trsm in every precision;
// hemm, herk, her2k in c and z; through CBLAS and Fortran): each runs as the recursive halving of
// src/blas3/level3.hpp, whose products go through tandem's GEMM by the drop-in's routing rule
// (src/blas3/dropin/gemm_entries.cpp). One whose largest product stays on the CPU is one OpenBLAS
// call; below the drop-in's threshold a valid call goes straight to OpenBLAS's own entry, as a
// GEMM call does (from assembly on x86-64, from C++ otherwise; a complex product's work counts
// 4 m n k). BLAS semantics and argument positions are the reference's, as for gemm.
//
// Longer than 600 lines because it holds the entries of eight routines in four precisions, and
// the templates they share have no other user: split, they would move to a header for this file.
#include <cblas.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

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

  bool offloads(char ta, char tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, const T* c, int64_t ldc) override {
    if (tandem::detail::dropin::below_threshold(tandem::detail::precision_of<T>(), m, n, k))
      return false;
    // The column-major product as the row-major one the plan sees (C^T = B^T A^T).
    tandem::detail::Problem<T> p{tb != 'N', ta != 'N',         n,  m, k, T(1), b, ldb, a, lda,
                                 beta,      const_cast<T*>(c), ldc};
    p.conj_a = kComplex && tb == 'C';
    p.conj_b = kComplex && ta == 'C';
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
  // as the products go (how the testers reach every halving with small matrices). The defaults
  // have s and d, measured; c and z take their real counterpart's until theirs is measured (auto
  // keeps complex products on the CPU without a profile anyway).
  int64_t min_diagonal() override {
    try {
      if (tandem::detail::request(tandem::Options{}).strategy != tandem::Strategy::Auto) return 0;
    } catch (const std::exception&) {
      return 0;
    }
    return tandem::detail::profile::level3_min_diagonal(
        tandem::detail::real_of(tandem::detail::precision_of<T>()));
  }

  void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
            const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    auto call = [&](const tandem::Options& o) {
      tandem::gemm<T>(tandem::Layout::ColMajor, op(ta), op(tb), m, n, k, alpha, a, lda, b, ldb,
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
  static constexpr bool kComplex = tandem::detail::is_complex(tandem::detail::precision_of<T>());
  static tandem::Op op(char c) {
    return c == 'N' ? tandem::Op::NoTrans : c == 'C' ? tandem::Op::ConjTrans : tandem::Op::Trans;
  }
  const char* routine_;
};

// One level-3 call: runs `body` with the routed products, reports an invalid argument through
// `on_invalid` (given its Fortran position; CBLAS adds one for the layout, as the reference
// CBLAS reports the column-major Fortran call it makes, and the testers' cblas_xerbla maps
// row-major positions back) and logs the call under TANDEM_VERBOSE (`describe`
// gives its name and sizes, built only then). Any other failure is fatal: the routines update in
// place, so a call cannot simply be redone on the CPU (each product's own failures were already
// retried there). The invalid argument is reported once the handler and the routed products
// have ended, as the GEMM entries do (gemm_entries.cpp, Invalid).
template <class T, class Describe, class Body, class OnInvalid>
void level3_call(const char* routine, Describe&& describe, Body&& body, OnInvalid&& on_invalid) {
  Invalid invalid;
  int products = 0;
  {
    Routed<T> routed(routine);
    try {
      body(routed);
    } catch (const tandem::Error& e) {
      if (e.kind() != tandem::Error::Kind::InvalidArgument) fatal(routine, e.what());
      invalid.take(e);
    } catch (const std::exception& e) {
      fatal(routine, e.what());
    }
    products = routed.products;
  }
  if (invalid.found) return on_invalid(invalid.position);
  if (tandem::detail::env_config().verbose)
    tandem::detail::log_line(tandem::detail::letter(tandem::detail::precision_of<T>()) +
                             describe() + " products=" + std::to_string(products));
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

using tandem::detail::blas_entries::Cblas;
using tandem::detail::blas_entries::Level3;
namespace level3 = tandem::detail::level3;
namespace rules = tandem::detail::level3_rules;
namespace straight = tandem::detail::dropin::straight;

template <class T>
constexpr bool kComplex = tandem::detail::is_complex(tandem::detail::precision_of<T>());

// A scalar as cblas.h passes it (a real one by value, a complex one by address).
using tandem::detail::blas_entries::CblasScalar;

// `first` where First, else `second` (of another type).
template <bool First, class A, class B>
auto pick(A first, B second) {
  if constexpr (First)
    return first;
  else
    return second;
}

// What the entries of the routines that share a shape need to know of each: its name, the types
// of its scalars (alpha and beta: T, or herk's and her2k's real R), OpenBLAS's entries in the
// straight path's table, and tandem's routine (src/blas3/level3.hpp). The rank updates are syrk
// and herk (`Hermitian`), and syr2k and her2k (`Two`: with a B); their `kMirror` is the transpose
// a row-major call trades with 'N' ('T', or 'C' for herk and her2k).
template <class T_, bool Two, bool Hermitian>
struct Rank {
  using T = T_;
  using R = tandem::detail::real_type_t<T>;
  using Alpha = std::conditional_t<Hermitian && !Two, R, T>;
  using Beta = std::conditional_t<Hermitian, R, T>;
  static constexpr bool kTwo = Two, kHermitian = Hermitian;
  static constexpr char kMirror = Hermitian ? 'C' : 'T';
  static constexpr const char* kName =
      Two ? (Hermitian ? "her2k" : "syr2k") : (Hermitian ? "herk" : "syrk");
  static auto fortran_own() {
    if constexpr (Hermitian)
      return pick<Two>(straight::hermitian<T>().her2k, straight::hermitian<T>().herk);
    else
      return pick<Two>(straight::level3<T>().syr2k, straight::level3<T>().syrk);
  }
  static auto cblas_own() {
    if constexpr (Hermitian)
      return pick<Two>(straight::hermitian<T>().cblas_her2k, straight::hermitian<T>().cblas_herk);
    else
      return pick<Two>(straight::level3<T>().cblas_syr2k, straight::level3<T>().cblas_syrk);
  }
  static void run(char ul, char tr, int64_t n, int64_t k, Alpha alpha, const T* a, int64_t lda,
                  const T* b, int64_t ldb, Beta beta, T* c, int64_t ldc, Routed<T>& pr) {
    if constexpr (Hermitian && Two)
      level3::her2k<T>(ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pr);
    else if constexpr (Hermitian)
      level3::herk<T>(ul, tr, n, k, alpha, a, lda, beta, c, ldc, pr);
    else if constexpr (Two)
      level3::syr2k<T>(ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pr);
    else
      level3::syrk<T>(ul, tr, n, k, alpha, a, lda, beta, c, ldc, pr);
  }
};
template <class T>
using Syrk = Rank<T, false, false>;
template <class T>
using Syr2k = Rank<T, true, false>;
template <class T>
using Herk = Rank<T, false, true>;
template <class T>
using Her2k = Rank<T, true, true>;

// symm and hemm (`Hermitian`).
template <class T_, bool Hermitian>
struct Multiply {
  using T = T_;
  static constexpr const char* kName = Hermitian ? "hemm" : "symm";
  static auto fortran_own() {
    if constexpr (Hermitian)
      return straight::hermitian<T>().hemm;
    else
      return straight::level3<T>().symm;
  }
  static auto cblas_own() {
    if constexpr (Hermitian)
      return straight::hermitian<T>().cblas_hemm;
    else
      return straight::level3<T>().cblas_symm;
  }
  static void run(char sd, char ul, int64_t m, int64_t n, T alpha, const T* a, int64_t lda,
                  const T* b, int64_t ldb, T beta, T* c, int64_t ldc, Routed<T>& pr) {
    if constexpr (Hermitian)
      level3::hemm<T>(sd, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc, pr);
    else
      level3::symm<T>(sd, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc, pr);
  }
};
template <class T>
using Symm = Multiply<T, false>;
template <class T>
using Hemm = Multiply<T, true>;

// A rank update's row-major transpose as the column-major call's: 'N' and the routine's mirror
// trade places (a real 'C' is its 'T'); anything else stays, for the routine to report.
template <class Routine>
char flip_trans(char c) {
  if (c == 'N') return Routine::kMirror;
  if (c == Routine::kMirror || (c == 'C' && !kComplex<typename Routine::T>)) return 'N';
  return c;
}

// How a call reports an invalid argument: Fortran entries through xerbla_ with the Fortran
// position, CBLAS ones through cblas_xerbla with one more (the layout comes first; the reference
// CBLAS reports the column-major Fortran call it makes, and the testers' cblas_xerbla maps
// row-major positions back).
enum class Interface { Fortran, Cblas };
void report_invalid(Interface in, const char* name, int position) {
  if (in == Interface::Fortran)
    fortran_invalid(name, position);
  else
    cblas_invalid(name, position + 1);
}

// OpenBLAS's entry (`own()`, from the straight path's table) that a call whose product is m x n x k
// goes straight to if its arguments allow (below), or null: the threshold is published
// (src/blas3/dropin/straight.hpp: never under TANDEM_VERBOSE), the product's work (4 m n k for a
// complex T) is at most it, the entry was found. Such a call is the one CPU BLAS call
// src/blas3/level3.cpp would make, without the machinery around it (as for gemm).
template <class T, class Own>
[[gnu::always_inline]] inline auto straight_to(Own own, blasint m, blasint n, blasint k) {
  return straight::product_at_most(straight::most() / straight::kWorkPerMultiplyAdd<T>, m, n, k)
             ? own()
             : nullptr;
}

// Whether the arguments let a call go straight (src/blas3/level3_rules.hpp, column-major terms).
// Where beta is 0, C is zeroed here first, as src/blas3/level3.cpp does (NaN in C does not
// survive).
template <class Routine, class T = typename Routine::T>
[[gnu::always_inline]] inline bool rank_goes(char uplo, char trans, blasint n, blasint k,
                                             typename Routine::Alpha alpha, const T* a, blasint lda,
                                             const T* b, blasint ldb, typename Routine::Beta beta,
                                             T* c, blasint ldc) {
  if (!rules::rank_goes<Routine::kHermitian>(uplo, trans, n, k, alpha, a, lda, Routine::kTwo, b,
                                             ldb, c, ldc))
    return false;
  if (beta == typename Routine::Beta(0)) rules::scale(rules::upper(uplo), n, n, T(0), c, ldc);
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

// A rank update that does not go straight, in column-major terms (rank-k updates have no B).
template <class Routine, class T = typename Routine::T>
[[gnu::noinline]] void rank_rest(Interface in, const char* name, char ul, char tr, blasint n,
                                 blasint k, typename Routine::Alpha alpha, const T* a, blasint lda,
                                 const T* b, blasint ldb, typename Routine::Beta beta, T* c,
                                 blasint ldc) {
  level3_call<T>(
      name, [&] { return Routine::kName + dims("n", n, "k", k); },
      [&](Routed<T>& pr) { Routine::run(ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pr); },
      [&](int position) { report_invalid(in, name, position); });
}

// A CBLAS rank update (its scalars and matrices as cblas.h passes them; B and ldb unused for a
// rank-k one).
template <class Routine, class T = typename Routine::T>
void cblas_rank(int order, int uplo, int trans, blasint n, blasint k,
                CblasScalar<typename Routine::Alpha> alpha_arg, typename Cblas<T>::In a_arg,
                blasint lda, typename Cblas<T>::In b_arg, blasint ldb,
                CblasScalar<typename Routine::Beta> beta_arg, typename Cblas<T>::Out c_arg,
                blasint ldc) {
  static constexpr auto kName =
      tandem::detail::cblas_name(tandem::detail::precision_of<T>(), Routine::kName);
  const char* routine = kName.c_str();
  bool row = false;
  if (!cblas_layout(routine, order, &row)) return;
  char ul = uplo_char(uplo), tr = trans_char(trans);
  if (row) ul = flip_uplo(ul), tr = flip_trans<Routine>(tr);
  auto alpha = Cblas<typename Routine::Alpha>::value(alpha_arg);
  const auto beta = Cblas<typename Routine::Beta>::value(beta_arg);
  // A row-major her2k is C^T's with B^T and A^T trading roles: the reference CBLAS conjugates
  // alpha (herk's alpha is real; syrk and syr2k need no change).
  if constexpr (Routine::kTwo && Routine::kHermitian)
    if (row) alpha = std::conj(alpha);
  const T *a = Cblas<T>::in(a_arg), *b = Cblas<T>::in(b_arg);
  T* c = Cblas<T>::out(c_arg);
  if (const auto to = straight_to<T>(&Routine::cblas_own, n, n, k);
      to != nullptr && rank_goes<Routine>(ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) {
    if constexpr (Routine::kTwo)
      return to(CBLAS_ORDER(order), CBLAS_UPLO(uplo), CBLAS_TRANSPOSE(trans), n, k, alpha_arg,
                a_arg, lda, b_arg, ldb, beta_arg, c_arg, ldc);
    else
      return to(CBLAS_ORDER(order), CBLAS_UPLO(uplo), CBLAS_TRANSPOSE(trans), n, k, alpha_arg,
                a_arg, lda, beta_arg, c_arg, ldc);
  }
  rank_rest<Routine>(Interface::Cblas, routine, ul, tr, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// A null operand of type X: a rank-k update's B and ldb.
template <class X>
constexpr const X* kNo = nullptr;

// A Fortran rank update (B and ldb kNo for a rank-k one).
template <class Routine, class T = typename Routine::T>
void fortran_rank(const char* uplo, const char* trans, const blasint* n, const blasint* k,
                  const typename Routine::Alpha* alpha, const T* a, const blasint* lda, const T* b,
                  const blasint* ldb, const typename Routine::Beta* beta, T* c,
                  const blasint* ldc) {
  static constexpr auto kName =
      tandem::detail::xerbla_name(tandem::detail::precision_of<T>(), Routine::kName);
  const blasint no_ldb = 0;
  const blasint& b_ld = Routine::kTwo ? *ldb : no_ldb;
  if (const auto to = straight_to<T>(&Routine::fortran_own, *n, *n, *k);
      to != nullptr &&
      rank_goes<Routine>(*uplo, *trans, *n, *k, *alpha, a, *lda, b, b_ld, *beta, c, *ldc)) {
    if constexpr (Routine::kTwo)
      return to(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    else
      return to(uplo, trans, n, k, alpha, a, lda, beta, c, ldc);
  }
  rank_rest<Routine>(Interface::Fortran, kName.c_str(), *uplo, *trans, *n, *k, *alpha, a, *lda, b,
                     b_ld, *beta, c, *ldc);
}

// symm and hemm that do not go straight, in column-major terms (rows x cols); m and n as the
// caller gave them, for the log.
template <class Routine, class T = typename Routine::T>
[[gnu::noinline]] void multiply_rest(Interface in, const char* name, char sd, char ul, blasint m,
                                     blasint n, blasint rows, blasint cols, T alpha, const T* a,
                                     blasint lda, const T* b, blasint ldb, T beta, T* c,
                                     blasint ldc) {
  level3_call<T>(
      name, [&] { return Routine::kName + dims("m", m, "n", n); },
      [&](Routed<T>& pr) {
        Routine::run(sd, ul, rows, cols, alpha, a, lda, b, ldb, beta, c, ldc, pr);
      },
      [&](int position) { report_invalid(in, name, position); });
}

template <class Routine, class T = typename Routine::T>
void cblas_multiply(int order, int side, int uplo, blasint m, blasint n,
                    typename Cblas<T>::Scalar alpha_arg, typename Cblas<T>::In a_arg, blasint lda,
                    typename Cblas<T>::In b_arg, blasint ldb, typename Cblas<T>::Scalar beta_arg,
                    typename Cblas<T>::Out c_arg, blasint ldc) {
  static constexpr auto kName =
      tandem::detail::cblas_name(tandem::detail::precision_of<T>(), Routine::kName);
  const char* routine = kName.c_str();
  bool row = false;
  if (!cblas_layout(routine, order, &row)) return;
  char sd = side_char(side), ul = uplo_char(uplo);
  blasint rows = m, cols = n;
  if (row) sd = flip_side(sd), ul = flip_uplo(ul), rows = n, cols = m;
  const T alpha = Cblas<T>::value(alpha_arg), beta = Cblas<T>::value(beta_arg);
  const T *a = Cblas<T>::in(a_arg), *b = Cblas<T>::in(b_arg);
  T* c = Cblas<T>::out(c_arg);
  if (const auto to =
          straight_to<T>(&Routine::cblas_own, rows, cols, rules::side_order(sd, rows, cols));
      to != nullptr && symm_goes<T>(sd, ul, rows, cols, alpha, a, lda, b, ldb, beta, c, ldc))
    return to(CBLAS_ORDER(order), CBLAS_SIDE(side), CBLAS_UPLO(uplo), m, n, alpha_arg, a_arg, lda,
              b_arg, ldb, beta_arg, c_arg, ldc);
  multiply_rest<Routine>(Interface::Cblas, routine, sd, ul, m, n, rows, cols, alpha, a, lda, b, ldb,
                         beta, c, ldc);
}

template <class Routine, class T = typename Routine::T>
void fortran_multiply(const char* side, const char* uplo, const blasint* m, const blasint* n,
                      const T* alpha, const T* a, const blasint* lda, const T* b,
                      const blasint* ldb, const T* beta, T* c, const blasint* ldc) {
  static constexpr auto kName =
      tandem::detail::xerbla_name(tandem::detail::precision_of<T>(), Routine::kName);
  if (const auto to =
          straight_to<T>(&Routine::fortran_own, *m, *n, rules::side_order(*side, *m, *n));
      to != nullptr && symm_goes<T>(*side, *uplo, *m, *n, *alpha, a, *lda, b, *ldb, *beta, c, *ldc))
    return to(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
  multiply_rest<Routine>(Interface::Fortran, kName.c_str(), *side, *uplo, *m, *n, *m, *n, *alpha, a,
                         *lda, b, *ldb, *beta, c, *ldc);
}

// trmm and trsm that do not go straight (`solve` picks the routine), in column-major terms.
template <class T>
[[gnu::noinline]] void triangle_rest(Interface in, const char* name, bool solve, char sd, char ul,
                                     char tr, char dg, blasint m, blasint n, blasint rows,
                                     blasint cols, T alpha, const T* a, blasint lda, T* b,
                                     blasint ldb) {
  level3_call<T>(
      name, [&] { return std::string(solve ? "trsm" : "trmm") + dims("m", m, "n", n); },
      [&](Routed<T>& pr) {
        if (solve)
          level3::trsm<T>(sd, ul, tr, dg, rows, cols, alpha, a, lda, b, ldb, pr);
        else
          level3::trmm<T>(sd, ul, tr, dg, rows, cols, alpha, a, lda, b, ldb, pr);
      },
      [&](int position) { report_invalid(in, name, position); });
}

template <class T>
void cblas_triangle(bool solve, int order, int side, int uplo, int trans, int diag, blasint m,
                    blasint n, typename Cblas<T>::Scalar alpha_arg, typename Cblas<T>::In a_arg,
                    blasint lda, typename Cblas<T>::Out b_arg, blasint ldb) {
  constexpr tandem::detail::Precision kPrecision = tandem::detail::precision_of<T>();
  static constexpr auto kTrsm = tandem::detail::cblas_name(kPrecision, "trsm"),
                        kTrmm = tandem::detail::cblas_name(kPrecision, "trmm");
  const char* routine = solve ? kTrsm.c_str() : kTrmm.c_str();
  bool row = false;
  if (!cblas_layout(routine, order, &row)) return;
  char sd = side_char(side), ul = uplo_char(uplo), tr = trans_char(trans), dg = diag_char(diag);
  blasint rows = m, cols = n;
  if (row) sd = flip_side(sd), ul = flip_uplo(ul), rows = n, cols = m;
  const T alpha = Cblas<T>::value(alpha_arg);
  const T* a = Cblas<T>::in(a_arg);
  T* b = Cblas<T>::out(b_arg);
  auto own = [&] {
    return solve ? straight::level3<T>().cblas_trsm : straight::level3<T>().cblas_trmm;
  };
  if (const auto to = straight_to<T>(own, rows, cols, rules::side_order(sd, rows, cols));
      to != nullptr && rules::triangle_goes(sd, ul, tr, dg, rows, cols, alpha, a, lda, b, ldb))
    return to(CBLAS_ORDER(order), CBLAS_SIDE(side), CBLAS_UPLO(uplo), CBLAS_TRANSPOSE(trans),
              CBLAS_DIAG(diag), m, n, alpha_arg, a_arg, lda, b_arg, ldb);
  triangle_rest<T>(Interface::Cblas, routine, solve, sd, ul, tr, dg, m, n, rows, cols, alpha, a,
                   lda, b, ldb);
}

template <class T>
void fortran_triangle(bool solve, const char* side, const char* uplo, const char* trans,
                      const char* diag, const blasint* m, const blasint* n, const T* alpha,
                      const T* a, const blasint* lda, T* b, const blasint* ldb) {
  constexpr tandem::detail::Precision kPrecision = tandem::detail::precision_of<T>();
  static constexpr auto kTrsm = tandem::detail::xerbla_name(kPrecision, "trsm"),
                        kTrmm = tandem::detail::xerbla_name(kPrecision, "trmm");
  const char* name = solve ? kTrsm.c_str() : kTrmm.c_str();
  auto own = [&] { return solve ? straight::level3<T>().trsm : straight::level3<T>().trmm; };
  if (const auto to = straight_to<T>(own, *m, *n, rules::side_order(*side, *m, *n));
      to != nullptr &&
      rules::triangle_goes(*side, *uplo, *trans, *diag, *m, *n, *alpha, a, *lda, b, *ldb))
    return to(side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
  triangle_rest<T>(Interface::Fortran, name, solve, *side, *uplo, *trans, *diag, *m, *n, *m, *n,
                   *alpha, a, *lda, b, *ldb);
}

}  // namespace

// The exported entries: on x86-64 src/blas3/dropin/straight_x86_64.S, which goes straight or on to
// these (tandem_rest_*; tests/straight_level3_test.cpp); elsewhere these. Both go straight by one
// rule, but the assembly leaves calls with beta = 0 to these, which zero C first.
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
#define TANDEM_HERMITIAN_RESTS(p) \
  TANDEM_REST(cblas_##p##hemm);   \
  TANDEM_REST(cblas_##p##herk);   \
  TANDEM_REST(cblas_##p##her2k);  \
  TANDEM_REST(p##hemm_);          \
  TANDEM_REST(p##herk_);          \
  TANDEM_REST(p##her2k_);
extern "C" {
TANDEM_RESTS(s)
TANDEM_RESTS(d)
TANDEM_RESTS(c)
TANDEM_RESTS(z)
TANDEM_HERMITIAN_RESTS(c)
TANDEM_HERMITIAN_RESTS(z)
}
#else
#define TANDEM_LEVEL3_ENTRY(name) TANDEM_EXPORT name
#endif

// The exported entries of one precision: T its element type, p its letter. The CBLAS ones take
// cblas.h's types (Cblas<T>); the Fortran ones only their real arguments
// (src/blas3/dropin/blas_entries.hpp says why).
#define TANDEM_LEVEL3_ENTRIES(T, p)                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##syrk)(                                                      \
      const enum CBLAS_ORDER Order, const enum CBLAS_UPLO Uplo, const enum CBLAS_TRANSPOSE Trans, \
      const blasint N, const blasint K, const Cblas<T>::Scalar alpha, Cblas<T>::In A,             \
      const blasint lda, const Cblas<T>::Scalar beta, Cblas<T>::Out C, const blasint ldc) {       \
    cblas_rank<Syrk<T>>(Order, Uplo, Trans, N, K, alpha, A, lda, nullptr, 0, beta, C, ldc);       \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##syr2k)(                                                     \
      const enum CBLAS_ORDER Order, const enum CBLAS_UPLO Uplo, const enum CBLAS_TRANSPOSE Trans, \
      const blasint N, const blasint K, const Cblas<T>::Scalar alpha, Cblas<T>::In A,             \
      const blasint lda, Cblas<T>::In B, const blasint ldb, const Cblas<T>::Scalar beta,          \
      Cblas<T>::Out C, const blasint ldc) {                                                       \
    cblas_rank<Syr2k<T>>(Order, Uplo, Trans, N, K, alpha, A, lda, B, ldb, beta, C, ldc);          \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##symm)(                                                      \
      const enum CBLAS_ORDER Order, const enum CBLAS_SIDE Side, const enum CBLAS_UPLO Uplo,       \
      const blasint M, const blasint N, const Cblas<T>::Scalar alpha, Cblas<T>::In A,             \
      const blasint lda, Cblas<T>::In B, const blasint ldb, const Cblas<T>::Scalar beta,          \
      Cblas<T>::Out C, const blasint ldc) {                                                       \
    cblas_multiply<Symm<T>>(Order, Side, Uplo, M, N, alpha, A, lda, B, ldb, beta, C, ldc);        \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##trmm)(                                                      \
      const enum CBLAS_ORDER Order, const enum CBLAS_SIDE Side, const enum CBLAS_UPLO Uplo,       \
      const enum CBLAS_TRANSPOSE TransA, const enum CBLAS_DIAG Diag, const blasint M,             \
      const blasint N, const Cblas<T>::Scalar alpha, Cblas<T>::In A, const blasint lda,           \
      Cblas<T>::Out B, const blasint ldb) {                                                       \
    cblas_triangle<T>(false, Order, Side, Uplo, TransA, Diag, M, N, alpha, A, lda, B, ldb);       \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##trsm)(                                                      \
      const enum CBLAS_ORDER Order, const enum CBLAS_SIDE Side, const enum CBLAS_UPLO Uplo,       \
      const enum CBLAS_TRANSPOSE TransA, const enum CBLAS_DIAG Diag, const blasint M,             \
      const blasint N, const Cblas<T>::Scalar alpha, Cblas<T>::In A, const blasint lda,           \
      Cblas<T>::Out B, const blasint ldb) {                                                       \
    cblas_triangle<T>(true, Order, Side, Uplo, TransA, Diag, M, N, alpha, A, lda, B, ldb);        \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##syrk_)(                                                             \
      const char* uplo, const char* trans, const blasint* n, const blasint* k, const T* alpha,    \
      const T* a, const blasint* lda, const T* beta, T* c, const blasint* ldc) {                  \
    fortran_rank<Syrk<T>>(uplo, trans, n, k, alpha, a, lda, kNo<T>, kNo<blasint>, beta, c, ldc);  \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##syr2k_)(const char* uplo, const char* trans, const blasint* n,      \
                                      const blasint* k, const T* alpha, const T* a,               \
                                      const blasint* lda, const T* b, const blasint* ldb,         \
                                      const T* beta, T* c, const blasint* ldc) {                  \
    fortran_rank<Syr2k<T>>(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);               \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##symm_)(const char* side, const char* uplo, const blasint* m,        \
                                     const blasint* n, const T* alpha, const T* a,                \
                                     const blasint* lda, const T* b, const blasint* ldb,          \
                                     const T* beta, T* c, const blasint* ldc) {                   \
    fortran_multiply<Symm<T>>(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);             \
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

// hemm, herk and her2k of one complex precision: T its element type, R its real type, p its
// letter.
#define TANDEM_HERMITIAN_ENTRIES(T, R, p)                                                         \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##hemm)(                                                      \
      const enum CBLAS_ORDER Order, const enum CBLAS_SIDE Side, const enum CBLAS_UPLO Uplo,       \
      const blasint M, const blasint N, const void* alpha, const void* A, const blasint lda,      \
      const void* B, const blasint ldb, const void* beta, void* C, const blasint ldc) {           \
    cblas_multiply<Hemm<T>>(Order, Side, Uplo, M, N, alpha, A, lda, B, ldb, beta, C, ldc);        \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##herk)(                                                      \
      const enum CBLAS_ORDER Order, const enum CBLAS_UPLO Uplo, const enum CBLAS_TRANSPOSE Trans, \
      const blasint N, const blasint K, const R alpha, const void* A, const blasint lda,          \
      const R beta, void* C, const blasint ldc) {                                                 \
    cblas_rank<Herk<T>>(Order, Uplo, Trans, N, K, alpha, A, lda, nullptr, 0, beta, C, ldc);       \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(cblas_##p##her2k)(                                                     \
      const enum CBLAS_ORDER Order, const enum CBLAS_UPLO Uplo, const enum CBLAS_TRANSPOSE Trans, \
      const blasint N, const blasint K, const void* alpha, const void* A, const blasint lda,      \
      const void* B, const blasint ldb, const R beta, void* C, const blasint ldc) {               \
    cblas_rank<Her2k<T>>(Order, Uplo, Trans, N, K, alpha, A, lda, B, ldb, beta, C, ldc);          \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##hemm_)(const char* side, const char* uplo, const blasint* m,        \
                                     const blasint* n, const T* alpha, const T* a,                \
                                     const blasint* lda, const T* b, const blasint* ldb,          \
                                     const T* beta, T* c, const blasint* ldc) {                   \
    fortran_multiply<Hemm<T>>(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);             \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##herk_)(                                                             \
      const char* uplo, const char* trans, const blasint* n, const blasint* k, const R* alpha,    \
      const T* a, const blasint* lda, const R* beta, T* c, const blasint* ldc) {                  \
    fortran_rank<Herk<T>>(uplo, trans, n, k, alpha, a, lda, kNo<T>, kNo<blasint>, beta, c, ldc);  \
  }                                                                                               \
  void TANDEM_LEVEL3_ENTRY(p##her2k_)(const char* uplo, const char* trans, const blasint* n,      \
                                      const blasint* k, const T* alpha, const T* a,               \
                                      const blasint* lda, const T* b, const blasint* ldb,         \
                                      const R* beta, T* c, const blasint* ldc) {                  \
    fortran_rank<Her2k<T>>(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);               \
  }

extern "C" {
TANDEM_LEVEL3_ENTRIES(float, s)
TANDEM_LEVEL3_ENTRIES(double, d)
TANDEM_LEVEL3_ENTRIES(std::complex<float>, c)
TANDEM_LEVEL3_ENTRIES(std::complex<double>, z)
TANDEM_HERMITIAN_ENTRIES(std::complex<float>, float, c)
TANDEM_HERMITIAN_ENTRIES(std::complex<double>, double, z)
}  // extern "C"
