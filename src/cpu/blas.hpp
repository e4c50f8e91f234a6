// The CPU BLAS (OpenBLAS), used only through this interface; blas.cpp is the one file that
// includes its headers.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <string>

namespace tandem::detail::cpu_blas {

// Row-major C[m x n] = alpha * op(A) * op(B) + beta * C with the thread count currently set;
// op_a and op_b are 'N', 'T' or 'C' (the conjugate transpose; for real types the same as 'T').
// Sizes must fit the BLAS's integer type (see fits()).
template <class T>
void gemm(char op_a, char op_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// The other level-3 routines, column-major with Fortran's conventions (uplo 'U' or 'L', trans
// 'N', 'T' or 'C' as each routine allows, side 'L' or 'R', diag 'U' or 'N'), arguments already
// checked (src/blas3/level3.cpp); for every element type, and hemm, herk and her2k for the complex
// ones, whose herk takes real alpha and beta and her2k a real beta.
template <class T>
void syrk(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta,
          T* c, int64_t ldc);
template <class T>
void syr2k(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
           const T* b, int64_t ldb, T beta, T* c, int64_t ldc);
template <class T>
void symm(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc);
template <class T>
void hemm(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc);
template <class T>
void herk(char uplo, char trans, int64_t n, int64_t k, typename T::value_type alpha, const T* a,
          int64_t lda, typename T::value_type beta, T* c, int64_t ldc);
template <class T>
void her2k(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
           const T* b, int64_t ldb, typename T::value_type beta, T* c, int64_t ldc);
template <class T>
void trmm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, T alpha, const T* a,
          int64_t lda, T* b, int64_t ldb);
template <class T>
void trsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, T alpha, const T* a,
          int64_t lda, T* b, int64_t ldb);

// OpenBLAS's own entry `name` (such as "cblas_sgemm" or "sgemm_"), found as the calls above are,
// or nullptr: for the drop-in's calls below its threshold, whose arguments pass straight through.
void* own_entry(const char* name);

// Whether a value fits the BLAS's integer arguments.
bool fits(int64_t value);

// While alive, the BLAS runs with `threads` threads. The BLAS's thread count is process-wide
// state: scopes that keep the program's current count run concurrently; a scope that changes it
// runs alone and puts back the count it found, so the program's own BLAS calls see their setting.
class Threads {
 public:
  explicit Threads(int threads);
  ~Threads();
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;

 private:
  struct Lock;
  std::unique_ptr<Lock> lock_;
};

std::string name();       // "OpenBLAS"
std::string version();    // e.g. "0.3.21"
std::string config();     // OpenBLAS's build configuration string
std::string core_type();  // the kernel set it chose, e.g. "Haswell"
int current_threads();    // the program's setting (OPENBLAS_NUM_THREADS, openblas_set_num_threads)

}  // namespace tandem::detail::cpu_blas
