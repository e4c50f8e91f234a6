// OpenBLAS behind blas.hpp: the level-3 CBLAS calls (gemm in all four precisions) and the
// process-wide thread count.
//
// The level-3 entry points are looked up in OpenBLAS's own library with dlsym rather than bound
// by name: when libtandem_blas.so is preloaded, names such as cblas_sgemm and cblas_ssyrk are
// tandem's, and calling them here would recurse.
#include "cpu/blas.hpp"

#include <cblas.h>
#include <dlfcn.h>

#include <array>
#include <climits>
#include <complex>
#include <mutex>
#include <shared_mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "base/after_fork.hpp"
#include "base/precision.hpp"

namespace tandem::detail::cpu_blas {
namespace {

CBLAS_TRANSPOSE op(char c) {
  return c == 'N' ? CblasNoTrans : c == 'C' ? CblasConjTrans : CblasTrans;
}
blasint narrow(int64_t v) { return static_cast<blasint>(v); }

CBLAS_UPLO uplo_of(char c) { return c == 'U' ? CblasUpper : CblasLower; }
CBLAS_TRANSPOSE trans_of(char c) { return c == 'N' ? CblasNoTrans : CblasTrans; }
CBLAS_SIDE side_of(char c) { return c == 'L' ? CblasLeft : CblasRight; }
CBLAS_DIAG diag_of(char c) { return c == 'U' ? CblasUnit : CblasNonUnit; }

// OpenBLAS's own level-3 CBLAS entries.
struct Entry {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  decltype(&cblas_cgemm) cgemm = nullptr;
  decltype(&cblas_zgemm) zgemm = nullptr;
  decltype(&cblas_ssyrk) ssyrk = nullptr;
  decltype(&cblas_dsyrk) dsyrk = nullptr;
  decltype(&cblas_ssyr2k) ssyr2k = nullptr;
  decltype(&cblas_dsyr2k) dsyr2k = nullptr;
  decltype(&cblas_ssymm) ssymm = nullptr;
  decltype(&cblas_dsymm) dsymm = nullptr;
  decltype(&cblas_strmm) strmm = nullptr;
  decltype(&cblas_dtrmm) dtrmm = nullptr;
  decltype(&cblas_strsm) strsm = nullptr;
  decltype(&cblas_dtrsm) dtrsm = nullptr;
};

template <class F>
void find(void* lib, const char* name, F& f, std::string& missing) {
  f = lib != nullptr ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
  if (f == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
}

// OpenBLAS's library: the one that defines openblas_get_config (a name no drop-in interposes).
void* library() {
  static void* const lib = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&openblas_get_config), &info) == 0 ||
        info.dli_fname == nullptr)
      return static_cast<void*>(nullptr);
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
  }();
  return lib;
}

const Entry& entry() {
  static const Entry e = [] {
    Entry found;
    void* lib = library();
    std::string missing;
    find(lib, "cblas_sgemm", found.sgemm, missing);
    find(lib, "cblas_dgemm", found.dgemm, missing);
    find(lib, "cblas_cgemm", found.cgemm, missing);
    find(lib, "cblas_zgemm", found.zgemm, missing);
    find(lib, "cblas_ssyrk", found.ssyrk, missing);
    find(lib, "cblas_dsyrk", found.dsyrk, missing);
    find(lib, "cblas_ssyr2k", found.ssyr2k, missing);
    find(lib, "cblas_dsyr2k", found.dsyr2k, missing);
    find(lib, "cblas_ssymm", found.ssymm, missing);
    find(lib, "cblas_dsymm", found.dsymm, missing);
    find(lib, "cblas_strmm", found.strmm, missing);
    find(lib, "cblas_dtrmm", found.dtrmm, missing);
    find(lib, "cblas_strsm", found.strsm, missing);
    find(lib, "cblas_dtrsm", found.dtrsm, missing);
    if (!missing.empty()) throw std::runtime_error("cannot locate OpenBLAS's " + missing);
    return found;
  }();
  return e;
}

// Shared by scopes that keep OpenBLAS's own thread count (calls run concurrently), exclusive for
// a scope that changes it.
std::shared_mutex& threads_mutex() {
  static std::shared_mutex& m = []() -> std::shared_mutex& {
    auto* fresh = new std::shared_mutex;  // never destroyed: a fork handler holds it
    after_fork::hold(*fresh, after_fork::Rank::BlasThreads);
    return *fresh;
  }();
  return m;
}

}  // namespace

void* own_entry(const char* name) {
  void* lib = library();
  return lib != nullptr ? dlsym(lib, name) : nullptr;
}

bool fits(int64_t value) { return value >= 0 && value <= static_cast<int64_t>(INT_MAX); }

template <class T>
void gemm(char op_a, char op_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const auto [M, N, K, LDA, LDB, LDC] =
      std::array{narrow(m), narrow(n), narrow(k), narrow(lda), narrow(ldb), narrow(ldc)};
  const Entry& e = entry();
  if constexpr (std::is_same_v<T, float>)
    e.sgemm(CblasRowMajor, op(op_a), op(op_b), M, N, K, alpha, a, LDA, b, LDB, beta, c, LDC);
  else if constexpr (std::is_same_v<T, double>)
    e.dgemm(CblasRowMajor, op(op_a), op(op_b), M, N, K, alpha, a, LDA, b, LDB, beta, c, LDC);
  else if constexpr (std::is_same_v<T,
                                    std::complex<float>>)  // scalars by address, as CBLAS has them
    e.cgemm(CblasRowMajor, op(op_a), op(op_b), M, N, K, &alpha, a, LDA, b, LDB, &beta, c, LDC);
  else
    e.zgemm(CblasRowMajor, op(op_a), op(op_b), M, N, K, &alpha, a, LDA, b, LDB, &beta, c, LDC);
}

