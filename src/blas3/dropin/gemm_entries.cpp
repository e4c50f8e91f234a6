// libtandem_blas.so, the drop-in BLAS: its GEMM entries and its routing rule. The library exports
// the reference BLAS's level 3: GEMM in every precision (s, d, c, z: here) and the other routines
// (syrk, syr2k, symm, trmm, trsm in every precision, hemm, herk, her2k in c and z:
// src/blas3/dropin/level3_entries.cpp) through CBLAS (cblas_sgemm, ...) and Fortran (sgemm_, ...)
// with the signatures of the system's cblas.h and of the Fortran BLAS; every other BLAS or LAPACK
// symbol (OpenBLAS's cgemm3m and zgemm3m extensions among them) keeps resolving to the system's
// library.
//
// Routing: a valid GEMM call whose work is below a threshold goes straight to OpenBLAS's own
// entry (no OpenCL, no lock, no allocation: a few compares and a jump,
// src/blas3/dropin/straight.hpp), so programs that make many small products pay nothing for tandem;
// larger ones take the configured strategy (auto unless TANDEM_STRATEGY says otherwise). The other
// routines run as blocked updates whose products follow the same rule (src/blas3/level3.hpp).
// Either way tandem's own BLAS semantics apply (alpha = 0 never reads A or B, beta = 0 never reads
// C).
//
// The work is counted in real multiply-adds: m*n*k for a real product, 4*m*n*k for a complex one
// (each complex multiply-add is four real ones), so TANDEM_MIN_MNK means the same work in every
// precision (straight::kWorkPerMultiplyAdd).
//
// Errors follow BLAS: an invalid argument calls xerbla_ (Fortran entries) or cblas_xerbla
// (CBLAS entries) with the routine's name and the argument's position, and C is untouched.
// 'C' (CblasConjTrans) is the conjugate transpose, the transpose for a real type.
#include <cblas.h>

#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "api/gemm_rules.hpp"
#include "base/clock.hpp"
#include "base/config.hpp"
#include "base/log.hpp"
#include "base/precision.hpp"
#include "blas3/dropin/dropin.hpp"
#include "blas3/dropin/straight.hpp"
#include "cpu/blas.hpp"
#include "tandem/tandem.hpp"

#define TANDEM_EXPORT __attribute__((visibility("default")))

// xerbla_ is a Fortran routine that reads its name's length: this caller passes it.
extern "C" void xerbla_(const char* name, const blasint* info, std::size_t name_len);

