// OpenBLAS behind blas.hpp: the level-3 CBLAS calls (every routine in all four precisions, and
// the complex ones' hemm, herk and her2k) and the process-wide thread count.
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
CBLAS_SIDE side_of(char c) { return c == 'L' ? CblasLeft : CblasRight; }
CBLAS_DIAG diag_of(char c) { return c == 'U' ? CblasUnit : CblasNonUnit; }

// A scalar as cblas.h passes it: a real one by value, a complex one by address.
template <class T>
auto scalar(const T& x) {
  if constexpr (is_complex(precision_of<T>()))
    return static_cast<const void*>(&x);
  else
    return x;
}

// OpenBLAS's own level-3 CBLAS entries for one element type, typed by the system's cblas.h; the
// complex types also have the Hermitian routines.
template <class T>
struct Routines;
#define TANDEM_LEVEL3(p)                       \
  decltype(&cblas_##p##gemm) gemm = nullptr;   \
  decltype(&cblas_##p##syrk) syrk = nullptr;   \
  decltype(&cblas_##p##syr2k) syr2k = nullptr; \
  decltype(&cblas_##p##symm) symm = nullptr;   \
  decltype(&cblas_##p##trmm) trmm = nullptr;   \
  decltype(&cblas_##p##trsm) trsm = nullptr;
#define TANDEM_HERMITIAN(p)                  \
  decltype(&cblas_##p##hemm) hemm = nullptr; \
  decltype(&cblas_##p##herk) herk = nullptr; \
  decltype(&cblas_##p##her2k) her2k = nullptr;
template <>
struct Routines<float> {
  TANDEM_LEVEL3(s)
};
template <>
struct Routines<double> {
  TANDEM_LEVEL3(d)
};
template <>
struct Routines<std::complex<float>> {
  TANDEM_LEVEL3(c)
  TANDEM_HERMITIAN(c)
};
template <>
struct Routines<std::complex<double>> {
  TANDEM_LEVEL3(z)
  TANDEM_HERMITIAN(z)
};
#undef TANDEM_LEVEL3
#undef TANDEM_HERMITIAN

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

// One element type's entries, by their CBLAS names; `missing` collects those not found.
template <class T>
Routines<T> find_routines(std::string& missing) {
  void* lib = library();
  auto find = [&](auto& f, const char* routine) {
    const RoutineName name = cblas_name(precision_of<T>(), routine);
    f = lib != nullptr
            ? reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib, name.c_str()))
            : nullptr;
    if (f == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name.c_str();
  };
  Routines<T> r;
  find(r.gemm, "gemm");
  find(r.syrk, "syrk");
  find(r.syr2k, "syr2k");
  find(r.symm, "symm");
  find(r.trmm, "trmm");
  find(r.trsm, "trsm");
  if constexpr (is_complex(precision_of<T>())) {
    find(r.hemm, "hemm");
    find(r.herk, "herk");
    find(r.her2k, "her2k");
  }
  return r;
}

// Every element type's entries, found once; a missing one fails every call.
struct Entries {
  Routines<float> s;
  Routines<double> d;
  Routines<std::complex<float>> c;
  Routines<std::complex<double>> z;
};

const Entries& entries() {
  static const Entries e = [] {
    std::string missing;
    Entries found{find_routines<float>(missing), find_routines<double>(missing),
                  find_routines<std::complex<float>>(missing),
                  find_routines<std::complex<double>>(missing)};
    if (!missing.empty()) throw std::runtime_error("cannot locate OpenBLAS's " + missing);
    return found;
  }();
  return e;
}

template <class T>
const Routines<T>& routines() {
  const Entries& e = entries();
  if constexpr (std::is_same_v<T, float>)
    return e.s;
  else if constexpr (std::is_same_v<T, double>)
    return e.d;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return e.c;
  else
    return e.z;
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
  routines<T>().gemm(CblasRowMajor, op(op_a), op(op_b), narrow(m), narrow(n), narrow(k),
                     scalar(alpha), a, narrow(lda), b, narrow(ldb), scalar(beta), c, narrow(ldc));
}

template <class T>
void syrk(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta,
          T* c, int64_t ldc) {
  routines<T>().syrk(CblasColMajor, uplo_of(uplo), op(trans), narrow(n), narrow(k), scalar(alpha),
                     a, narrow(lda), scalar(beta), c, narrow(ldc));
}

template <class T>
void syr2k(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
           const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  routines<T>().syr2k(CblasColMajor, uplo_of(uplo), op(trans), narrow(n), narrow(k), scalar(alpha),
                      a, narrow(lda), b, narrow(ldb), scalar(beta), c, narrow(ldc));
}

template <class T>
void symm(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  routines<T>().symm(CblasColMajor, side_of(side), uplo_of(uplo), narrow(m), narrow(n),
                     scalar(alpha), a, narrow(lda), b, narrow(ldb), scalar(beta), c, narrow(ldc));
}

template <class T>
void hemm(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  routines<T>().hemm(CblasColMajor, side_of(side), uplo_of(uplo), narrow(m), narrow(n),
                     scalar(alpha), a, narrow(lda), b, narrow(ldb), scalar(beta), c, narrow(ldc));
}

template <class T>
void herk(char uplo, char trans, int64_t n, int64_t k, typename T::value_type alpha, const T* a,
          int64_t lda, typename T::value_type beta, T* c, int64_t ldc) {
  routines<T>().herk(CblasColMajor, uplo_of(uplo), op(trans), narrow(n), narrow(k), alpha, a,
                     narrow(lda), beta, c, narrow(ldc));
}

template <class T>
void her2k(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
           const T* b, int64_t ldb, typename T::value_type beta, T* c, int64_t ldc) {
  routines<T>().her2k(CblasColMajor, uplo_of(uplo), op(trans), narrow(n), narrow(k), scalar(alpha),
                      a, narrow(lda), b, narrow(ldb), beta, c, narrow(ldc));
}

template <class T>
void trmm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, T alpha, const T* a,
          int64_t lda, T* b, int64_t ldb) {
  routines<T>().trmm(CblasColMajor, side_of(side), uplo_of(uplo), op(trans), diag_of(diag),
                     narrow(m), narrow(n), scalar(alpha), a, narrow(lda), b, narrow(ldb));
}

template <class T>
void trsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, T alpha, const T* a,
          int64_t lda, T* b, int64_t ldb) {
  routines<T>().trsm(CblasColMajor, side_of(side), uplo_of(uplo), op(trans), diag_of(diag),
                     narrow(m), narrow(n), scalar(alpha), a, narrow(lda), b, narrow(ldb));
}

#define INSTANTIATE(T)                                                                             \
  template void gemm<T>(char, char, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*,     \
                        int64_t, T, T*, int64_t);                                                  \
  template void syrk<T>(char, char, int64_t, int64_t, T, const T*, int64_t, T, T*, int64_t);       \
  template void syr2k<T>(char, char, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, \
                         T*, int64_t);                                                             \
  template void symm<T>(char, char, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T,  \
                        T*, int64_t);                                                              \
  template void trmm<T>(char, char, char, char, int64_t, int64_t, T, const T*, int64_t, T*,        \
                        int64_t);                                                                  \
  template void trsm<T>(char, char, char, char, int64_t, int64_t, T, const T*, int64_t, T*,        \
                        int64_t);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE
#define INSTANTIATE(T)                                                                            \
  template void hemm<T>(char, char, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, \
                        T*, int64_t);                                                             \
  template void herk<T>(char, char, int64_t, int64_t, T::value_type, const T*, int64_t,           \
                        T::value_type, T*, int64_t);                                              \
  template void her2k<T>(char, char, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t,   \
                         T::value_type, T*, int64_t);
INSTANTIATE(std::complex<float>)
INSTANTIATE(std::complex<double>)
#undef INSTANTIATE

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
