// The drop-in BLAS in process: this program links libtandem_blas.so ahead of any BLAS, so its
// GEMM calls (cblas_[sdcz]gemm, [sdcz]gemm_) reach tandem. It defines xerbla_ and cblas_xerbla
// itself (exported), as the reference testers do, to see which positions tandem reports.
#include <cblas.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <csetjmp>
#include <cstdlib>
#include <exception>
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
extern "C" void cgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*,
                       const std::complex<float>*, const std::complex<float>*, const blasint*,
                       const std::complex<float>*, const blasint*, const std::complex<float>*,
                       std::complex<float>*, const blasint*, size_t, size_t);
extern "C" void zgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*,
                       const std::complex<double>*, const std::complex<double>*, const blasint*,
                       const std::complex<double>*, const blasint*, const std::complex<double>*,
                       std::complex<double>*, const blasint*, size_t, size_t);

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

// A program's xerbla_ may not return: R's longjmps to R's prompt. The drop-in reports an invalid
// argument outside any C++ handler, so the jump leaves no exception caught for good behind (as
// one from inside a catch block would: std::current_exception() would still give it), for gemm
// through both interfaces and for the other level-3 routines.
TEST(DropIn, AnXerblaThatLongjmpsLeavesNoHandlerBehind) {
  std::vector<double> a(16, 1), b(16, 1), c(16, 7);
  const int two = 2, one = 1;
  const double alpha = 1, beta = 0;
  for (int route = 0; route < 3; ++route) {
    reset();
    std::jmp_buf back;
    if (setjmp(back) == 0) {
      xerbla_recorder::g_jump = &back;
      if (route == 0)
        dgemm_("N", "N", &two, &two, &two, &alpha, a.data(), &one, b.data(), &two, &beta, c.data(),
               &two, 1, 1);
      else if (route == 1)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a.data(), 1, b.data(), 2,
                    0, c.data(), 2);
      else
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, 2, 2, 1,
                    a.data(), 1, b.data(), 2);
      ADD_FAILURE() << "route " << route << ": xerbla did not jump back";
    }
    xerbla_recorder::g_jump = nullptr;
    EXPECT_EQ(g_calls, 1) << "route " << route;
    EXPECT_EQ(std::current_exception(), nullptr) << "route " << route << ": a handler was left";
  }
  EXPECT_EQ(c, std::vector<double>(16, 7));
  EXPECT_EQ(b, std::vector<double>(16, 1));
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