namespace {

using tandem::detail::Precision;
using tandem::detail::blas_entries::Cblas;
using tandem::detail::blas_entries::CblasGemm;
using tandem::detail::blas_entries::FortranGemm;

// Until a tuned profile gives the size from which the GPU pays, products below 256^3 stay on
// the CPU BLAS: on every device measured so far (docs/PERFORMANCE.md) the CPU wins there.
constexpr double kDefaultMinMnk = 256.0 * 256.0 * 256.0;

// What the drop-in reads once per process: the threshold, TANDEM_VERBOSE, and whether OpenBLAS's
// own GEMM entries (every precision's) were found for the straight path (`found`: without them a
// call below the threshold takes the ordinary path, kept on the CPU). The entries themselves (and
// OpenBLAS's entries of the other level-3 routines), and the threshold below which a call with a
// product goes straight to OpenBLAS (0 under TANDEM_VERBOSE, whose lines the straight path writes
// on its way, and without the GEMM entries), are published in the straight path's table
// (src/blas3/dropin/straight.hpp).
struct Once {
  double min_mnk = 0;
  bool verbose = false, found = false;
};

// Reads the settings and publishes the straight path's table for the exported entries, which read
// it without a guard. Until then its bound is 0, so the first call takes the ordinary path, which
// publishes it.
Once read_once() {
  Once o;
  const auto& env = tandem::detail::env_config();
  o.verbose = env.verbose;
  o.min_mnk = env.min_mnk.value_or(kDefaultMinMnk);
  const auto own = [](const tandem::detail::RoutineName& name) {
    return tandem::detail::cpu_blas::own_entry(name.c_str());
  };
  o.found = true;
  for (Precision p : tandem::detail::kPrecisions) {
    void* const fortran = own(tandem::detail::fortran_symbol(p, "gemm"));
    void* const cblas = own(tandem::detail::cblas_name(p, "gemm"));
    o.found = o.found && fortran && cblas;
    tandem::detail::dropin::straight::publish_gemm(p, fortran, cblas);
  }
  tandem::detail::dropin::straight::publish_level3(&tandem::detail::cpu_blas::own_entry);
  tandem::detail::dropin::straight::publish(o.verbose || !o.found ? 0 : o.min_mnk);
  return o;
}

const Once& once() {
  static const Once read = read_once();
  return read;
}

tandem::Op cblas_op(int t) { return static_cast<tandem::Op>(t); }

// Fortran transpose characters as tandem's ops, by the straight path's table; anything else
// becomes an invalid op (0) that tandem reports.
tandem::Op fortran_op(char c) {
  return static_cast<tandem::Op>(tandem::detail::dropin::straight::fortran_op(c));
}

// The reference CBLAS computes a row-major call as the column-major call for C^T, and reports
// invalid arguments by their position in that call: m and n, and lda and ldb, trade positions.
// Programs written against it (the reference testers among them) expect exactly that.
int cblas_position(tandem::Layout layout, int position) {
  if (layout != tandem::Layout::RowMajor) return position;
  switch (position) {
    case 4:
      return 5;
    case 5:
      return 4;
    case 9:
      return 11;
    case 11:
      return 9;
    default:
      return position;
  }
}

// The threshold's measure of a product: its real multiply-adds (straight::kWorkPerMultiplyAdd).
double work(Precision p, int64_t m, int64_t n, int64_t k) {
  return tandem::detail::flops_per_multiply_add(p) / 2 * static_cast<double>(m) *
         static_cast<double>(n) * static_cast<double>(k);
}
bool below(const Once& o, Precision p, int64_t m, int64_t n, int64_t k) {
  return work(p, m, n, k) < o.min_mnk;
}

}  // namespace

namespace tandem::detail::dropin {

[[noreturn]] void fatal(const char* routine, const char* what) {
  tandem::detail::log_line(std::string("fatal: ") + routine + ": " + what);
  std::abort();
}

void recover(const char* routine, const std::exception& e, const std::function<void()>& on_cpu) {
  if (const auto* te = dynamic_cast<const tandem::Error*>(&e);
      te != nullptr && te->kind() == tandem::Error::Kind::OutputLost)
    fatal(routine, e.what());
  tandem::detail::warn_once(std::string("dropin-retry"),
                            std::string(routine) + ": " + e.what() + "; computing on the CPU");
  try {
    on_cpu();
  } catch (const std::exception& again) {
    fatal(routine, again.what());
  }
}

void fortran_invalid(const char* name, int position) {
  const blasint info = position;
  xerbla_(name, &info, 6);
}

// An empty message: the system's cblas_xerbla prints its own. OpenBLAS's cblas.h declares the
// strings non-const; they are copies on the stack (no destructor for a longjmp to skip: Invalid).
void cblas_invalid(const char* routine, int position) {
  char name[32], form[1] = {'\0'};
  std::snprintf(name, sizeof name, "%s", routine);
  cblas_xerbla(position, name, form);
}

tandem::Options cpu_only() {
  tandem::Options o;
  o.strategy = tandem::Strategy::Cpu;
  return o;
}

bool below_threshold(Precision p, int64_t m, int64_t n, int64_t k) {
  return below(once(), p, m, n, k);
}

}  // namespace tandem::detail::dropin

