// The level-3 routines (src/blas3/level3.cpp) against plain loops in double (complex<double> for
// the complex types), on random inputs of awkward sizes, every side, triangle, transpose
// (conjugating ones included) and diagonal, in all four precisions, with their products routed
// three ways: never off the CPU (one CPU BLAS call), always (halving down to 1 x 1 blocks), and
// above a size (a mix). Also BLAS's rules: NaN in an operand alpha = 0 or beta = 0 says is not
// read stays out of the result, the triangle a routine does not own is untouched, a unit diagonal
// and A's other triangle are never read (nor the imaginary part of hemm's diagonal), herk and her2k
// leave C's diagonal real, and invalid arguments are reported at the reference's positions with
// nothing written.
#include "blas3/level3.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/precision.hpp"
#include "reference.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail::level3 {
namespace {

using test::kComplex;
using test::widen;
using Z = std::complex<double>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// NaN in every part of an element.
template <class T>
T nan_value() {
  return test::scalar<T>({kNaN, kNaN});
}

Op op_of(char c) { return c == 'N' ? Op::NoTrans : c == 'C' ? Op::ConjTrans : Op::Trans; }

// Routes products by size: offloads those with m*n*k >= `from` (0: all, -1: none), computing
// them with tandem::gemm on the CPU, and counts them.
template <class T>
class Sized final : public Products<T> {
 public:
  explicit Sized(double from) : from_(from) {}
  bool offloads(char, char, int64_t m, int64_t n, int64_t k, const T*, int64_t, const T*, int64_t,
                T, const T*, int64_t) override {
    return from_ >= 0 &&
           static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) >= from_;
  }
  void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
            const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    EXPECT_TRUE(kComplex<T> || (ta != 'C' && tb != 'C')) << "a real product conjugates";
    Options o;
    o.strategy = Strategy::Cpu;
    tandem::gemm<T>(Layout::ColMajor, op_of(ta), op_of(tb), m, n, k, alpha, a, lda, b, ldb, beta, c,
                    ldc, o);
    ++products;
  }
  int64_t min_diagonal() override { return min_diag; }
  int products = 0;
  int64_t min_diag = 0;

 private:
  double from_;
};

// A column-major rows x cols matrix with leading dimension rows + pad, filled at random (both
// parts of a complex element); the padding holds NaN, so a routine that reads it spoils its
// result.
template <class T>
struct Mat {
  int64_t rows, cols, ld;
  std::vector<T> v;
  Mat(int64_t r, int64_t c, int64_t pad, std::mt19937_64& rng) : rows(r), cols(c), ld(r + pad) {
    v.assign(static_cast<size_t>(std::max<int64_t>(1, ld * std::max<int64_t>(1, c))),
             nan_value<T>());
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t j = 0; j < c; ++j)
      for (int64_t i = 0; i < r; ++i) {
        const double re = u(rng);
        at(i, j) = test::scalar<T>({re, kComplex<T> ? u(rng) : 0.0});
      }
  }
  T& at(int64_t i, int64_t j) { return v[static_cast<size_t>(i + j * ld)]; }
  T at(int64_t i, int64_t j) const { return v[static_cast<size_t>(i + j * ld)]; }
  Z z(int64_t i, int64_t j) const { return widen(at(i, j)); }
  T* p() { return v.data(); }
};

template <class T>
double tolerance(int64_t k) {
  return (std::is_same_v<test::real_t<T>, float> ? 2e-5 : 1e-12) * (kComplex<T> ? 2 : 1) *
         static_cast<double>(k + 4);
}

template <class T>
void expect_near(const Mat<T>& got, const std::vector<Z>& want, int64_t k,
                 const std::string& what) {
  int bad = 0;
  for (int64_t j = 0; j < got.cols; ++j)
    for (int64_t i = 0; i < got.rows; ++i) {
      const Z w = want[static_cast<size_t>(i + j * got.rows)];
      const Z g = got.z(i, j);
      const bool ok = test::is_nan(w) ? test::is_nan(g)
                                      : std::abs(g - w) <= tolerance<T>(k) * (1 + std::abs(w));
      if (!ok && ++bad <= 3)
        ADD_FAILURE() << what << ": (" << i << ", " << j << ") is " << g << ", want " << w;
    }
  // The padding is never written.
  for (int64_t j = 0; j < got.cols; ++j)
    for (int64_t i = got.rows; i < got.ld; ++i)
      if (!test::is_nan(got.at(i, j)) && ++bad <= 3) ADD_FAILURE() << what << ": padding written";
}

