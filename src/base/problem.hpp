// A GEMM normalised to row-major, as the executor, the GPU share and the CPU share all see it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace tandem::detail {

namespace gpu {
struct KeptOn;  // gpu/share.hpp
}

// Elements spanned by a rows x cols row-major block with leading dimension ld.
inline int64_t span(int64_t rows, int64_t cols, int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols;
}

// C[m x n] = alpha * op(A) * op(B) + beta * C, all row-major with leading dimensions.
template <class T>
struct Problem {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  T alpha{};
  const T* a = nullptr;
  int64_t lda = 0;
  const T* b = nullptr;
  int64_t ldb = 0;
  T beta{};
  T* c = nullptr;
  int64_t ldc = 0;
  // Whether anyone reads the device's times (kernel seconds, whether commands were submitted):
  // a caller's Report, or the log. Reading them cost a small call about 2 us on the H100 host.
  bool timed = true;
  // Complex types: op(A) (op(B)) is the conjugate transpose. Only with trans_a (trans_b): BLAS's
  // operations are as stored, transposed and conjugate-transposed, never conjugated alone.
  bool conj_a = false, conj_b = false;
  // B, or A, kept on the devices between calls (a tandem::Resident operand, held by the caller
  // for the call): a discrete device that keeps a copy its kernel reads as it is computes from it
  // instead of sending the operand; null, or a device without one, sends it as usual.
  const gpu::KeptOn* kept_b = nullptr;
  const gpu::KeptOn* kept_a = nullptr;

  // Whether there is a product to compute (else C = beta * C, or nothing).
  bool has_product() const { return m > 0 && n > 0 && k > 0 && alpha != T(0); }

  // BLAS's letter for each operation: 'N', 'T' or 'C'.
  char op_a() const { return !trans_a ? 'N' : conj_a ? 'C' : 'T'; }
  char op_b() const { return !trans_b ? 'N' : conj_b ? 'C' : 'T'; }

  // A and B as the caller stored them: op(A) is m x k, so stored A is k x m when transposed.
  int64_t a_rows() const { return trans_a ? k : m; }
  int64_t a_cols() const { return trans_a ? m : k; }
  int64_t b_rows() const { return trans_b ? n : k; }
  int64_t b_cols() const { return trans_b ? k : n; }
  // Bytes each stored operand spans.
  size_t a_bytes() const { return static_cast<size_t>(span(a_rows(), a_cols(), lda)) * sizeof(T); }
  size_t b_bytes() const { return static_cast<size_t>(span(b_rows(), b_cols(), ldb)) * sizeof(T); }
  size_t c_bytes() const { return static_cast<size_t>(span(m, n, ldc)) * sizeof(T); }
};

// Problems held elsewhere, side by side (a batch's, or a run of them): where they start and how
// many. Passed instead of copies: a batch of 100,000 small products copied into new vectors cost
// it a third of its time in page faults.
template <class T>
struct Problems {
  const Problem<T>* data = nullptr;
  int64_t count = 0;
  // Every problem has the first one's m, n, k and alpha (a strided batch, or one group): what a
  // batch's plan reads of its shapes is read off the first, with no pass over the others (a pass
  // over 100,000 problems cost a batch of 16^3 products a tenth of its time on the H100 host).
  bool one_shape = false;
  const Problem<T>& operator[](int64_t i) const { return data[i]; }
  const Problem<T>& front() const { return data[0]; }
  const Problem<T>* begin() const { return data; }
  const Problem<T>* end() const { return data + count; }
  bool empty() const { return count == 0; }
  Problems from(int64_t first, int64_t n) const { return {data + first, n, one_shape}; }
};

// C = beta * C over rows x cols of a row-major view; beta = 0 writes zeros without reading C, so
// NaN there does not survive.
template <class T>
void scale(T* c, int64_t rows, int64_t cols, int64_t ldc, T beta) {
  if (beta == T(1)) return;
  for (int64_t i = 0; i < rows; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0))
      std::fill(row, row + cols, T(0));
    else
      for (int64_t j = 0; j < cols; ++j) row[j] *= beta;
  }
}

}  // namespace tandem::detail
