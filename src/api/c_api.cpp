// The C interface: forwards to tandem::gemm<T> (s, d, c, z) and turns every exception into a status
// and a per-thread message. Nothing is thrown across this boundary.
#include <complex>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>

#include "tandem/tandem.h"
#include "tandem/tandem.hpp"

namespace {

thread_local std::string t_last_error;

template <class T>
int call(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
         int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) noexcept {
  try {
    t_last_error.clear();
    tandem::gemm<T>(static_cast<tandem::Layout>(layout), static_cast<tandem::Op>(trans_a),
                    static_cast<tandem::Op>(trans_b), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return 0;
  } catch (const tandem::Error& e) {
    t_last_error = e.what();
    switch (e.kind()) {
      case tandem::Error::Kind::InvalidArgument:
        return e.argument();
      case tandem::Error::Kind::TooLarge:
        return TANDEM_ERROR_TOO_LARGE;
      default:
        return TANDEM_ERROR_RUNTIME;
    }
  } catch (const std::bad_alloc&) {
    t_last_error = "out of host memory";
  } catch (const std::exception& e) {
    t_last_error = e.what();
  } catch (...) {
    t_last_error = "unknown error";
  }
  return TANDEM_ERROR_RUNTIME;
}

}  // namespace

extern "C" int tandem_sgemm(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                            float beta, float* c, int64_t ldc) {
  return call<float>(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

extern "C" int tandem_dgemm(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            double alpha, const double* a, int64_t lda, const double* b,
                            int64_t ldb, double beta, double* c, int64_t ldc) {
  return call<double>(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

namespace {

// The complex forms take alpha and beta by address, as CBLAS does; a NULL one is an invalid
// argument at its position (7, 12), C untouched.
template <class T>
int complex_call(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                 const void* alpha, const void* a, int64_t lda, const void* b, int64_t ldb,
                 const void* beta, void* c, int64_t ldc) noexcept {
  const char* routine = std::is_same_v<T, std::complex<float>> ? "cgemm" : "zgemm";
  for (const auto& [scalar, position, name] :
       {std::tuple{alpha, 7, "alpha"}, std::tuple{beta, 12, "beta"}})
    if (scalar == nullptr) {
      t_last_error = std::string(routine) + ": argument " + std::to_string(position) + " (" + name +
                     ") is NULL";
      return position;
    }
  return call<T>(layout, trans_a, trans_b, m, n, k, *static_cast<const T*>(alpha),
                 static_cast<const T*>(a), lda, static_cast<const T*>(b), ldb,
                 *static_cast<const T*>(beta), static_cast<T*>(c), ldc);
}

}  // namespace

extern "C" int tandem_cgemm(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            const void* alpha, const void* a, int64_t lda, const void* b,
                            int64_t ldb, const void* beta, void* c, int64_t ldc) {
  return complex_call<std::complex<float>>(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb,
                                           beta, c, ldc);
}

extern "C" int tandem_zgemm(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            const void* alpha, const void* a, int64_t lda, const void* b,
                            int64_t ldb, const void* beta, void* c, int64_t ldc) {
  return complex_call<std::complex<double>>(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b,
                                            ldb, beta, c, ldc);
}

extern "C" const char* tandem_last_error(void) { return t_last_error.c_str(); }

// The header this library was built with names its version, so a program can compare the two.
extern "C" const char* tandem_version(void) { return TANDEM_VERSION_STRING; }