namespace {
using namespace tandem::detail::dropin;

// The options of a GEMM that does not go straight: a call below the threshold (OpenBLAS's
// entries were not found, or its arguments are invalid and it is about to be reported) stays on
// the CPU with the program's thread count; a larger one takes the configured strategy.
template <class T>
tandem::Options routed(int64_t m, int64_t n, int64_t k) {
  if (!below_threshold(tandem::detail::precision_of<T>(), m, n, k)) return {};
  tandem::Options o = cpu_only();
  o.cpu_threads = tandem::detail::cpu_blas::current_threads();
  return o;
}

// Below the threshold a valid call goes straight: OpenBLAS's own entry with the caller's
// arguments unchanged, or, where BLAS defines the result without a product (alpha = 0, k = 0),
// C = beta * C here without reading A or B. It reads no environment, takes no lock, allocates
// nothing, leaves OpenBLAS's thread count alone and never touches OpenCL. The common case, a
// product with TANDEM_VERBOSE off, is a few compares in the exported entry and a jump to
// OpenBLAS's. Like any BLAS routine the program calls directly, it runs with OpenBLAS's thread
// count as it is at that moment (a concurrent tandem call may be lending its CPU share another
// count; results do not depend on it).
template <class T>
[[gnu::always_inline]] inline bool goes_straight(const Once& o, int layout, int ta, int tb,
                                                 blasint m, blasint n, blasint k, T alpha,
                                                 const T* a, blasint lda, const T* b, blasint ldb,
                                                 const T* c, blasint ldc) {
  return o.found && below(o, tandem::detail::precision_of<T>(), m, n, k) &&
         tandem::detail::gemm_rules::first_invalid(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb,
                                                   c, ldc) == 0;
}

// The rest of the straight path: calls without a product, and every call under TANDEM_VERBOSE.
// `pass` makes the OpenBLAS call; C's row-major view is rows x cols.
template <class T, class Pass>
void straight_otherwise(int64_t m, int64_t n, int64_t k, T alpha, T beta, T* c, int64_t ldc,
                        bool row, Pass pass) {
  const bool verbose = once().verbose;
  const int64_t t0 = verbose ? tandem::detail::clock::now_ns() : 0;
  const int64_t rows = row ? m : n, cols = row ? n : m;
  const bool product = rows > 0 && cols > 0 && k > 0 && alpha != T(0);
  if (product)
    pass();
  else if (rows > 0 && cols > 0)
    tandem::detail::gemm_rules::scale(c, rows, cols, ldc, beta);
  if (!verbose) return;
  tandem::Report r;
  r.strategy = tandem::Strategy::Cpu;
  r.m = m, r.n = n, r.k = k;
  r.cpu_rows = rows > 0 && cols > 0 ? rows : 0;
  r.cpu_threads = product ? tandem::detail::cpu_blas::current_threads() : 0;
  r.t_start = r.t_cpu_start = t0;
  r.t_cpu_end = r.t_end = tandem::detail::clock::now_ns();
  tandem::detail::log_call(
      tandem::detail::routine_name(tandem::detail::precision_of<T>(), "gemm").c_str(), r, !row);
}

// OpenBLAS's own entries, as once() published them (every caller has called it, or has read a
// bound above 0 from the table).
template <class T>
CblasGemm<T> own_cblas() {
  return reinterpret_cast<CblasGemm<T>>(tandem::detail::dropin::straight::own_cblas_gemm<T>());
}

template <class T>
FortranGemm<T> own_fortran() {
  return reinterpret_cast<FortranGemm<T>>(tandem::detail::dropin::straight::own_gemm<T>());
}

// Every CBLAS GEMM call that does not go straight to OpenBLAS (same signature as the entry, so
// the entry reaches it with a jump). A complex call's scalars and matrices come as cblas.h passes
// them (Cblas<T>: alpha and beta by address, untyped pointers).
template <class T>
[[gnu::noinline]] void cblas_gemm(CBLAS_ORDER layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb,
                                  blasint m, blasint n, blasint k,
                                  typename Cblas<T>::Scalar alpha_arg, typename Cblas<T>::In a_arg,
                                  blasint lda, typename Cblas<T>::In b_arg, blasint ldb,
                                  typename Cblas<T>::Scalar beta_arg, typename Cblas<T>::Out c_arg,
                                  blasint ldc) {
  static constexpr auto routine =
      tandem::detail::cblas_name(tandem::detail::precision_of<T>(), "gemm");
  const T alpha = Cblas<T>::value(alpha_arg), beta = Cblas<T>::value(beta_arg);
  const T *a = Cblas<T>::in(a_arg), *b = Cblas<T>::in(b_arg);
  T* c = Cblas<T>::out(c_arg);
  if (goes_straight(once(), layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, c, ldc)) {
    straight_otherwise(m, n, k, alpha, beta, c, ldc, layout == CblasRowMajor, [&] {
      own_cblas<T>()(layout, ta, tb, m, n, k, alpha_arg, a_arg, lda, b_arg, ldb, beta_arg, c_arg,
                     ldc);
    });
    return;
  }
  const auto lay = static_cast<tandem::Layout>(layout);
  auto call = [&](const tandem::Options& o) {
    tandem::gemm<T>(lay, cblas_op(ta), cblas_op(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                    o);
  };
  Invalid invalid;
  try {
    call(routed<T>(m, n, k));
  } catch (const tandem::Error& e) {
    if (e.kind() == tandem::Error::Kind::InvalidArgument) {
      invalid.take(e);
    } else {
      recover(routine.c_str(), e, [&] { call(cpu_only()); });
    }
  } catch (const std::exception& e) {
    recover(routine.c_str(), e, [&] { call(cpu_only()); });
  }
  if (invalid.found) cblas_invalid(routine.c_str(), cblas_position(lay, invalid.position));
}

template <class T>
[[gnu::always_inline]] inline bool fortran_goes_straight(
    const Once& o, const char* transa, const char* transb, const blasint* m, const blasint* n,
    const blasint* k, const T* alpha, const T* a, const blasint* lda, const T* b,
    const blasint* ldb, const T* c, const blasint* ldc) {
  return goes_straight(o, TANDEM_COL_MAJOR, static_cast<int>(fortran_op(*transa)),
                       static_cast<int>(fortran_op(*transb)), *m, *n, *k, *alpha, a, *lda, b, *ldb,
                       c, *ldc);
}

// Every Fortran GEMM call that does not go straight to OpenBLAS (the entry's signature).
template <class T>
[[gnu::noinline]] void fortran_gemm(const char* transa, const char* transb, const blasint* m,
                                    const blasint* n, const blasint* k, const T* alpha, const T* a,
                                    const blasint* lda, const T* b, const blasint* ldb,
                                    const T* beta, T* c, const blasint* ldc) {
  static constexpr auto name =
      tandem::detail::xerbla_name(tandem::detail::precision_of<T>(), "gemm");
  if (fortran_goes_straight(once(), transa, transb, m, n, k, alpha, a, lda, b, ldb, c, ldc)) {
    straight_otherwise(*m, *n, *k, *alpha, *beta, c, *ldc, false, [&] {
      own_fortran<T>()(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    });
    return;
  }
  auto call = [&](const tandem::Options& o) {
    tandem::gemm<T>(tandem::Layout::ColMajor, fortran_op(*transa), fortran_op(*transb), *m, *n, *k,
                    *alpha, a, *lda, b, *ldb, *beta, c, *ldc, o);
  };
  Invalid invalid;
  try {
    call(routed<T>(*m, *n, *k));
  } catch (const tandem::Error& e) {
    if (e.kind() == tandem::Error::Kind::InvalidArgument) {
      invalid.take(e);
    } else {
      recover(name.c_str(), e, [&] { call(cpu_only()); });
    }
  } catch (const std::exception& e) {
    recover(name.c_str(), e, [&] { call(cpu_only()); });
  }
  // Fortran GEMM has no layout argument: its positions are one less than tandem's.
  if (invalid.found) fortran_invalid(name.c_str(), invalid.position - 1);
}

}  // namespace

// The exported entries. On x86-64 they are src/blas3/dropin/straight_x86_64.S, which jumps to
// OpenBLAS's own entry or to these (tandem_rest_*, with the same signatures); elsewhere these are
// the entries. Either way these apply the straight rule (straight::goes, which
// tests/straight_test.cpp holds the assembly to) before anything else.
#ifdef TANDEM_STRAIGHT_ASM
// The assembly reads the sizes and leading dimensions as 32-bit integers: an OpenBLAS built with
// 64-bit ones (INTERFACE64) needs the C++ entries.
static_assert(sizeof(blasint) == 4, "the assembly entries take 32-bit BLAS integers");
#define TANDEM_GEMM_ENTRY(name) __attribute__((visibility("hidden"))) tandem_rest_##name
#else
#define TANDEM_GEMM_ENTRY(name) TANDEM_EXPORT name
#endif

namespace straight = tandem::detail::dropin::straight;

namespace {

template <class T>
void cblas_entry(CBLAS_ORDER layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n,
                 blasint k, typename Cblas<T>::Scalar alpha, typename Cblas<T>::In a, blasint lda,
                 typename Cblas<T>::In b, blasint ldb, typename Cblas<T>::Scalar beta,
                 typename Cblas<T>::Out c, blasint ldc) {
  if (straight::goes(straight::most(), layout, ta, tb, m, n, k, Cblas<T>::value(alpha),
                     Cblas<T>::in(a), lda, Cblas<T>::in(b), ldb, Cblas<T>::in(c), ldc))
    return own_cblas<T>()(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  cblas_gemm<T>(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
void fortran_entry(const char* transa, const char* transb, const blasint* m, const blasint* n,
                   const blasint* k, const T* alpha, const T* a, const blasint* lda, const T* b,
                   const blasint* ldb, const T* beta, T* c, const blasint* ldc) {
  if (straight::goes(straight::most(), TANDEM_COL_MAJOR, straight::fortran_op(*transa),
                     straight::fortran_op(*transb), *m, *n, *k, *alpha, a, *lda, b, *ldb, c, *ldc))
    return own_fortran<T>()(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  fortran_gemm<T>(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

// The exported entries of one precision: T its element type, p its letter. The Fortran ones take
// every argument by reference, and only the real ones (src/blas3/dropin/blas_entries.hpp says why
// the hidden lengths are not declared); the CBLAS ones take cblas.h's types (Cblas<T>).
#define TANDEM_GEMM_ENTRIES(T, p)                                                                  \
  void TANDEM_GEMM_ENTRY(cblas_##p##gemm)(                                                         \
      const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,                             \
      const enum CBLAS_TRANSPOSE TransB, const blasint M, const blasint N, const blasint K,        \
      const Cblas<T>::Scalar alpha, Cblas<T>::In A, const blasint lda, Cblas<T>::In B,             \
      const blasint ldb, const Cblas<T>::Scalar beta, Cblas<T>::Out C, const blasint ldc) {        \
    cblas_entry<T>(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);           \
  }                                                                                                \
  void TANDEM_GEMM_ENTRY(p##gemm_)(const char* transa, const char* transb, const blasint* m,       \
                                   const blasint* n, const blasint* k, const T* alpha, const T* a, \
                                   const blasint* lda, const T* b, const blasint* ldb,             \
                                   const T* beta, T* c, const blasint* ldc) {                      \
    fortran_entry<T>(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                \
  }

extern "C" {
TANDEM_GEMM_ENTRIES(float, s)
TANDEM_GEMM_ENTRIES(double, d)
TANDEM_GEMM_ENTRIES(std::complex<float>, c)
TANDEM_GEMM_ENTRIES(std::complex<double>, z)
}  // extern "C"