const int64_t kSizes[] = {1, 2, 3, 7, 16, 33};
const double kRoutes[] = {-1, 0, 200};  // none, every product, products of 200 and more

template <class T>
std::string label(const char* routine, double route) {
  return detail::routine_name(detail::precision_of<T>(), routine).str() + " route " +
         std::to_string(static_cast<int>(route));
}

// The transposes a routine takes: every one for trmm, trsm and a real syrk and syr2k (where 'C'
// is 'T'); 'N' and 'T' for a complex syrk and syr2k; 'N' and 'C' for herk and her2k.
template <class T>
std::vector<char> transposes(bool hermitian, bool triangle) {
  if (triangle || !kComplex<T>) return {'N', 'T', 'C'};
  return hermitian ? std::vector<char>{'N', 'C'} : std::vector<char>{'N', 'T'};
}

// syrk, syr2k (`two`), herk and her2k (`hermitian`): C = alpha op(A) op(A)^T + beta C, with ^H and
// a real alpha and beta for herk; alpha op(A) op(B)^T + alpha op(B) op(A)^T for syr2k, alpha
// op(A) op(B)^H + conj(alpha) op(B) op(A)^H for her2k, whose beta is real.
template <class T>
void rank_updates(bool two, bool hermitian) {
  std::mt19937_64 rng(two ? 11 : 7);
  for (double route : kRoutes)
    for (char uplo : {'U', 'L'})
      for (char trans : transposes<T>(hermitian, false))
        for (int64_t n : kSizes)
          for (int64_t k : {int64_t(1), int64_t(5), int64_t(19)})
            for (double beta : {0.0, 1.0, -0.5}) {
              const bool tr = trans != 'N';
              Mat<T> a(tr ? k : n, tr ? n : k, 2, rng), b(tr ? k : n, tr ? n : k, 1, rng);
              Mat<T> c(n, n, 3, rng);
              const Z alpha = hermitian && !two ? Z(0.75) : kComplex<T> ? Z(0.75, -0.25) : 0.75;
              if (beta == 0.0)  // beta = 0: C is not read, its NaN does not survive
                for (int64_t j = 0; j < n; ++j) c.at(j, j) = nan_value<T>();
              // op(X)'s element (i, l), conjugated where the transpose is 'C'.
              auto op = [&](const Mat<T>& x, int64_t i, int64_t l) {
                return !tr ? x.z(i, l) : trans == 'C' ? std::conj(x.z(l, i)) : x.z(l, i);
              };
              // The second factor of a product: conjugated for herk and her2k.
              auto mirror = [&](Z x) { return hermitian ? std::conj(x) : x; };
              std::vector<Z> want(static_cast<size_t>(n * n));
              for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < n; ++i) {
                  Z& w = want[static_cast<size_t>(i + j * n)];
                  const bool mine = uplo == 'L' ? i >= j : i <= j;
                  if (!mine) {
                    w = c.z(i, j);  // the other triangle is untouched
                    continue;
                  }
                  Z s = 0;
                  for (int64_t l = 0; l < k; ++l)
                    s += two ? alpha * op(a, i, l) * mirror(op(b, j, l)) +
                                   (hermitian ? std::conj(alpha) : alpha) * op(b, i, l) *
                                       mirror(op(a, j, l))
                             : alpha * op(a, i, l) * mirror(op(a, j, l));
                  // herk's and her2k's diagonal is real: beta times C's real part.
                  const Z old = hermitian && i == j ? Z(c.z(i, j).real()) : c.z(i, j);
                  w = s + (beta == 0.0 ? Z(0) : beta * old);
                  if (hermitian && i == j) w = w.real();
                }
              Sized<T> pr(route);
              const char* routine = hermitian ? (two ? "her2k" : "herk") : (two ? "syr2k" : "syrk");
              const std::string what = label<T>(routine, route) + " " + uplo + trans +
                                       " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                                       " beta=" + std::to_string(beta);
              const T ta = test::scalar<T>(alpha);
              if constexpr (kComplex<T>) {
                using R = test::real_t<T>;
                if (hermitian && two)
                  her2k<T>(uplo, trans, n, k, ta, a.p(), a.ld, b.p(), b.ld, R(beta), c.p(), c.ld,
                           pr);
                else if (hermitian)
                  herk<T>(uplo, trans, n, k, R(alpha.real()), a.p(), a.ld, R(beta), c.p(), c.ld,
                          pr);
              }
              if (!hermitian && two)
                syr2k<T>(uplo, trans, n, k, ta, a.p(), a.ld, b.p(), b.ld, test::scalar<T>(beta),
                         c.p(), c.ld, pr);
              else if (!hermitian)
                syrk<T>(uplo, trans, n, k, ta, a.p(), a.ld, test::scalar<T>(beta), c.p(), c.ld, pr);
              expect_near(c, want, 2 * k, what);
              if (hermitian) {  // exactly real, as the reference leaves it
                for (int64_t j = 0; j < n; ++j) EXPECT_EQ(c.z(j, j).imag(), 0.0) << what;
              }
              if (route == 0 && n > 1) {
                EXPECT_GT(pr.products, 0) << what;
              }
              if (route < 0) {
                EXPECT_EQ(pr.products, 0) << what;
              }
            }
}

