// The cores' small kernel (src/cpu/small_kernel.cpp) against a plain reference on random inputs:
// every element type, every operation of A and B (transposed, and conjugate-transposed for the
// complex types), awkward sizes up to the kernel's largest, leading dimensions wider than the
// rows, and alpha and beta with their special values; the cores' batch taking it by its edge; and
// the edge's rule (database/defaults.json's cores_small).
#include "cpu/small_kernel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/precision.hpp"
#include "base/problem.hpp"
#include "cpu/batch.hpp"
#include "profile/defaults.hpp"
#include "seam_override.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {
namespace {

template <class T>
T draw(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  using R = real_type_t<T>;
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<R>(u(rng));
  else
    return T(static_cast<R>(u(rng)), static_cast<R>(u(rng)));
}

// One product's operands and C, stored row-major with leading dimensions 3 wider than the rows.
template <class T>
struct Case {
  Problem<T> p;
  std::vector<T> a, b, c;
  Case(int64_t m, int64_t n, int64_t k, char op_a, char op_b, T alpha, T beta, std::mt19937& rng) {
    p.m = m;
    p.n = n;
    p.k = k;
    p.trans_a = op_a != 'N';
    p.conj_a = op_a == 'C';
    p.trans_b = op_b != 'N';
    p.conj_b = op_b == 'C';
    p.alpha = alpha;
    p.beta = beta;
    p.lda = p.a_cols() + 3;
    p.ldb = p.b_cols() + 3;
    p.ldc = n + 3;
    a.resize(static_cast<size_t>(p.a_rows() * p.lda));
    b.resize(static_cast<size_t>(p.b_rows() * p.ldb));
    c.resize(static_cast<size_t>(m * p.ldc));
    for (T& x : a) x = draw<T>(rng);
    for (T& x : b) x = draw<T>(rng);
    for (T& x : c) x = draw<T>(rng);
    p.a = a.data();
    p.b = b.data();
    p.c = c.data();
  }
};

template <class T>
std::complex<double> wide(T x) {
  return std::complex<double>(x);
}

// op(X)(row, col) as the plain definition reads it, in double precision.
template <class T>
std::complex<double> op_element(const T* x, int64_t ld, bool trans, bool conj, int64_t row,
                                int64_t col) {
  const std::complex<double> v = wide(trans ? x[col * ld + row] : x[row * ld + col]);
  return conj ? std::conj(v) : v;
}

// Checks C (after) against alpha op(A) op(B) + beta C (before) element by element, within a bound
// of k rounding errors of T's precision on the magnitudes summed; C's padding is untouched.
template <class T>
void expect_product(const Case<T>& x, const std::vector<T>& before, const std::string& what) {
  const Problem<T>& p = x.p;
  const double eps = std::numeric_limits<real_type_t<T>>::epsilon();
  int wrong = 0;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.ldc; ++j) {
      const size_t at = static_cast<size_t>(i * p.ldc + j);
      if (j >= p.n) {
        EXPECT_EQ(std::memcmp(&x.c[at], &before[at], sizeof(T)), 0)
            << what << ": padding written at " << i << "," << j;
        continue;
      }
      std::complex<double> sum = 0;
      double magnitude = 0;
      for (int64_t l = 0; l < p.k; ++l) {
        const auto term = op_element(p.a, p.lda, p.trans_a, p.conj_a, i, l) *
                          op_element(p.b, p.ldb, p.trans_b, p.conj_b, l, j);
        sum += term;
        magnitude += std::abs(term);
      }
      std::complex<double> want = wide(p.alpha) * sum;
      if (p.beta != T(0)) want += wide(p.beta) * wide(before[at]);
      const double scaled_c =
          p.beta == T(0) ? 0.0 : std::abs(wide(p.beta)) * std::abs(wide(before[at]));
      const double bound = 8 * eps * (static_cast<double>(p.k) + 2) *
                           (std::abs(wide(p.alpha)) * magnitude + scaled_c);
      const double error = std::abs(wide(x.c[at]) - want);
      if (!(error <= bound) && wrong++ < 3)
        ADD_FAILURE() << what << ": C(" << i << "," << j << ") is " << wide(x.c[at]) << ", not "
                      << want << " (error " << error << ", bound " << bound << ")";
    }
  }
}

template <class T>
class SmallKernel : public ::testing::Test {};
using Elements = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(SmallKernel, Elements);

template <class T>
std::vector<char> operations() {
  if constexpr (std::is_floating_point_v<T>)
    return {'N', 'T'};
  else
    return {'N', 'T', 'C'};
}