// Complex GEMM: cgemm_/zgemm_ and cblas_cgemm/cblas_zgemm. Each precision's entries, by type.
using Cf = std::complex<float>;
using Cd = std::complex<double>;
void fortran_gemm(const char* ta, const char* tb, int m, int n, int k, Cf alpha, const Cf* a,
                  int lda, const Cf* b, int ldb, Cf beta, Cf* c, int ldc) {
  cgemm_(ta, tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}
void fortran_gemm(const char* ta, const char* tb, int m, int n, int k, Cd alpha, const Cd* a,
                  int lda, const Cd* b, int ldb, Cd beta, Cd* c, int ldc) {
  zgemm_(ta, tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}
void cblas_gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                Cf alpha, const Cf* a, int lda, const Cf* b, int ldb, Cf beta, Cf* c, int ldc) {
  cblas_cgemm(o, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
void cblas_gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                Cd alpha, const Cd* a, int lda, const Cd* b, int ldb, Cd beta, Cd* c, int ldc) {
  cblas_zgemm(o, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

template <class T>
std::vector<T> random_complex(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> v(n);
  using R = typename T::value_type;
  for (auto& x : v) x = T(static_cast<R>(d(rng)), static_cast<R>(d(rng)));
  return v;
}

// The product in complex<double>, by definition: op 'N', 'T' or 'C' (conjugate transpose), each
// matrix read in `row`-major order; beta = 0 does not read C.
template <class T>
std::vector<T> complex_reference(bool row, char ta, char tb, int m, int n, int k, T alpha,
                                 const std::vector<T>& a, int lda, const std::vector<T>& b, int ldb,
                                 T beta, const std::vector<T>& c, int ldc) {
  using D = std::complex<double>;
  auto at = [row](const std::vector<T>& x, int ld, int i, int j) {
    return D(row ? x[size_t(i) * ld + j] : x[i + size_t(j) * ld]);
  };
  auto op = [&](char t, const std::vector<T>& x, int ld, int i, int j) {
    if (t == 'N') return at(x, ld, i, j);
    return t == 'C' ? std::conj(at(x, ld, j, i)) : at(x, ld, j, i);
  };
  std::vector<T> out = c;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      D s = 0;
      for (int p = 0; p < k; ++p) s += op(ta, a, lda, i, p) * op(tb, b, ldb, p, j);
      const D product = alpha == T(0) ? D(0) : D(alpha) * s;
      const D old = beta == T(0) ? D(0) : D(beta) * at(c, ldc, i, j);
      (row ? out[size_t(i) * ldc + j] : out[i + size_t(j) * ldc]) = T(product + old);
    }
  return out;
}

template <class T>
int count_far(const std::vector<T>& got, const std::vector<T>& want, int k) {
  const double tol = 8.0 * (k + 2) * std::numeric_limits<typename T::value_type>::epsilon() * k;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(std::complex<double>(got[i]) - std::complex<double>(want[i])) <= tol)) ++bad;
  return bad;
}

CBLAS_TRANSPOSE cblas_trans(char t) {
  return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans;
}

// Every op pair (N, T, C; Fortran also in lower case), both CBLAS layouts and Fortran, awkward
// sizes with padded leading dimensions, complex alpha and beta and each of them 0. By default these
// sizes go straight to OpenBLAS; dropin.complex_forced runs them through tandem's hybrid split.
template <class T>
void complex_results_match() {
  const int m = 37, n = 29, k = 23, pad = 3;
  const T alphas[] = {T(0.5, -1.25), T(0), T(-1, 0)};
  const T betas[] = {T(-1, 0.5), T(0), T(1)};
  int i = 0;
  for (int iface = 0; iface < 3; ++iface)  // Fortran, CBLAS column-major, CBLAS row-major
    for (char ta : {'N', 'T', 'C'})
      for (char tb : {'N', 'T', 'C'}) {
        ++i;
        const bool row = iface == 2;
        const T alpha = alphas[i % 3], beta = betas[(i / 3) % 3];
        // A is op(A)'s rows x cols as stored: m x k for 'N', k x m otherwise (B: k x n, n x k).
        const int a_rows = ta == 'N' ? m : k, a_cols = ta == 'N' ? k : m;
        const int b_rows = tb == 'N' ? k : n, b_cols = tb == 'N' ? n : k;
        const int lda = (row ? a_cols : a_rows) + pad, ldb = (row ? b_cols : b_rows) + pad,
                  ldc = (row ? n : m) + pad;
        auto a = random_complex<T>(size_t(lda) * (row ? a_rows : a_cols), 100 + i);
        auto b = random_complex<T>(size_t(ldb) * (row ? b_rows : b_cols), 200 + i);
        auto c = random_complex<T>(size_t(ldc) * (row ? m : n), 300 + i);
        if (alpha == T(0)) {  // never read
          std::fill(a.begin(), a.end(), T(NAN, NAN));
          std::fill(b.begin(), b.end(), T(INFINITY, 0));
        }
        if (beta == T(0))  // never read (the padding stays a number, to compare)
          for (int r = 0; r < m; ++r)
            for (int col = 0; col < n; ++col)
              (row ? c[size_t(r) * ldc + col] : c[r + size_t(col) * ldc]) = T(NAN, 0);
        const auto want =
            complex_reference(row, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        if (iface == 0) {
          // Lower case for every other call: 'n', 't' and 'c' mean the same.
          const char fa[2] = {i % 2 ? char(ta - 'A' + 'a') : ta, 0},
                     fb[2] = {i % 2 ? char(tb - 'A' + 'a') : tb, 0};
          fortran_gemm(fa, fb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
        } else {
          cblas_gemm(row ? CblasRowMajor : CblasColMajor, cblas_trans(ta), cblas_trans(tb), m, n, k,
                     alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
        }
        // Padding included: rows past m (or columns past n) must be as they were.
        EXPECT_EQ(count_far(c, want, k), 0)
            << (iface == 0 ? "Fortran"
                : row      ? "CBLAS row-major"
                           : "CBLAS column-major")
            << " " << ta << tb << " alpha=" << alpha << " beta=" << beta;
      }
  if (const char* min = std::getenv("TANDEM_MIN_MNK"); min != nullptr && std::string(min) == "0") {
    EXPECT_TRUE(opencl_started()) << "forced through tandem, no call reached the GPU path";
  }
}

TEST(DropIn, CgemmMatchesAReference) { complex_results_match<Cf>(); }
TEST(DropIn, ZgemmMatchesAReference) { complex_results_match<Cd>(); }

TEST(DropIn, ComplexFortranReportsPositionsThroughXerbla) {
  std::vector<Cf> a(16, 1), b(16, 1), c(16, Cf(7, -7));
  const auto before = c;
  reset();
  fortran_gemm("/", "N", 2, 2, 2, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
  EXPECT_EQ(g_routine, "CGEMM ");
  EXPECT_EQ(g_info, 1);
  reset();
  fortran_gemm("C", "x", 2, 2, 2, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
  EXPECT_EQ(g_info, 2);
  reset();
  fortran_gemm("C", "N", 2, 2, 3, 1, a.data(), 3, b.data(), 2, 0, c.data(), 2);
  EXPECT_EQ(g_info, 10);  // B is k x n: ldb = 2 < k = 3
  reset();
  fortran_gemm("C", "C", 2, 2, 3, 1, a.data(), 2, b.data(), 2, 0, c.data(), 2);
  EXPECT_EQ(g_info, 8);  // conjugated A is stored k x m: lda = 2 < k = 3 (B, n x k, is fine)
  std::vector<Cd> ad(16, 1), bd(16, 1), cd(16, Cd(7, 7));
  const auto before_d = cd;
  reset();
  fortran_gemm("c", "N", 2, -1, 2, Cd(1, 1), ad.data(), 2, bd.data(), 2, 0, cd.data(), 2);
  EXPECT_EQ(g_routine, "ZGEMM ");
  EXPECT_EQ(g_info, 4);
  reset();
  fortran_gemm("N", "N", 3, 2, 2, Cd(0, 1), ad.data(), 3, bd.data(), 2, 0, cd.data(), 2);
  EXPECT_EQ(g_info, 13);  // ldc = 2 < m = 3
  reset();
  fortran_gemm("N", "N", 1, 1, 1, Cd(0, 1), ad.data(), 1, bd.data(), 1, 0, cd.data(), 2);
  EXPECT_EQ(g_calls, 0);  // ldc = 2 >= m = 1 is fine
  EXPECT_EQ(cd[0], Cd(0, 1));
  cd[0] = Cd(7, 7);
  EXPECT_EQ(c, before);
  EXPECT_EQ(cd, before_d);
}

TEST(DropIn, ComplexCblasReportsPositionsAsTheReferenceCblas) {
  std::vector<Cf> a(16, 1), b(16, 1), c(16, Cf(7, 1));
  const auto before = c;
  reset();
  cblas_gemm(CblasColMajor, CblasConjTrans, CblasNoTrans, 2, 2, 3, 1, a.data(), 2, b.data(), 3, 0,
             c.data(), 2);
  EXPECT_EQ(g_routine, "cblas_cgemm");
  EXPECT_EQ(g_info, 9);  // A is k x m: lda = 2 < k = 3
  reset();
  cblas_gemm(static_cast<CBLAS_ORDER>(7), CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a.data(), 2,
             b.data(), 2, 0, c.data(), 2);
  EXPECT_EQ(g_info, 1);
  reset();
  cblas_gemm(CblasColMajor, CblasNoTrans, static_cast<CBLAS_TRANSPOSE>(114), 2, 2, 2, 1, a.data(),
             2, b.data(), 2, 0, c.data(), 2);
  EXPECT_EQ(g_info, 3);
  // Row-major: positions in the transposed call (m is 5, lda 11).
  reset();
  cblas_gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 1, a.data(), 2, b.data(), 2, 0,
             c.data(), 2);
  EXPECT_EQ(g_info, 5);
  std::vector<Cd> ad(16, 1), bd(16, 1), cd(16, Cd(7, 2));
  const auto before_d = cd;
  reset();
  cblas_gemm(CblasRowMajor, CblasNoTrans, CblasConjTrans, 2, 2, 3, Cd(1, -1), ad.data(), 2,
             bd.data(), 3, 0, cd.data(), 2);
  EXPECT_EQ(g_routine, "cblas_zgemm");
  EXPECT_EQ(g_info, 11);  // lda = 2 < k = 3
  reset();
  cblas_gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 3, 2, Cd(1, -1), ad.data(), 2, bd.data(),
             3, 0, cd.data(), 2);
  EXPECT_EQ(g_info, 14);  // ldc = 2 < n = 3
  EXPECT_EQ(c, before);
  EXPECT_EQ(cd, before_d);
}

// tandem serves every complex level-3 routine of the reference BLAS, as Fortran and CBLAS
// entries; OpenBLAS's gemm3m extension (cgemm3m_, zgemm3m_, cblas_cgemm3m, cblas_zgemm3m) still
// resolves to the system's BLAS.
TEST(DropIn, ComplexLevel3IsTandemsButGemm3m) {
  auto library = [](const std::string& symbol) {
    void* at = dlsym(RTLD_DEFAULT, symbol.c_str());
    Dl_info info{};
    if (at == nullptr || dladdr(at, &info) == 0 || info.dli_fname == nullptr) return std::string();
    return std::string(info.dli_fname);
  };
  for (const char* p : {"c", "z"}) {
    for (const char* r : {"gemm", "symm", "hemm", "syrk", "herk", "syr2k", "her2k", "trmm", "trsm"})
      for (const std::string& name : {std::string(p) + r + "_", "cblas_" + std::string(p) + r})
        EXPECT_NE(library(name).find("libtandem_blas"), std::string::npos) << name;
    for (const std::string& name :
         {std::string(p) + "gemm3m_", "cblas_" + std::string(p) + "gemm3m"}) {
      const std::string lib = library(name);
      EXPECT_EQ(lib.find("libtandem_blas"), std::string::npos) << name << " is tandem's";
      EXPECT_FALSE(lib.empty()) << name << " does not resolve";
    }
  }
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

// Under TANDEM_STRATEGY=hybrid (set by ctest): a complex call's work is 4 m n k real
// multiply-adds, so a 100^3 cgemm (4 * 10^6) stays straight and starts nothing, while a 180^3 zgemm
// (4 * 5.8 * 10^6, though m n k alone is below 256^3) goes through tandem and starts OpenCL.
TEST(DropInRouting, ComplexWorkCountsFourMultiplyAdds) {
  const char* s = std::getenv("TANDEM_STRATEGY");
  ASSERT_TRUE(s != nullptr && std::string(s) == "hybrid") << "run through ctest";
  ASSERT_EQ(std::getenv("TANDEM_MIN_MNK"), nullptr) << "the default threshold, 256^3";
  const int small = 100, large = 180;
  std::vector<Cf> a(small * small, Cf(0, 1)), b(small * small, Cf(1, 1)), c(small * small);
  for (int i = 0; i < 3; ++i) {
    fortran_gemm("N", "C", small, small, small, 1, a.data(), small, b.data(), small, 0, c.data(),
                 small);
    cblas_gemm(CblasRowMajor, CblasConjTrans, CblasNoTrans, small, small, small, 1, a.data(), small,
               b.data(), small, 0, c.data(), small);
  }
  EXPECT_FALSE(opencl_started()) << "a complex call under the threshold started OpenCL";
  for (Cf x : c) ASSERT_EQ(x, Cf(100, -100));  // conj(i) (1 + i) = 1 - i, 100 terms
  std::vector<Cd> ad(large * large, Cd(0, 1)), bd(large * large, Cd(1, 1)), cd(large * large);
  fortran_gemm("N", "C", large, large, large, 1, ad.data(), large, bd.data(), large, 0, cd.data(),
               large);
  EXPECT_TRUE(opencl_started()) << "a complex call over the threshold did not reach the GPU path";
  for (Cd x : cd) ASSERT_EQ(x, Cd(180, 180));  // i conj(1 + i) = i (1 - i) = 1 + i
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
