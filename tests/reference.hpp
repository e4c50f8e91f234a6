// Test helpers: operands in any layout with padded leading dimensions, a reference GEMM computed
// in double (complex<double> for the complex types) by plain loops, and an element-wise error
// bound scaled with k and the precision. Matrix::conj marks an operand whose op() is the conjugate
// transpose.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "base/precision.hpp"
#include "tandem/tandem.hpp"

namespace tandem::test {

// The real type of an element type (float for std::complex<float>), and the element's helpers.
template <class T>
using real_t = detail::real_type_t<T>;
template <class T>
constexpr bool kComplex = detail::is_complex(detail::precision_of<T>());

template <class T>
std::complex<double> widen(T x) {
  return std::complex<double>(x);
}
template <class T>
bool is_nan(T x) {
  if constexpr (kComplex<T>)
    return std::isnan(x.real()) || std::isnan(x.imag());
  else
    return std::isnan(x);
}
// A scalar from its double parts (the imaginary one dropped for a real type).
template <class T>
T scalar(std::complex<double> x) {
  if constexpr (kComplex<T>)
    return T(static_cast<real_t<T>>(x.real()), static_cast<real_t<T>>(x.imag()));
  else
    return static_cast<T>(x.real());
}

// A stored operand whose op() is rows x cols.
template <class T>
struct Matrix {
  Layout layout = Layout::RowMajor;
  bool trans = false;
  bool conj = false;  // op(X) is X's conjugate transpose (with trans)
  int64_t rows = 0, cols = 0, ld = 1;
  int64_t offset = 0;  // elements before the matrix: 1 misaligns it (no zero-copy)
  std::vector<T, Allocator<T>> data;
  T* ptr() { return data.data() + offset; }

  int64_t stored_rows() const { return trans ? cols : rows; }
  int64_t stored_cols() const { return trans ? rows : cols; }
  // Element (i, j) of op(X).
  size_t index(int64_t i, int64_t j) const {
    const int64_t r = trans ? j : i, c = trans ? i : j;
    return static_cast<size_t>(offset + (layout == Layout::RowMajor ? r * ld + c : c * ld + r));
  }
  T& at(int64_t i, int64_t j) { return data[index(i, j)]; }
  T at(int64_t i, int64_t j) const { return data[index(i, j)]; }
  // Element (i, j) of op(X), conjugated where op() conjugates.
  std::complex<double> op(int64_t i, int64_t j) const {
    const std::complex<double> x = widen(data[index(i, j)]);
    return conj ? std::conj(x) : x;
  }
  // Whether storage position p lies in the padding between leading dimension and extent.
  bool is_padding(size_t p) const {
    const int64_t inner = layout == Layout::RowMajor ? stored_cols() : stored_rows();
    const int64_t q = static_cast<int64_t>(p) - offset;
    return q < 0 || q % ld >= inner;
  }
};

template <class T>
Matrix<T> make_matrix(Layout layout, bool trans, int64_t rows, int64_t cols, int64_t pad,
                      std::mt19937_64& rng, T padding_value, int64_t offset = 0) {
  Matrix<T> m;
  m.offset = offset;
  m.layout = layout;
  m.trans = trans;
  m.rows = rows;
  m.cols = cols;
  const int64_t inner = layout == Layout::RowMajor ? m.stored_cols() : m.stored_rows();
  const int64_t outer = layout == Layout::RowMajor ? m.stored_rows() : m.stored_cols();
  m.ld = std::max<int64_t>(1, inner + pad);
  m.data.assign(static_cast<size_t>(offset + std::max<int64_t>(1, outer * m.ld)), padding_value);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double re = dist(rng);
      m.at(i, j) = scalar<T>({re, kComplex<T> ? dist(rng) : 0.0});
    }
  return m;
}

// C = alpha * op(A) * op(B) + beta * C0 in double (complex<double>), with bound[i, j] =
// sum |alpha a b| + |beta c|.
struct Reference {
  std::vector<std::complex<double>> value;
  std::vector<double> magnitude;
};

template <class T>
Reference reference(const Matrix<T>& a, const Matrix<T>& b, const Matrix<T>& c0,
                    std::complex<double> alpha, std::complex<double> beta) {
  const int64_t m = c0.rows, n = c0.cols, k = a.cols;
  Reference r;
  r.value.assign(static_cast<size_t>(m * n), 0.0);
  r.magnitude.assign(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      std::complex<double> sum = 0;
      double mag = 0;
      if (alpha != 0.0)
        for (int64_t p = 0; p < k; ++p) {
          const std::complex<double> x = a.op(i, p) * b.op(p, j);
          sum += x;
          mag += std::abs(x);
        }
      std::complex<double> v = alpha * sum;
      double bound = std::abs(alpha) * mag;
      if (beta != 0.0) {
        v += beta * widen(c0.at(i, j));
        bound += std::abs(beta * widen(c0.at(i, j)));
      }
      r.value[static_cast<size_t>(i * n + j)] = v;
      r.magnitude[static_cast<size_t>(i * n + j)] = bound;
    }
  return r;
}

