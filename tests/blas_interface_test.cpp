// The drop-in BLAS in process: this program links libtandem_blas.so ahead of any BLAS, so its
// cblas_sgemm/dgemm and sgemm_/dgemm_ calls reach tandem. It defines xerbla_ and cblas_xerbla
// itself (exported), as the reference testers do, to see which positions tandem reports.
#include <cblas.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "xerbla_recorder.hpp"

// The Fortran BLAS entries as gfortran calls them (no system header declares them).
extern "C" void sgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*,
                       const float*, const float*, const blasint*, const float*, const blasint*,
                       const float*, float*, const blasint*, size_t, size_t);
extern "C" void dgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*,
                       const double*, const double*, const blasint*, const double*, const blasint*,
                       const double*, double*, const blasint*, size_t, size_t);

namespace {

using xerbla_recorder::g_calls;
using xerbla_recorder::g_info;
using xerbla_recorder::g_routine;
using xerbla_recorder::reset;

bool opencl_started() {
  // The ICD loader maps PoCL only once a platform list is asked for.
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libpocl") != std::string::npos) return true;
  return false;
}

// Column-major reference in double.
template <class T>
std::vector<T> reference(bool ta, bool tb, int m, int n, int k, T alpha, const std::vector<T>& a,
                         int lda, const std::vector<T>& b, int ldb, T beta, const std::vector<T>& c,
                         int ldc) {
  std::vector<T> out = c;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0;
      for (int p = 0; p < k; ++p)
        s += double(ta ? a[p + i * lda] : a[i + p * lda]) *
             double(tb ? b[j + p * ldb] : b[p + j * ldb]);
      out[i + j * ldc] =
          static_cast<T>(alpha * s + (beta == T(0) ? 0.0 : beta * double(c[i + j * ldc])));
    }
  return out;
}

template <class T>
std::vector<T> random_vector(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

template <class T>
void expect_near(const std::vector<T>& got, const std::vector<T>& want, int k, const char* what) {
  const double tol = 4.0 * (k + 2) * std::numeric_limits<T>::epsilon() * k;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(double(got[i]) - double(want[i])) <= tol)) ++bad;
  EXPECT_EQ(bad, 0) << what;
}

TEST(DropIn, CblasReportsPositionsAsTheReferenceCblas) {
  std::vector<float> a(16, 1), b(16, 1), c(16, 7);
  const auto before = c;
  reset();
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a.data(), 1, b.data(), 2, 0,
              c.data(), 2);
  EXPECT_EQ(g_routine, "cblas_sgemm");
  EXPECT_EQ(g_info, 9);  // lda
  reset();
  cblas_sgemm(static_cast<CBLAS_ORDER>(7), CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a.data(), 2,
              b.data(), 2, 0, c.data(), 2);
  EXPECT_EQ(g_info, 1);
  // Row-major: the reference reports m as 5 and lda as 11 (positions in the transposed call).
  reset();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 1, a.data(), 2, b.data(), 2, 0,
              c.data(), 2);
  EXPECT_EQ(g_info, 5);
  reset();
  std::vector<double> ad(16, 1), bd(16, 1), cd(16, 7);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 1, ad.data(), 2, bd.data(), 2, 0,
              cd.data(), 2);
  EXPECT_EQ(g_routine, "cblas_dgemm");
  EXPECT_EQ(g_info, 11);  // lda = 2 < k = 3
  EXPECT_EQ(cd, std::vector<double>(16, 7));
  EXPECT_EQ(c, before);
}

TEST(DropIn, FortranReportsPositionsThroughXerbla) {
  std::vector<double> a(16, 1), b(16, 1), c(16, 7);
  const auto before = c;
  const int two = 2, one = 1, neg = -1;
  const double alpha = 1, beta = 0;
  reset();
  dgemm_("/", "N", &two, &two, &two, &alpha, a.data(), &two, b.data(), &two, &beta, c.data(), &two,
         1, 1);
  EXPECT_EQ(g_routine, "DGEMM ");
  EXPECT_EQ(g_info, 1);
  reset();
  dgemm_("N", "N", &two, &two, &two, &alpha, a.data(), &one, b.data(), &two, &beta, c.data(), &two,
         1, 1);
  EXPECT_EQ(g_info, 8);
  reset();
  dgemm_("T", "c", &two, &neg, &two, &alpha, a.data(), &two, b.data(), &two, &beta, c.data(), &two,
         1, 1);
  EXPECT_EQ(g_info, 4);
  reset();
  float fa = 1, fb = 1, fc = 7;
  const float falpha = 1, fbeta = 0;
  sgemm_("N", "N", &one, &one, &one, &falpha, &fa, &one, &fb, &one, &fbeta, &fc, &two, 1, 1);
  EXPECT_EQ(g_calls, 0);  // ldc = 2 >= m = 1 is fine
  EXPECT_EQ(fc, 1.0f);
  EXPECT_EQ(c, before);
}

