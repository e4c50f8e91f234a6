// libtandem_blas.so: the drop-in BLAS. Exports cblas_sgemm, cblas_dgemm, sgemm_ and dgemm_ with
// the signatures of the system's cblas.h and of the Fortran BLAS; every other BLAS or LAPACK
// symbol keeps resolving to the system's library.
//
// Routing: a call with m*n*k below a threshold runs on the CPU BLAS without touching OpenCL, so
// programs that only do small products pay no OpenCL start-up; larger calls take the configured
// strategy (auto unless TANDEM_STRATEGY says otherwise). Either way tandem's own BLAS semantics
// apply (alpha = 0 never reads A or B, beta = 0 never reads C).
//
// Errors follow BLAS: an invalid argument calls xerbla_ (Fortran entries) or cblas_xerbla
// (CBLAS entries) with the routine's name and the argument's position, and C is untouched.
#include <cblas.h>

#include <cctype>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "config.hpp"
#include "cpu_blas.hpp"
#include "log.hpp"
#include "tandem/tandem.hpp"

#define TANDEM_EXPORT __attribute__((visibility("default")))

extern "C" void xerbla_(const char* name, const blasint* info, std::size_t name_len);

namespace {

// Until a tuned profile gives the size from which the GPU pays, products below 256^3 stay on
// the CPU BLAS: on every device measured so far (docs/PERFORMANCE.md) the CPU wins there.
constexpr double kDefaultMinMnk = 256.0 * 256.0 * 256.0;

tandem::Options route(int64_t m, int64_t n, int64_t k) {
  const auto& env = tandem::detail::env_config();
  const double threshold = env.min_mnk.value_or(kDefaultMinMnk);
  tandem::Options o;
  if (static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) < threshold) {
    o.strategy = tandem::Strategy::Cpu;
    // Keep the program's own OpenBLAS thread setting, so concurrent small calls stay concurrent.
    o.cpu_threads = tandem::detail::cpu_blas::current_threads();
  }
  return o;
}

tandem::Op cblas_op(int t) { return static_cast<tandem::Op>(t); }

// Fortran transpose characters; anything else becomes an invalid op that tandem reports.
tandem::Op fortran_op(char c) {
  switch (std::toupper(static_cast<unsigned char>(c))) {
    case 'N':
      return tandem::Op::NoTrans;
    case 'T':
      return tandem::Op::Trans;
    case 'C':
      return tandem::Op::ConjTrans;
    default:
      return static_cast<tandem::Op>(0);
  }
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

// A BLAS routine has no status to return, so a call that fails must still compute C: a GPU
// failure (even under TANDEM_STRATEGY=gpu) is retried on the CPU, with one warning. Only C lost to
// a GPU that failed after writing it in place is fatal: carrying on would hand back wrong numbers.
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

tandem::Options cpu_only() {
  tandem::Options o;
  o.strategy = tandem::Strategy::Cpu;
  return o;
}

template <class T>
void cblas_gemm(const char* routine, int layout, int ta, int tb, blasint m, blasint n, blasint k,
                T alpha, const T* a, blasint lda, const T* b, blasint ldb, T beta, T* c,
                blasint ldc) {
  const auto lay = static_cast<tandem::Layout>(layout);
  auto call = [&](const tandem::Options& o) {
    tandem::gemm<T>(lay, cblas_op(ta), cblas_op(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                    o);
  };
  try {
    call(route(m, n, k));
  } catch (const tandem::Error& e) {
    if (e.kind() == tandem::Error::Kind::InvalidArgument) {
      // As the reference CBLAS: the position and routine name, an empty message (the system's
      // cblas_xerbla prints its own). OpenBLAS's cblas.h declares the strings non-const.
      std::string name(routine), form;
      cblas_xerbla(cblas_position(lay, e.argument()), name.data(), form.data());
    } else {
      recover(routine, e, [&] { call(cpu_only()); });
    }
  } catch (const std::exception& e) {
    recover(routine, e, [&] { call(cpu_only()); });
  }
}

template <class T>
void fortran_gemm(const char* name, const char* transa, const char* transb, const blasint* m,
                  const blasint* n, const blasint* k, const T* alpha, const T* a,
                  const blasint* lda, const T* b, const blasint* ldb, const T* beta, T* c,
                  const blasint* ldc) {
  auto call = [&](const tandem::Options& o) {
    tandem::gemm<T>(tandem::Layout::ColMajor, fortran_op(*transa), fortran_op(*transb), *m, *n, *k,
                    *alpha, a, *lda, b, *ldb, *beta, c, *ldc, o);
  };
  try {
    call(route(*m, *n, *k));
  } catch (const tandem::Error& e) {
    if (e.kind() == tandem::Error::Kind::InvalidArgument) {
      // Fortran GEMM has no layout argument: its positions are one less than tandem's.
      const blasint info = e.argument() - 1;
      xerbla_(name, &info, 6);
    } else {
      recover(name, e, [&] { call(cpu_only()); });
    }
  } catch (const std::exception& e) {
    recover(name, e, [&] { call(cpu_only()); });
  }
}

}  // namespace

extern "C" {

TANDEM_EXPORT void cblas_sgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
                               const enum CBLAS_TRANSPOSE TransB, const blasint M, const blasint N,
                               const blasint K, const float alpha, const float* A,
                               const blasint lda, const float* B, const blasint ldb,
                               const float beta, float* C, const blasint ldc) {
  cblas_gemm<float>("cblas_sgemm", Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C,
                    ldc);
}

TANDEM_EXPORT void cblas_dgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
                               const enum CBLAS_TRANSPOSE TransB, const blasint M, const blasint N,
                               const blasint K, const double alpha, const double* A,
                               const blasint lda, const double* B, const blasint ldb,
                               const double beta, double* C, const blasint ldc) {
  cblas_gemm<double>("cblas_dgemm", Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C,
                     ldc);
}

// The Fortran BLAS entries, as gfortran calls them: every argument by reference, then the hidden
// lengths of the two character arguments.
TANDEM_EXPORT void sgemm_(const char* transa, const char* transb, const blasint* m,
                          const blasint* n, const blasint* k, const float* alpha, const float* a,
                          const blasint* lda, const float* b, const blasint* ldb, const float* beta,
                          float* c, const blasint* ldc, std::size_t, std::size_t) {
  fortran_gemm<float>("SGEMM ", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

TANDEM_EXPORT void dgemm_(const char* transa, const char* transb, const blasint* m,
                          const blasint* n, const blasint* k, const double* alpha, const double* a,
                          const blasint* lda, const double* b, const blasint* ldb,
                          const double* beta, double* c, const blasint* ldc, std::size_t,
                          std::size_t) {
  fortran_gemm<double>("DGEMM ", transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // extern "C"