// Every operation pair at sizes from 1 to the kernel's largest, m, n and k different.
template <class T>
void match_the_reference() {
  std::mt19937 rng(7);
  const int64_t sizes[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, kSmallKernelMax};
  int cases = 0;
  for (char op_a : operations<T>())
    for (char op_b : operations<T>())
      for (size_t s = 0; s < std::size(sizes); ++s) {
        // The three dimensions differ: m, n and k each take a size, in turn.
        const int64_t m = sizes[s], n = sizes[(s + 3) % std::size(sizes)],
                      k = sizes[(s + 7) % std::size(sizes)];
        Case<T> x(m, n, k, op_a, op_b, draw<T>(rng), draw<T>(rng), rng);
        const std::vector<T> before = x.c;
        small_product(x.p);
        expect_product(x, before,
                       std::string(1, op_a) + op_b + " " + std::to_string(m) + "x" +
                           std::to_string(n) + "x" + std::to_string(k));
        ++cases;
      }
  EXPECT_EQ(cases,
            static_cast<int>(operations<T>().size() * operations<T>().size() * std::size(sizes)));
}

// Both builds of the loop: the one this processor runs, and the baseline (a seam; the same one
// where the processor has no AVX2 and FMA).
TYPED_TEST(SmallKernel, MatchesTheReferenceOnEveryOperationAndAwkwardSizes) {
  using T = TypeParam;
  for (const bool baseline : {false, true}) {
    seams::Values v = seams::current();
    v.small_kernel_baseline = baseline;
    const seams::Override seam(v);
    SCOPED_TRACE(baseline ? "the baseline build" : "this processor's build");
    match_the_reference<T>();
  }
}

// Whether C after a run is, bit for bit, what the small kernel alone makes of the problem from
// `before`: the kernel's sums run in another order than a CPU BLAS's, so a product the batch
// gave to the CPU BLAS instead shows in the last bits.
template <class T>
bool small_kernel_made(const Problem<T>& p, const std::vector<T>& before,
                       const std::vector<T>& after) {
  std::vector<T> c = before;
  Problem<T> q = p;
  q.c = c.data();
  small_product(q);
  return std::memcmp(c.data(), after.data(), c.size() * sizeof(T)) == 0;
}

// beta = 0 writes C without reading it (NaN there does not survive); beta = 1 and alpha = 1 are
// the plain sum; a negative alpha and a complex beta are scaled as written.
TYPED_TEST(SmallKernel, AlphaAndBetaHaveBlasMeaning) {
  using T = TypeParam;
  std::mt19937 rng(11);
  const T values[][2] = {{T(1), T(0)}, {T(1), T(1)}, {T(-2), T(0.5)}, {draw<T>(rng), T(0)}};
  for (const auto& ab : values) {
    Case<T> x(13, 19, 23, 'N', operations<T>().back(), ab[0], ab[1], rng);
    if (ab[1] == T(0))
      for (T& v : x.c) v = quiet_nan<T>();
    std::vector<T> before = x.c;
    small_product(x.p);
    if (ab[1] == T(0)) {
      for (int64_t i = 0; i < x.p.m; ++i)
        for (int64_t j = 0; j < x.p.n; ++j)
          ASSERT_FALSE(std::isnan(std::abs(x.c[static_cast<size_t>(i * x.p.ldc + j)])))
              << "NaN in C survived beta = 0 at " << i << "," << j;
      // The reference reads no C under beta = 0; the padding must still hold its NaN.
      expect_product(x, before, "beta 0");
    } else {
      expect_product(x, before, "beta " + std::to_string(std::abs(wide(ab[1]))));
    }
  }
}

// The cores' batch runs a problem within its small edge on the kernel and any other as a CPU BLAS
// call: both give the reference's C, on one thread and on several, with problems of both kinds in
// one batch.
TYPED_TEST(SmallKernel, TheCoresBatchTakesItWithinItsEdge) {
  using T = TypeParam;
  std::mt19937 rng(13);
  std::vector<Case<T>> cases;
  const int64_t sizes[] = {5, 16, 40, 9, 33, 70};
  for (int i = 0; i < 60; ++i) {
    const int64_t s = sizes[i % std::size(sizes)];
    cases.emplace_back(s, s + 1, s + 2, operations<T>()[i % operations<T>().size()],
                       operations<T>()[(i / 2) % operations<T>().size()], draw<T>(rng),
                       i % 4 == 0 ? T(0) : draw<T>(rng), rng);
  }
  std::vector<std::vector<T>> before;
  std::vector<Problem<T>> problems;
  for (const Case<T>& x : cases) {
    before.push_back(x.c);
    problems.push_back(x.p);
  }
  // 3 threads deal the 60 problems whole; 64 threads cut each of the first 5 into bands.
  for (int threads : {1, 3, 64})
    for (int64_t edge : {int64_t{0}, int64_t{20}, kSmallKernelMax}) {
      const size_t count = threads == 64 ? 5 : cases.size();
      for (size_t i = 0; i < cases.size(); ++i) cases[i].c = before[i];
      for (size_t i = 0; i < cases.size(); ++i) problems[i].c = cases[i].c.data();
      cpu_batch(problems.data(), static_cast<int64_t>(count), threads, edge);
      int kernel = 0;
      for (size_t i = 0; i < count; ++i) {
        const std::string what = "problem " + std::to_string(i) + " of the batch on " +
                                 std::to_string(threads) + " threads, edge " + std::to_string(edge);
        expect_product(cases[i], before[i], what);
        const Problem<T>& p = problems[i];
        if (p.has_product() && std::max({p.m, p.n, p.k}) <= edge) {
          ++kernel;
          EXPECT_TRUE(small_kernel_made(p, before[i], cases[i].c)) << what << ": not the kernel's";
        }
      }
      if (edge == kSmallKernelMax) {
        EXPECT_EQ(kernel, static_cast<int>(count));
      }
    }
}