TEST(DropIn, ResultsMatchAReference) {
  const int m = 37, n = 29, k = 53;
  auto a = random_vector<float>(k * m, 1), b = random_vector<float>(n * k, 2);
  auto c = random_vector<float>(m * n, 3);
  auto want = reference<float>(true, true, m, n, k, 0.5f, a, k, b, n, -1.0f, c, m);
  sgemm_("T", "T", &m, &n, &k, std::array<float, 1>{0.5f}.data(), a.data(), &k, b.data(), &n,
         std::array<float, 1>{-1.0f}.data(), c.data(), &m, 1, 1);
  expect_near(c, want, k, "sgemm_ TT");

  // Row-major through CBLAS is the column-major product of the transposes.
  auto ad = random_vector<double>(m * k, 4), bd = random_vector<double>(k * n, 5);
  std::vector<double> cd(m * n, std::numeric_limits<double>::quiet_NaN());
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 2.0, ad.data(), k, bd.data(), n,
              0.0, cd.data(), n);
  // C^T (n x m, column-major view of row-major C) = B^T A^T.
  auto wantd = reference<double>(false, false, n, m, k, 2.0, bd, n, ad, k, 0.0,
                                 std::vector<double>(m * n, 0.0), n);
  expect_near(cd, wantd, k, "cblas_dgemm row-major");
}

TEST(DropIn, AlphaZeroNeverReadsAOrB) {
  std::vector<double> a(64, std::numeric_limits<double>::quiet_NaN()), b(64, INFINITY), c(64, 3.0);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 8, 8, 8, 0.0, a.data(), 8, b.data(), 8,
              2.0, c.data(), 8);
  for (double x : c) ASSERT_EQ(x, 6.0);
}

TEST(DropIn, ConcurrentCallersSmallAndLarge) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t] {
      // Half the threads stay under the CPU-only threshold (256^3), half go past it.
      const int m = t % 2 ? 40 + t : 300 + t, n = t % 2 ? 30 : 280, k = t % 2 ? 20 : 260;
      auto a = random_vector<double>(size_t(m) * k, 10 + t),
           b = random_vector<double>(size_t(k) * n, 20 + t);
      auto c = random_vector<double>(size_t(m) * n, 30 + t);
      auto want = reference<double>(false, false, m, n, k, 1.0, a, m, b, k, 1.0, c, m);
      const double one = 1.0;
      if (t % 4 < 2)
        dgemm_("N", "N", &m, &n, &k, &one, a.data(), &m, b.data(), &k, &one, c.data(), &m, 1, 1);
      else
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a.data(), m, b.data(),
                    k, 1.0, c.data(), m);
      expect_near(c, want, k, ("thread " + std::to_string(t)).c_str());
    });
  for (auto& th : threads) th.join();
}

// Under TANDEM_STRATEGY=hybrid (set by ctest): small calls never start OpenCL; the first large
// call does.
TEST(DropInRouting, OpenClStartsOnlyForLargeCalls) {
  const char* s = std::getenv("TANDEM_STRATEGY");
  ASSERT_TRUE(s != nullptr && std::string(s) == "hybrid") << "run through ctest";
  std::vector<float> a(300 * 300, 1.0f), b(300 * 300, 1.0f), c(300 * 300, 0.0f);
  for (int i = 0; i < 5; ++i)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 200, 200, 200, 1.0f, a.data(), 300,
                b.data(), 300, 0.0f, c.data(), 300);
  EXPECT_FALSE(opencl_started()) << "a call under the threshold started OpenCL";
  EXPECT_EQ(c[0], 200.0f);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 300, 300, 300, 1.0f, a.data(), 300,
              b.data(), 300, 0.0f, c.data(), 300);
  EXPECT_TRUE(opencl_started()) << "a call over the threshold did not reach the GPU path";
  for (float x : c) ASSERT_EQ(x, 300.0f);
}

// With TANDEM_MIN_MNK=0 (set by ctest) every call goes through the configured strategy.
TEST(DropInRouting, ZeroThresholdSendsEveryCallThroughTandem) {
  const char* s = std::getenv("TANDEM_MIN_MNK");
  ASSERT_TRUE(s != nullptr && std::string(s) == "0") << "run through ctest";
  std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, 0.0f);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 4, 4, 4, 1.0f, a.data(), 4, b.data(), 4,
              0.0f, c.data(), 4);
  EXPECT_TRUE(opencl_started());
  for (float x : c) ASSERT_EQ(x, 4.0f);
}

}  // namespace