TEST(Level3, Syrk) {
  rank_updates<float>(false, false);
  rank_updates<double>(false, false);
  rank_updates<std::complex<float>>(false, false);
  rank_updates<std::complex<double>>(false, false);
}

TEST(Level3, Syr2k) {
  rank_updates<float>(true, false);
  rank_updates<double>(true, false);
  rank_updates<std::complex<float>>(true, false);
  rank_updates<std::complex<double>>(true, false);
}

TEST(Level3, Herk) {
  rank_updates<std::complex<float>>(false, true);
  rank_updates<std::complex<double>>(false, true);
}

TEST(Level3, Her2k) {
  rank_updates<std::complex<float>>(true, true);
  rank_updates<std::complex<double>>(true, true);
}

// symm, or hemm (`hermitian`): C = alpha A B + beta C or alpha B A + beta C, A symmetric
// (Hermitian) with one triangle stored; the other holds NaN, and so does the imaginary part of
// hemm's diagonal, which the routine takes as real.
template <class T>
void multiplies(bool hermitian) {
  std::mt19937_64 rng(3);
  for (double route : kRoutes)
    for (char side : {'L', 'R'})
      for (char uplo : {'U', 'L'})
        for (int64_t m : kSizes)
          for (int64_t n : {int64_t(1), int64_t(6), int64_t(17)})
            for (double beta : {0.0, -0.5}) {
              const bool left = side == 'L';
              const int64_t d = left ? m : n;
              Mat<T> a(d, d, 1, rng), b(m, n, 2, rng), c(m, n, 1, rng);
              // The triangle A does not reference holds NaN.
              for (int64_t j = 0; j < d; ++j)
                for (int64_t i = 0; i < d; ++i)
                  if (uplo == 'L' ? i < j : i > j) a.at(i, j) = nan_value<T>();
              if constexpr (kComplex<T>)
                if (hermitian)
                  for (int64_t j = 0; j < d; ++j) a.at(j, j).imag(kNaN);
              if (beta == 0.0) c.at(0, 0) = nan_value<T>();
              auto sym = [&](int64_t i, int64_t j) {
                if (hermitian && i == j) return Z(a.z(i, i).real());
                if ((uplo == 'L') == (i >= j)) return a.z(i, j);
                return hermitian ? std::conj(a.z(j, i)) : a.z(j, i);
              };
              const Z alpha = kComplex<T> ? Z(-1.25, 0.5) : -1.25;
              std::vector<Z> want(static_cast<size_t>(m * n));
              for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < m; ++i) {
                  Z s = 0;
                  for (int64_t l = 0; l < d; ++l)
                    s += left ? sym(i, l) * b.z(l, j) : b.z(i, l) * sym(l, j);
                  want[static_cast<size_t>(i + j * m)] =
                      alpha * s + (beta == 0.0 ? Z(0) : beta * c.z(i, j));
                }
              Sized<T> pr(route);
              const std::string what = label<T>(hermitian ? "hemm" : "symm", route) + " " + side +
                                       uplo + " m=" + std::to_string(m) + " n=" + std::to_string(n);
              const T ta = test::scalar<T>(alpha);
              if constexpr (kComplex<T>)
                if (hermitian)
                  hemm<T>(side, uplo, m, n, ta, a.p(), a.ld, b.p(), b.ld, test::scalar<T>(beta),
                          c.p(), c.ld, pr);
              if (!hermitian)
                symm<T>(side, uplo, m, n, ta, a.p(), a.ld, b.p(), b.ld, test::scalar<T>(beta),
                        c.p(), c.ld, pr);
              expect_near(c, want, d, what);
              if (route == 0 && d > 1) {
                EXPECT_GT(pr.products, 0) << what;
              }
            }
}