// The edge is none on no threads, never falls as threads are added (the CPU BLAS's calls queue
// the more, the more threads call it at once), and never lies above the kernel's largest size.
TEST(SmallKernelEdge, GrowsWithTheThreadsAndStaysWithinTheKernel) {
  for (Precision p : kPrecisions) {
    EXPECT_EQ(profile::cores_small_edge(p, 0), 0) << p;
    for (int threads = 1; threads <= 256; ++threads) {
      const int64_t edge = profile::cores_small_edge(p, threads);
      EXPECT_GE(edge, profile::cores_small_edge(p, threads - 1)) << p << " on " << threads;
      EXPECT_LE(edge, kSmallKernelMax) << p << " on " << threads;
    }
  }
}

// Through the public API: a strided batch under strategy cpu on as many threads as the data gives
// its largest edge (whatever this machine has), products within it and beyond it, row- and
// column-major, with the reference's C.
TYPED_TEST(SmallKernel, ThePublicBatchOnTheCoresMatchesTheReference) {
  using T = TypeParam;
  const Precision prec = precision_of<T>();
  int threads = 1;
  for (int t = 1; t <= 64; ++t)
    if (profile::cores_small_edge(prec, t) > profile::cores_small_edge(prec, threads)) threads = t;
  const int64_t edge = profile::cores_small_edge(prec, threads);
  std::mt19937 rng(17);
  for (const int64_t size : {std::max<int64_t>(edge, 1), edge + 5}) {
    for (const Layout layout : {Layout::RowMajor, Layout::ColMajor}) {
      // At least two products a thread: fewer would cut each into bands (cpu_batch).
      const int64_t kCount = std::max(24, 2 * threads);
      const int64_t m = size, n = size, k = size, each = size * size;
      std::vector<T> a(static_cast<size_t>(each * kCount)), b(a.size()), c(a.size());
      for (T& x : a) x = draw<T>(rng);
      for (T& x : b) x = draw<T>(rng);
      for (T& x : c) x = draw<T>(rng);
      const std::vector<T> before = c;
      const T alpha = draw<T>(rng), beta = draw<T>(rng);
      Options options;
      options.strategy = Strategy::Cpu;
      options.cpu_threads = threads;
      BatchReport report;
      const Op op_b = std::is_floating_point_v<T> ? Op::Trans : Op::ConjTrans;
      gemm_batch_strided<T>(layout, Op::NoTrans, op_b, m, n, k, alpha, a.data(), size, each,
                            b.data(), size, each, beta, c.data(), size, each, kCount, options,
                            &report);
      EXPECT_EQ(report.cpu_problems, kCount);
      // Each product checked as a row-major one: column-major C = op(A) op(B) is row-major
      // C^T = op(B)^T op(A)^T, the same operations on the other operand.
      for (int64_t i = 0; i < kCount; ++i) {
        const size_t at = static_cast<size_t>(i * each);
        const bool col = layout == Layout::ColMajor;
        Case<T> x(m, n, k, col ? operations<T>().back() : 'N', col ? 'N' : operations<T>().back(),
                  alpha, beta, rng);
        x.p.a = (col ? b.data() : a.data()) + at;
        x.p.b = (col ? a.data() : b.data()) + at;
        x.p.lda = x.p.ldb = x.p.ldc = size;
        x.c.assign(c.begin() + static_cast<std::ptrdiff_t>(at),
                   c.begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(each)));
        x.p.c = x.c.data();
        const std::vector<T> was(before.begin() + static_cast<std::ptrdiff_t>(at),
                                 before.begin() + static_cast<std::ptrdiff_t>(at) + each);
        const std::string what = "product " + std::to_string(i) + " of " + std::to_string(size) +
                                 "^3, " + (col ? "column" : "row") + "-major, " +
                                 std::to_string(threads) + " threads";
        expect_product(x, was, what);
        // Within the edge the kernel made it, bit for bit; beyond it the CPU BLAS did.
        if (size <= edge) {
          EXPECT_TRUE(small_kernel_made(x.p, was, x.c)) << what;
        } else if (size > 8) {
          EXPECT_FALSE(small_kernel_made(x.p, was, x.c)) << what;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tandem::detail
