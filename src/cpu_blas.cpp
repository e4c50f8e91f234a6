// OpenBLAS behind cpu_blas.hpp: the row-major CBLAS calls and the process-wide thread count.
//
// The GEMM entry points are looked up in OpenBLAS's own library with dlsym rather than bound by
// name: when libtandem_blas.so is preloaded, the names cblas_sgemm and cblas_dgemm are tandem's,
// and calling them here would recurse.
#include "cpu_blas.hpp"

#include <cblas.h>
#include <dlfcn.h>

#include <climits>
#include <mutex>
#include <shared_mutex>
#include <sstream>
#include <stdexcept>

#include "after_fork.hpp"

namespace tandem::detail::cpu_blas {
namespace {

CBLAS_TRANSPOSE op(bool trans) { return trans ? CblasTrans : CblasNoTrans; }
blasint narrow(int64_t v) { return static_cast<blasint>(v); }

using sgemm_fn = decltype(&cblas_sgemm);
using dgemm_fn = decltype(&cblas_dgemm);

struct Entry {
  sgemm_fn sgemm = nullptr;
  dgemm_fn dgemm = nullptr;
};

// OpenBLAS's own cblas_sgemm and cblas_dgemm, found through the library that defines
// openblas_get_config (a name no drop-in interposes).
const Entry& entry() {
  static const Entry e = [] {
    Entry found;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&openblas_get_config), &info) != 0 &&
        info.dli_fname != nullptr) {
      if (void* lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL)) {
        found.sgemm = reinterpret_cast<sgemm_fn>(dlsym(lib, "cblas_sgemm"));
        found.dgemm = reinterpret_cast<dgemm_fn>(dlsym(lib, "cblas_dgemm"));
      }
    }
    if (found.sgemm == nullptr || found.dgemm == nullptr)
      throw std::runtime_error("cannot locate OpenBLAS's cblas_sgemm/cblas_dgemm");
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

bool fits(int64_t value) { return value >= 0 && value <= static_cast<int64_t>(INT_MAX); }

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  entry().sgemm(CblasRowMajor, op(trans_a), op(trans_b), narrow(m), narrow(n), narrow(k), alpha, a,
                narrow(lda), b, narrow(ldb), beta, c, narrow(ldc));
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
  entry().dgemm(CblasRowMajor, op(trans_a), op(trans_b), narrow(m), narrow(n), narrow(k), alpha, a,
                narrow(lda), b, narrow(ldb), beta, c, narrow(ldc));
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