TEST(Level3, Symm) {
  multiplies<float>(false);
  multiplies<double>(false);
  multiplies<std::complex<float>>(false);
  multiplies<std::complex<double>>(false);
}

TEST(Level3, Hemm) {
  multiplies<std::complex<float>>(true);
  multiplies<std::complex<double>>(true);
}

// trmm, or trsm (`solve`): B = alpha op(A) B or alpha B op(A); X with op(A) X = alpha B or
// X op(A) = alpha B, op(A) conjugated for 'C'. A's other triangle holds NaN, and so does its
// diagonal where it is unit.
template <class T>
void triangle_all(bool solve) {
  std::mt19937_64 rng(solve ? 5 : 9);
  for (double route : kRoutes)
    for (char side : {'L', 'R'})
      for (char uplo : {'U', 'L'})
        for (char trans : transposes<T>(false, true))
          for (char diag : {'N', 'U'})
            for (int64_t m : kSizes)
              for (int64_t n : {int64_t(1), int64_t(5), int64_t(18)}) {
                const bool left = side == 'L';
                const int64_t d = left ? m : n;
                Mat<T> a(d, d, 2, rng), b(m, n, 1, rng);
                // op(A) as a full matrix, in double, before the NaN go in.
                std::vector<Z> opa(static_cast<size_t>(d * d), 0.0);
                for (int64_t j = 0; j < d; ++j)
                  for (int64_t i = 0; i < d; ++i) {
                    const bool stored = uplo == 'L' ? i > j : i < j;
                    const size_t at = static_cast<size_t>(trans != 'N' ? j + i * d : i + j * d);
                    auto conj_op = [&](Z x) { return trans == 'C' ? std::conj(x) : x; };
                    if (i == j) {
                      // Well away from zero, so the solve is well conditioned.
                      a.at(i, i) = test::scalar<T>(a.z(i, i) + 2.0 * (1 + std::abs(a.z(i, i))));
                      opa[at] = diag == 'U' ? 1.0 : conj_op(a.z(i, i));
                      if (diag == 'U') a.at(i, i) = nan_value<T>();
                    } else if (stored) {
                      a.at(i, j) = test::scalar<T>(a.z(i, j) / static_cast<double>(d));
                      opa[at] = conj_op(a.z(i, j));
                    } else {
                      a.at(i, j) = nan_value<T>();
                    }
                  }
                const Z alpha = kComplex<T> ? Z(0.5, 0.25) : 0.5;
                // trmm: want = alpha op(A) B (or B op(A)); trsm: B0 is kept to check op(A) X =
                // alpha B0 (or X op(A)).
                std::vector<Z> b0(static_cast<size_t>(m * n)), want(b0.size());
                for (int64_t j = 0; j < n; ++j)
                  for (int64_t i = 0; i < m; ++i) b0[static_cast<size_t>(i + j * m)] = b.z(i, j);
                auto product = [&](const std::vector<Z>& x) {
                  std::vector<Z> out(x.size());
                  for (int64_t j = 0; j < n; ++j)
                    for (int64_t i = 0; i < m; ++i) {
                      Z s = 0;
                      for (int64_t l = 0; l < d; ++l)
                        s += left ? opa[static_cast<size_t>(i + l * d)] *
                                        x[static_cast<size_t>(l + j * m)]
                                  : x[static_cast<size_t>(i + l * m)] *
                                        opa[static_cast<size_t>(l + j * d)];
                      out[static_cast<size_t>(i + j * m)] = s;
                    }
                  return out;
                };
                Sized<T> pr(route);
                const std::string what = label<T>(solve ? "trsm" : "trmm", route) + " " + side +
                                         uplo + trans + diag + " m=" + std::to_string(m) +
                                         " n=" + std::to_string(n);
                const T ta = test::scalar<T>(alpha);
                if (solve) {
                  trsm<T>(side, uplo, trans, diag, m, n, ta, a.p(), a.ld, b.p(), b.ld, pr);
                  // op(A) X (or X op(A)) must give back alpha B0.
                  std::vector<Z> x(b0.size());
                  for (int64_t j = 0; j < n; ++j)
                    for (int64_t i = 0; i < m; ++i) x[static_cast<size_t>(i + j * m)] = b.z(i, j);
                  const auto back = product(x);
                  Mat<T> got = b;
                  for (int64_t j = 0; j < n; ++j)
                    for (int64_t i = 0; i < m; ++i)
                      got.at(i, j) = test::scalar<T>(back[static_cast<size_t>(i + j * m)]);
                  for (size_t i = 0; i < want.size(); ++i) want[i] = alpha * b0[i];
                  expect_near(got, want, d, what);
                } else {
                  trmm<T>(side, uplo, trans, diag, m, n, ta, a.p(), a.ld, b.p(), b.ld, pr);
                  want = product(b0);
                  for (auto& v : want) v *= alpha;
                  expect_near(b, want, d, what);
                }
                if (route == 0 && d > 1) {
                  EXPECT_GT(pr.products, 0) << what;
                }
                if (route < 0) {
                  EXPECT_EQ(pr.products, 0) << what;
                }
              }
}