// Every element within (k + 2) * eps * bound of the reference (twice that for slack in the
// accumulation order; a complex product's rounding is a few eps more, so four times), NaN never;
// padding of C unchanged. Returns the max relative error.
template <class T>
double expect_matches(const Matrix<T>& c, const Matrix<T>& c_before, const Reference& ref,
                      int64_t k, const std::string& what) {
  const double eps = std::numeric_limits<real_t<T>>::epsilon() * (kComplex<T> ? 2.0 : 1.0);
  double worst = 0;
  int failures = 0;
  for (int64_t i = 0; i < c.rows; ++i)
    for (int64_t j = 0; j < c.cols; ++j) {
      const size_t q = static_cast<size_t>(i * c.cols + j);
      const std::complex<double> got = widen(c.at(i, j));
      const double tol = 2.0 * static_cast<double>(k + 2) * eps * ref.magnitude[q] +
                         std::numeric_limits<real_t<T>>::min();
      const double err = std::abs(got - ref.value[q]);
      if (!(err <= tol)) {
        if (++failures <= 5)
          ADD_FAILURE() << what << ": C(" << i << "," << j << ") = " << got << ", expected "
                        << ref.value[q] << " (tolerance " << tol << ")";
      }
      if (ref.magnitude[q] > 0) worst = std::max(worst, err / ref.magnitude[q]);
    }
  for (size_t p = 0; p < c.data.size(); ++p)
    if (c.is_padding(p) &&
        !(c.data[p] == c_before.data[p] || (is_nan(c.data[p]) && is_nan(c_before.data[p])))) {
      ADD_FAILURE() << what << ": padding of C at storage index " << p << " was written";
      break;
    }
  EXPECT_EQ(failures, 0) << what << ": " << failures << " wrong elements";
  return worst;
}

// The extents of one call: op(A) is m x k, op(B) k x n.
struct Extents {
  int64_t m, n, k;
};

// Every operation on an operand: for complex elements the conjugate transpose too.
template <class T>
std::vector<Op> operations() {
  if (kComplex<T>) return {Op::NoTrans, Op::Trans, Op::ConjTrans};
  return {Op::NoTrans, Op::Trans};
}

// The kernel tests' walk over calls of element type T: both storage orders, every operation on
// each operand (operations<T>), each of `sizes`, f(layout, op_a, op_b, extents, alpha, beta, pad,
// seed) for each. alpha and beta walk through the nine pairs of {1, 0, -1.5}, where complex
// elements have -1.5i for -1.5: a scalar whose real part is 0 and which is not 0, which a rule
// that looked at the real part alone would take for 0. Every third call pads the operands by 3;
// `seed` and `combo` carry on from call to call, and from one walk to the next.
template <class T, class F>
void walk_calls(const std::vector<Extents>& sizes, uint64_t& seed, int& combo, F&& f) {
  const std::complex<double> values[] = {1.0, 0.0,
                                         kComplex<T> ? std::complex<double>(0.0, -1.5) : -1.5};
  const std::vector<Op> ops = operations<T>();
  for (Layout layout : {Layout::RowMajor, Layout::ColMajor})
    for (Op op_a : ops)
      for (Op op_b : ops)
        for (const Extents& size : sizes) {
          const std::complex<double> alpha = values[(combo / 3) % 3], beta = values[combo % 3];
          const int64_t pad = combo % 3 == 1 ? 3 : 0;
          ++combo;
          f(layout, op_a, op_b, size, alpha, beta, pad, ++seed);
        }
}

// One call of a kernel test, checked: random A, B and C of m x n x k in `layout` (leading
// dimensions `pad` past the rows, B's two more; each operand `offset` elements into its buffer),
// C NaN where beta = 0 (none of it may be read), run with `o`, compared with the reference.
// `what` gets the line that names the call, beginning with `name`. Returns the call's Report.
template <class T>
Report checked_call(const std::string& name, Layout layout, Op op_a, Op op_b, int64_t m, int64_t n,
                    int64_t k, std::complex<double> alpha, std::complex<double> beta, int64_t pad,
                    int64_t offset, uint64_t seed, const Options& o, std::string& what) {
  std::mt19937_64 rng(seed);
  const bool ta = op_a != Op::NoTrans, tb = op_b != Op::NoTrans;
  const T sentinel = static_cast<T>(-777.25);
  auto a = make_matrix<T>(layout, ta, m, k, pad, rng, sentinel, offset);
  auto b = make_matrix<T>(layout, tb, k, n, pad + 2, rng, sentinel, offset);
  auto c = make_matrix<T>(layout, false, m, n, pad, rng, sentinel, offset);
  a.conj = kComplex<T> && op_a == Op::ConjTrans;
  b.conj = kComplex<T> && op_b == Op::ConjTrans;
  if (beta == 0.0)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c.at(i, j) = std::numeric_limits<T>::quiet_NaN();
  const auto before = c;
  const Reference ref = reference(a, b, c, alpha, beta);
  std::ostringstream line;
  const auto op = [](Op x) { return x == Op::NoTrans ? "N" : x == Op::Trans ? "T" : "C"; };
  line << name << " " << (layout == Layout::RowMajor ? "row" : "col") << " " << op(op_a) << op(op_b)
       << " m=" << m << " n=" << n << " k=" << k << " alpha=" << alpha << " beta=" << beta
       << " pad=" << pad;
  what = line.str();
  Report r;
  gemm<T>(layout, op_a, op_b, m, n, k, scalar<T>(alpha), a.ptr(), a.ld, b.ptr(), b.ld,
          scalar<T>(beta), c.ptr(), c.ld, o, &r);
  expect_matches(c, before, ref, k, what);
  return r;
}

}  // namespace tandem::test
