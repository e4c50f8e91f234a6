// OpenBLAS behind cpu_blas.hpp: the row-major CBLAS calls and the process-wide thread count.
#include "cpu_blas.hpp"

#include <cblas.h>

#include <climits>
#include <mutex>
#include <sstream>

namespace tandem::detail::cpu_blas {
namespace {

CBLAS_TRANSPOSE op(bool trans) { return trans ? CblasTrans : CblasNoTrans; }
blasint narrow(int64_t v) { return static_cast<blasint>(v); }

std::mutex& threads_mutex() {
  static std::mutex m;
  return m;
}

int initial_threads() {
  static const int n = openblas_get_num_threads();
  return n;
}

}  // namespace

bool fits(int64_t value) { return value >= 0 && value <= static_cast<int64_t>(INT_MAX); }

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, op(trans_a), op(trans_b), narrow(m), narrow(n), narrow(k), alpha, a,
              narrow(lda), b, narrow(ldb), beta, c, narrow(ldc));
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
  cblas_dgemm(CblasRowMajor, op(trans_a), op(trans_b), narrow(m), narrow(n), narrow(k), alpha, a,
              narrow(lda), b, narrow(ldb), beta, c, narrow(ldc));
}

struct Threads::Lock {
  std::unique_lock<std::mutex> lock{threads_mutex()};
};

Threads::Threads(int threads) {
  const int before = initial_threads();  // captured before the first change
  lock_ = std::make_unique<Lock>();
  if (threads != before) openblas_set_num_threads(threads);
}

Threads::~Threads() {
  if (openblas_get_num_threads() != initial_threads()) openblas_set_num_threads(initial_threads());
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

int default_threads() { return initial_threads(); }

}  // namespace tandem::detail::cpu_blas