TEST(Level3, Trmm) {
  triangle_all<float>(false);
  triangle_all<double>(false);
  triangle_all<std::complex<float>>(false);
  triangle_all<std::complex<double>>(false);
}

TEST(Level3, Trsm) {
  triangle_all<float>(true);
  triangle_all<double>(true);
  triangle_all<std::complex<float>>(true);
  triangle_all<std::complex<double>>(true);
}

// A halving that would leave a diagonal block smaller than min_diagonal() is not made: the block
// goes to the CPU BLAS whole. At n = 40, a limit of 20 allows the first halving only; 21 none.
TEST(Level3, MinDiagonalKeepsSmallBlocksWhole) {
  std::mt19937_64 rng(7);
  const int64_t n = 40;
  for (int64_t limit : {int64_t(0), int64_t(20), int64_t(21)}) {
    Mat<double> a(n, n, 1, rng), b(n, n, 1, rng), c(n, n, 1, rng);
    for (int64_t j = 0; j < n; ++j) a.at(j, j) += 4.0;  // well conditioned for trsm
    auto run = [&](const char* name, auto&& f) -> int {
      Sized<double> pr(0);
      pr.min_diag = limit;
      Mat<double> out = c;
      f(pr, out);
      const std::string what = std::string(name) + " limit " + std::to_string(limit);
      Sized<double> whole(-1);
      Mat<double> want = c;
      f(whole, want);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(out.at(i, j), want.at(i, j), 1e-9) << what;
      return pr.products;
    };
    const int syrk_products = run("syrk", [&](Sized<double>& pr, Mat<double>& out) {
      syrk<double>('L', 'N', n, n, 1.0, a.p(), a.ld, 0.5, out.p(), out.ld, pr);
    });
    const int symm_products = run("symm", [&](Sized<double>& pr, Mat<double>& out) {
      symm<double>('L', 'U', n, n, 1.0, a.p(), a.ld, b.p(), b.ld, 0.5, out.p(), out.ld, pr);
    });
    const int trsm_products = run("trsm", [&](Sized<double>& pr, Mat<double>& out) {
      trsm<double>('L', 'L', 'N', 'N', n, n, 1.0, a.p(), a.ld, out.p(), out.ld, pr);
    });
    const int trmm_products = run("trmm", [&](Sized<double>& pr, Mat<double>& out) {
      trmm<double>('R', 'U', 'T', 'N', n, n, 1.0, a.p(), a.ld, out.p(), out.ld, pr);
    });
    if (limit == 0) {
      EXPECT_GT(syrk_products, 1);
      EXPECT_GT(trsm_products, 1);
    } else if (limit == 20) {
      EXPECT_EQ(syrk_products, 1);
      EXPECT_EQ(symm_products, 2);
      EXPECT_EQ(trsm_products, 1);
      EXPECT_EQ(trmm_products, 1);
    } else {
      EXPECT_EQ(syrk_products + symm_products + trsm_products + trmm_products, 0);
    }
  }
}

