// The level-3 BLAS routines besides gemm (syrk, syr2k, symm, trmm, trsm for every element type;
// hemm, herk, her2k for the complex ones), in column-major (Fortran) terms. Each checks its
// arguments as the reference BLAS does and applies BLAS's own rules for alpha = 0, beta = 0 and
// empty calls itself; then a call whose products are worth a device runs as blocked updates: its
// large off-diagonal products go through the caller's GEMM (tandem's, so through the hybrid split),
// and its diagonal blocks, once too small for a device, go to the CPU BLAS. A call too small for a
// device goes to the CPU BLAS whole.
#pragma once

#include <cstdint>

namespace tandem::detail::level3 {

// What a routine needs from the caller: the GEMM its large products go through, and whether a
// product is worth sending there (the drop-in's routing rule; beta as the product will have it,
// since a C that is read crosses the bus twice). Both column-major, with the
// arguments of gemm (op(A) is m x k, op(B) is k x n; op_a and op_b are 'N', 'T' or 'C', the
// conjugate transpose, which only a complex T is given).
template <class T>
class Products {
 public:
  virtual ~Products() = default;
  virtual bool offloads(char op_a, char op_b, int64_t m, int64_t n, int64_t k, const T* a,
                        int64_t lda, const T* b, int64_t ldb, T beta, const T* c, int64_t ldc) = 0;
  virtual void gemm(char op_a, char op_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                    int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) = 0;
  // Whether a block of this size is small enough that its CPU BLAS call runs as the program's
  // own would, taking no lock (the drop-in's threshold). Larger blocks wait for any tandem call
  // that has lent OpenBLAS another thread count.
  virtual bool below_threshold(int64_t m, int64_t n, int64_t k) {
    (void)m, (void)n, (void)k;
    return false;
  }
  // The smallest diagonal block a halving may leave to the CPU BLAS: a block whose halves would
  // be smaller goes to the CPU BLAS whole, whatever its product would gain, since the CPU BLAS
  // runs small diagonal blocks far below the rate of the block they came from. 0: no limit.
  virtual int64_t min_diagonal() { return 0; }
};

// The routines, with the reference's arguments (characters as Fortran passes them, either case).
// An invalid argument throws tandem::Error (InvalidArgument) whose argument() is its position in
// the Fortran call, the first invalid one in the reference's order; nothing is then written.
// A complex syrk and syr2k take trans 'N' or 'T'; herk and her2k 'N' or 'C' (the conjugate
// transpose), and leave C's diagonal real, as the reference does; hemm reads only the real part
// of A's diagonal. For a real T, 'C' is 'T'.
template <class T>
void syrk(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta,
          T* c, int64_t ldc, Products<T>& products);
template <class T>
void syr2k(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
           const T* b, int64_t ldb, T beta, T* c, int64_t ldc, Products<T>& products);
template <class T>
void symm(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc, Products<T>& products);
template <class T>
void hemm(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc, Products<T>& products);
template <class T>
void herk(char uplo, char trans, int64_t n, int64_t k, typename T::value_type alpha, const T* a,
          int64_t lda, typename T::value_type beta, T* c, int64_t ldc, Products<T>& products);
template <class T>
void her2k(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
           const T* b, int64_t ldb, typename T::value_type beta, T* c, int64_t ldc,
           Products<T>& products);
template <class T>
void trmm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, T alpha, const T* a,
          int64_t lda, T* b, int64_t ldb, Products<T>& products);
template <class T>
void trsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, T alpha, const T* a,
          int64_t lda, T* b, int64_t ldb, Products<T>& products);

}  // namespace tandem::detail::level3