#define INSTANTIATE(T)                                                                         \
  template void gemm<T>(char, char, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, \
                        int64_t, T, T*, int64_t);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

void syrk(char uplo, char trans, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          float beta, float* c, int64_t ldc) {
  entry().ssyrk(CblasColMajor, uplo_of(uplo), trans_of(trans), narrow(n), narrow(k), alpha, a,
                narrow(lda), beta, c, narrow(ldc));
}

void syr2k(char uplo, char trans, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  entry().ssyr2k(CblasColMajor, uplo_of(uplo), trans_of(trans), narrow(n), narrow(k), alpha, a,
                 narrow(lda), b, narrow(ldb), beta, c, narrow(ldc));
}

void symm(char side, char uplo, int64_t m, int64_t n, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  entry().ssymm(CblasColMajor, side_of(side), uplo_of(uplo), narrow(m), narrow(n), alpha, a,
                narrow(lda), b, narrow(ldb), beta, c, narrow(ldc));
}

void trmm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, float alpha,
          const float* a, int64_t lda, float* b, int64_t ldb) {
  entry().strmm(CblasColMajor, side_of(side), uplo_of(uplo), trans_of(trans), diag_of(diag),
                narrow(m), narrow(n), alpha, a, narrow(lda), b, narrow(ldb));
}

void trsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, float alpha,
          const float* a, int64_t lda, float* b, int64_t ldb) {
  entry().strsm(CblasColMajor, side_of(side), uplo_of(uplo), trans_of(trans), diag_of(diag),
                narrow(m), narrow(n), alpha, a, narrow(lda), b, narrow(ldb));
}

void syrk(char uplo, char trans, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          double beta, double* c, int64_t ldc) {
  entry().dsyrk(CblasColMajor, uplo_of(uplo), trans_of(trans), narrow(n), narrow(k), alpha, a,
                narrow(lda), beta, c, narrow(ldc));
}

void syr2k(char uplo, char trans, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  entry().dsyr2k(CblasColMajor, uplo_of(uplo), trans_of(trans), narrow(n), narrow(k), alpha, a,
                 narrow(lda), b, narrow(ldb), beta, c, narrow(ldc));
}

void symm(char side, char uplo, int64_t m, int64_t n, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  entry().dsymm(CblasColMajor, side_of(side), uplo_of(uplo), narrow(m), narrow(n), alpha, a,
                narrow(lda), b, narrow(ldb), beta, c, narrow(ldc));
}

void trmm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, double alpha,
          const double* a, int64_t lda, double* b, int64_t ldb) {
  entry().dtrmm(CblasColMajor, side_of(side), uplo_of(uplo), trans_of(trans), diag_of(diag),
                narrow(m), narrow(n), alpha, a, narrow(lda), b, narrow(ldb));
}

void trsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, double alpha,
          const double* a, int64_t lda, double* b, int64_t ldb) {
  entry().dtrsm(CblasColMajor, side_of(side), uplo_of(uplo), trans_of(trans), diag_of(diag),
                narrow(m), narrow(n), alpha, a, narrow(lda), b, narrow(ldb));
}

struct Threads::Lock {
  std::shared_lock<std::shared_mutex> shared;
  std::unique_lock<std::shared_mutex> exclusive;
  int restore = 0;
};

Threads::Threads(int threads) : lock_(std::make_unique<Lock>()) {
  // No exclusive scope runs while the shared lock is held, so the count read here is the
  // program's own (it may have changed it since the last call).
  lock_->shared = std::shared_lock<std::shared_mutex>(threads_mutex());
  if (openblas_get_num_threads() == threads) return;
  lock_->shared.unlock();
  lock_->exclusive = std::unique_lock<std::shared_mutex>(threads_mutex());
  lock_->restore = openblas_get_num_threads();
  if (lock_->restore != threads) openblas_set_num_threads(threads);
}

Threads::~Threads() {
  if (lock_->exclusive.owns_lock() && openblas_get_num_threads() != lock_->restore)
    openblas_set_num_threads(lock_->restore);
}

std::string name() { return "OpenBLAS"; }

std::string config() {
  const char* c = openblas_get_config();
  return c != nullptr ? c : "";
}

std::string version() {
  // The configuration string starts "OpenBLAS 0.3.21 ..."; the version is its second word.
  std::istringstream words(config());
  std::string first, second;
  words >> first >> second;
  return first == "OpenBLAS" ? second : std::string("unknown");
}

std::string core_type() {
  const char* c = openblas_get_corename();
  return c != nullptr ? c : "";
}

int current_threads() {
  std::shared_lock<std::shared_mutex> lock(threads_mutex());
  return openblas_get_num_threads();
}

}  // namespace tandem::detail::cpu_blas