// alpha = 0: A and B are not read (NaN there does not reach the result); C = beta C over the
// routine's part, B = 0 for trmm and trsm.
TEST(Level3, AlphaZeroReadsNeitherAnorB) {
  std::mt19937_64 rng(1);
  Sized<double> pr(0);
  Mat<double> a(4, 4, 0, rng), b(4, 4, 0, rng), c(4, 4, 0, rng);
  for (auto& v : a.v) v = kNaN;
  for (auto& v : b.v) v = kNaN;
  const Mat<double> c0 = c;
  syrk<double>('L', 'N', 4, 4, 0.0, a.p(), 4, 2.0, c.p(), 4, pr);
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(c.at(i, j), i >= j ? 2 * c0.at(i, j) : c0.at(i, j)) << i << "," << j;
  c = c0;
  syr2k<double>('U', 'T', 4, 4, 0.0, a.p(), 4, b.p(), 4, 0.0, c.p(), 4, pr);
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(c.at(i, j), i <= j ? 0.0 : c0.at(i, j));
  c = c0;
  symm<double>('R', 'L', 4, 4, 0.0, a.p(), 4, b.p(), 4, -1.0, c.p(), 4, pr);
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(c.at(i, j), -c0.at(i, j));
  Mat<double> bb(4, 4, 0, rng);
  bb.at(1, 1) = kNaN;
  trsm<double>('L', 'U', 'N', 'N', 4, 4, 0.0, a.p(), 4, bb.p(), 4, pr);
  for (double v : bb.v) EXPECT_EQ(v, 0.0);
  bb.at(2, 3) = kNaN;
  trmm<double>('R', 'L', 'T', 'U', 4, 4, 0.0, a.p(), 4, bb.p(), 4, pr);
  for (double v : bb.v) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(pr.products, 0);
}

// The same for the complex routines, and herk's and her2k's diagonal: alpha = 0 with a beta other
// than 1 leaves it real (beta times its real part), as the reference does; beta = 1 leaves C as
// it is (the reference's quick return).
TEST(Level3, ComplexAlphaZeroReadsNeitherAnorB) {
  using C = std::complex<double>;
  std::mt19937_64 rng(1);
  Sized<C> pr(0);
  Mat<C> a(4, 4, 0, rng), b(4, 4, 0, rng), c(4, 4, 0, rng);
  for (auto& v : a.v) v = nan_value<C>();
  for (auto& v : b.v) v = nan_value<C>();
  const Mat<C> c0 = c;
  herk<C>('L', 'C', 4, 4, 0.0, a.p(), 4, 2.0, c.p(), 4, pr);
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(c.at(i, j), i > j    ? 2.0 * c0.at(i, j)
                            : i == j ? C(2 * c0.at(i, j).real())
                                     : c0.at(i, j))
          << i << "," << j;
  c = c0;
  herk<C>('U', 'N', 4, 4, 0.0, a.p(), 4, 1.0, c.p(), 4, pr);
  EXPECT_EQ(c.v, c0.v) << "beta = 1 returns at once";
  her2k<C>('U', 'C', 4, 4, C(0), a.p(), 4, b.p(), 4, 0.0, c.p(), 4, pr);
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(c.at(i, j), i <= j ? C(0) : c0.at(i, j));
  c = c0;
  her2k<C>('L', 'N', 4, 0, C(1, 1), a.p(), 4, b.p(), 4, -1.0, c.p(), 4, pr);  // k = 0
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(c.at(j, j), C(-c0.at(j, j).real()));
  c = c0;
  syrk<C>('U', 'T', 4, 4, C(0), a.p(), 4, C(0, 1), c.p(), 4, pr);
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(c.at(i, j), i <= j ? C(0, 1) * c0.at(i, j) : c0.at(i, j));
  c = c0;
  hemm<C>('L', 'U', 4, 4, C(0), a.p(), 4, b.p(), 4, C(-1), c.p(), 4, pr);
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(c.at(i, j), -c0.at(i, j));
  Mat<C> bb(4, 4, 0, rng);
  bb.at(1, 1) = nan_value<C>();
  trsm<C>('L', 'U', 'C', 'N', 4, 4, C(0), a.p(), 4, bb.p(), 4, pr);
  for (C v : bb.v) EXPECT_EQ(v, C(0));
  bb.at(2, 3) = nan_value<C>();
  trmm<C>('R', 'L', 'C', 'U', 4, 4, C(0), a.p(), 4, bb.p(), 4, pr);
  for (C v : bb.v) EXPECT_EQ(v, C(0));
  EXPECT_EQ(pr.products, 0);
}

// An invalid argument: the reference's position (the first invalid one in its order), the
// routine named, and nothing written.
template <class F>
void expect_invalid(int position, const char* routine, F&& call) {
  try {
    call();
    ADD_FAILURE() << routine << ": no error for argument " << position;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::InvalidArgument);
    EXPECT_EQ(e.argument(), position) << e.what();
    EXPECT_NE(std::string(e.what()).find(routine), std::string::npos) << e.what();
  }
}

TEST(Level3, InvalidArgumentsAtTheReferencesPositions) {
  std::mt19937_64 rng(2);
  Sized<float> pr(0);
  Mat<float> a(4, 4, 0, rng), b(4, 4, 0, rng), c(4, 4, 0, rng);
  const Mat<float> c0 = c;
  float* C = c.p();
  const float *A = a.p(), *B = b.p();
  expect_invalid(1, "ssyrk", [&] { syrk<float>('X', 'N', 4, 4, 1, A, 4, 1, C, 4, pr); });
  expect_invalid(2, "ssyrk", [&] { syrk<float>('u', 'Q', 4, 4, 1, A, 4, 1, C, 4, pr); });
  expect_invalid(3, "ssyrk", [&] { syrk<float>('L', 'N', -1, -1, 1, A, 4, 1, C, 4, pr); });
  expect_invalid(4, "ssyrk", [&] { syrk<float>('L', 'N', 4, -1, 1, A, 4, 1, C, 4, pr); });
  expect_invalid(7, "ssyrk", [&] { syrk<float>('L', 'T', 2, 4, 1, A, 3, 1, C, 4, pr); });
  expect_invalid(10, "ssyrk", [&] { syrk<float>('L', 'N', 4, 4, 1, A, 4, 1, C, 3, pr); });
  expect_invalid(9, "ssyrk", [&] { syrk<float>('L', 'N', 4, 4, 1, A, 4, 0, nullptr, 4, pr); });
  expect_invalid(9, "ssyr2k", [&] { syr2k<float>('L', 'N', 4, 4, 1, A, 4, B, 3, 1, C, 4, pr); });
  expect_invalid(12, "ssyr2k", [&] { syr2k<float>('U', 'C', 4, 4, 1, A, 4, B, 4, 1, C, 2, pr); });
  expect_invalid(8, "ssyr2k",
                 [&] { syr2k<float>('U', 'C', 4, 4, 1, A, 4, nullptr, 4, 1, C, 4, pr); });
  expect_invalid(1, "ssymm", [&] { symm<float>('N', 'U', 4, 4, 1, A, 4, B, 4, 1, C, 4, pr); });
  expect_invalid(7, "ssymm", [&] { symm<float>('R', 'U', 2, 4, 1, A, 3, B, 4, 1, C, 4, pr); });
  expect_invalid(9, "ssymm", [&] { symm<float>('L', 'U', 4, 2, 1, A, 4, B, 3, 1, C, 4, pr); });
  expect_invalid(12, "ssymm", [&] { symm<float>('L', 'L', 4, 2, 1, A, 4, B, 4, 1, C, 3, pr); });
  float* Bw = b.p();
  expect_invalid(3, "strmm", [&] { trmm<float>('L', 'U', 'X', 'N', 4, 4, 1, A, 4, Bw, 4, pr); });
  expect_invalid(4, "strmm", [&] { trmm<float>('L', 'U', 'N', 'T', 4, 4, 1, A, 4, Bw, 4, pr); });
  expect_invalid(6, "strsm", [&] { trsm<float>('R', 'U', 'N', 'N', 4, -2, 1, A, 4, Bw, 4, pr); });
  expect_invalid(9, "strsm", [&] { trsm<float>('R', 'U', 'N', 'N', 2, 4, 1, A, 3, Bw, 4, pr); });
  expect_invalid(11, "strsm", [&] { trsm<float>('L', 'U', 'N', 'N', 4, 2, 1, A, 4, Bw, 3, pr); });
  expect_invalid(8, "strsm",
                 [&] { trsm<float>('L', 'U', 'N', 'N', 4, 2, 1, nullptr, 4, Bw, 4, pr); });
  for (size_t i = 0; i < c.v.size(); ++i) EXPECT_EQ(c.v[i], c0.v[i]) << "C was written";
  EXPECT_EQ(pr.products, 0);
}

// The complex routines' own rules: a complex syrk and syr2k take 'N' or 'T', herk and her2k 'N'
// or 'C'; trmm and trsm take 'C' too; hemm's positions are symm's.
TEST(Level3, ComplexInvalidArgumentsAtTheReferencesPositions) {
  using C = std::complex<float>;
  using Zd = std::complex<double>;
  std::mt19937_64 rng(2);
  Sized<C> pr(0);
  Sized<Zd> pz(0);
  Mat<C> a(4, 4, 0, rng), b(4, 4, 0, rng), c(4, 4, 0, rng);
  Mat<Zd> az(4, 4, 0, rng), bz(4, 4, 0, rng), cz(4, 4, 0, rng);
  const Mat<C> c0 = c;
  const Mat<Zd> cz0 = cz;
  C* Cp = c.p();
  const C *A = a.p(), *B = b.p();
  Zd* Cz = cz.p();
  const Zd *Az = az.p(), *Bz = bz.p();
  expect_invalid(2, "csyrk", [&] { syrk<C>('L', 'C', 4, 4, C(1), A, 4, C(1), Cp, 4, pr); });
  expect_invalid(2, "zsyr2k",
                 [&] { syr2k<Zd>('U', 'c', 4, 4, Zd(1), Az, 4, Bz, 4, Zd(1), Cz, 4, pz); });
  expect_invalid(2, "cherk", [&] { herk<C>('L', 'T', 4, 4, 1.0f, A, 4, 1.0f, Cp, 4, pr); });
  expect_invalid(1, "zherk", [&] { herk<Zd>('N', 'C', 4, 4, 1.0, Az, 4, 1.0, Cz, 4, pz); });
  expect_invalid(7, "zherk", [&] { herk<Zd>('U', 'C', 2, 4, 1.0, Az, 3, 1.0, Cz, 4, pz); });
  expect_invalid(10, "cherk", [&] { herk<C>('U', 'n', 4, 4, 1.0f, A, 4, 1.0f, Cp, 3, pr); });
  expect_invalid(9, "cherk", [&] { herk<C>('U', 'N', 4, 4, 1.0f, A, 4, 0.0f, nullptr, 4, pr); });
  expect_invalid(2, "cher2k", [&] { her2k<C>('L', 't', 4, 4, C(1), A, 4, B, 4, 1.0f, Cp, 4, pr); });
  expect_invalid(4, "zher2k",
                 [&] { her2k<Zd>('L', 'N', 4, -1, Zd(1), Az, 4, Bz, 4, 1.0, Cz, 4, pz); });
  expect_invalid(9, "zher2k",
                 [&] { her2k<Zd>('L', 'C', 4, 4, Zd(1), Az, 4, Bz, 3, 1.0, Cz, 4, pz); });
  expect_invalid(12, "cher2k",
                 [&] { her2k<C>('U', 'N', 4, 4, C(1), A, 4, B, 4, 1.0f, Cp, 2, pr); });
  expect_invalid(8, "cher2k",
                 [&] { her2k<C>('U', 'N', 4, 4, C(1), A, 4, nullptr, 4, 1.0f, Cp, 4, pr); });
  expect_invalid(1, "chemm", [&] { hemm<C>('X', 'U', 4, 4, C(1), A, 4, B, 4, C(1), Cp, 4, pr); });
  expect_invalid(2, "zhemm",
                 [&] { hemm<Zd>('L', 'N', 4, 4, Zd(1), Az, 4, Bz, 4, Zd(1), Cz, 4, pz); });
  expect_invalid(7, "chemm", [&] { hemm<C>('R', 'U', 2, 4, C(1), A, 3, B, 4, C(1), Cp, 4, pr); });
  expect_invalid(12, "zhemm",
                 [&] { hemm<Zd>('L', 'L', 4, 2, Zd(1), Az, 4, Bz, 4, Zd(1), Cz, 3, pz); });
  C* Bw = b.p();
  expect_invalid(3, "ctrmm", [&] { trmm<C>('L', 'U', 'H', 'N', 4, 4, C(1), A, 4, Bw, 4, pr); });
  expect_invalid(11, "ztrsm",
                 [&] { trsm<Zd>('L', 'U', 'C', 'N', 4, 2, Zd(1), Az, 4, cz.p(), 3, pz); });
  for (size_t i = 0; i < c.v.size(); ++i) EXPECT_EQ(c.v[i], c0.v[i]) << "C was written";
  for (size_t i = 0; i < cz.v.size(); ++i) EXPECT_EQ(cz.v[i], cz0.v[i]) << "C was written";
  EXPECT_EQ(pr.products + pz.products, 0);
}

}  // namespace
}  // namespace tandem::detail::level3
