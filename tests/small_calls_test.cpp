// The drop-in is free below its threshold (issue 14): a GEMM call that stays on the CPU does what
// OpenBLAS alone does and nothing more. This program links libtandem_blas.so first and defines
// malloc, calloc, realloc, getenv, the pthread lock calls and openblas_set_num_threads itself
// (exported, so every library's calls land here) and forwards each to the real one. While the test
// thread counts, each call is charged to OpenBLAS when it comes from OpenBLAS's own code (its
// allocator and locks vary with timing) and to "the rest" otherwise: tandem, libstdc++, oneTBB,
// the ICD loader. Loops of small calls through tandem's entries must charge nothing to the rest,
// exactly as the same loops through OpenBLAS's own entries (found with dlsym) do. OpenCL must not
// start, though ctest runs this under TANDEM_STRATEGY=hybrid. Results must be OpenBLAS's to the
// bit, on every layout, transpose and entry, with NaN where BLAS says nothing is read.
#include <cblas.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <pthread.h>

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void sgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*, const float*,
            const float*, const blasint*, const float*, const blasint*, const float*, float*,
            const blasint*, size_t, size_t);
void dgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*, const double*,
            const double*, const blasint*, const double*, const blasint*, const double*, double*,
            const blasint*, size_t, size_t);
void cgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*,
            const std::complex<float>*, const std::complex<float>*, const blasint*,
            const std::complex<float>*, const blasint*, const std::complex<float>*,
            std::complex<float>*, const blasint*, size_t, size_t);
void zgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*,
            const std::complex<double>*, const std::complex<double>*, const blasint*,
            const std::complex<double>*, const blasint*, const std::complex<double>*,
            std::complex<double>*, const blasint*, size_t, size_t);
void csyr2k_(const char*, const char*, const blasint*, const blasint*, const std::complex<float>*,
             const std::complex<float>*, const blasint*, const std::complex<float>*, const blasint*,
             const std::complex<float>*, std::complex<float>*, const blasint*, size_t, size_t);
void cherk_(const char*, const char*, const blasint*, const blasint*, const float*,
            const std::complex<float>*, const blasint*, const float*, std::complex<float>*,
            const blasint*, size_t, size_t);
void ctrmm_(const char*, const char*, const char*, const char*, const blasint*, const blasint*,
            const std::complex<float>*, const std::complex<float>*, const blasint*,
            std::complex<float>*, const blasint*, size_t, size_t, size_t, size_t);
}

namespace {

struct Counts {
  long allocations = 0, getenvs = 0, locks = 0, thread_changes = 0;
  bool operator==(const Counts& o) const {
    return allocations == o.allocations && getenvs == o.getenvs && locks == o.locks &&
           thread_changes == o.thread_changes;
  }
};

thread_local bool t_counting = false;
thread_local Counts t_counts;

template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// Looked up before any counting starts (dlsym may allocate).
struct Real {
  decltype(&getenv) getenv_ = next<decltype(&getenv)>("getenv");
  decltype(&pthread_mutex_lock) mutex_lock =
      next<decltype(&pthread_mutex_lock)>("pthread_mutex_lock");
  decltype(&pthread_mutex_trylock) mutex_trylock =
      next<decltype(&pthread_mutex_trylock)>("pthread_mutex_trylock");
  decltype(&pthread_rwlock_rdlock) rdlock =
      next<decltype(&pthread_rwlock_rdlock)>("pthread_rwlock_rdlock");
  decltype(&pthread_rwlock_wrlock) wrlock =
      next<decltype(&pthread_rwlock_wrlock)>("pthread_rwlock_wrlock");
  decltype(&openblas_set_num_threads) set_threads =
      next<decltype(&openblas_set_num_threads)>("openblas_set_num_threads");
};

const Real& real() {
  static const Real r;
  return r;
}

// OpenBLAS's loaded segments, found before counting starts.
struct Range {
  uintptr_t begin, end;
};
std::vector<Range>& openblas_code() {
  static std::vector<Range> ranges = [] {
    std::vector<Range> found;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
          if (info->dlpi_name == nullptr ||
              std::string(info->dlpi_name).find("libopenblas") == std::string::npos)
            return 0;
          for (int i = 0; i < info->dlpi_phnum; ++i)
            if (info->dlpi_phdr[i].p_type == PT_LOAD) {
              const uintptr_t start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
              static_cast<std::vector<Range>*>(out)->push_back(
                  {start, start + info->dlpi_phdr[i].p_memsz});
            }
          return 0;
        },
        &found);
    return found;
  }();
  return ranges;
}

thread_local Counts t_openblas;  // what OpenBLAS's own code did meanwhile

void count(long Counts::*what, void* caller) {
  if (!t_counting) return;
  const auto at = reinterpret_cast<uintptr_t>(caller);
  for (const Range& r : openblas_code())
    if (at >= r.begin && at < r.end) {
      ++(t_openblas.*what);
      return;
    }
  ++(t_counts.*what);
}

#define COUNT(what) count(&Counts::what, __builtin_return_address(0))

// Everything count() needs is built before counting starts (building it allocates).
void start_counting() {
  (void)real();
  (void)openblas_code();
  t_counts = t_openblas = Counts{};
  t_counting = true;
}

}  // namespace

extern "C" {
void* malloc(size_t n) {
  COUNT(allocations);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) {
  COUNT(allocations);
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  COUNT(allocations);
  return __libc_realloc(p, n);
}
char* getenv(const char* name) {
  COUNT(getenvs);
  return real().getenv_(name);
}
int pthread_mutex_lock(pthread_mutex_t* m) {
  COUNT(locks);
  return real().mutex_lock(m);
}
int pthread_mutex_trylock(pthread_mutex_t* m) {
  COUNT(locks);
  return real().mutex_trylock(m);
}
int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  COUNT(locks);
  return real().rdlock(l);
}
int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  COUNT(locks);
  return real().wrlock(l);
}
void openblas_set_num_threads(int n) {
  COUNT(thread_changes);
  real().set_threads(n);
}
}

namespace {

template <class F>
F own(const char* name) {
  void* lib = nullptr;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&openblas_get_config), &info) != 0)
    lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  return lib != nullptr ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

// Here and in CI the OpenCL device is PoCL, which the ICD loader maps once a platform list is
// asked for (libOpenCL itself is always mapped: libtandem links it).
bool opencl_started() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libpocl") != std::string::npos) return true;
  return false;
}

// cblas.h passes a real type's scalars by value and a complex type's by address, its matrices
// untyped.
template <class T>
constexpr bool kComplex = !std::is_floating_point_v<T>;
template <class T>
using CblasScalar = std::conditional_t<kComplex<T>, const void*, T>;
template <class T>
using CblasIn = std::conditional_t<kComplex<T>, const void*, const T*>;
template <class T>
using CblasOut = std::conditional_t<kComplex<T>, void*, T*>;
template <class T>
CblasScalar<T> cblas_scalar(const T& x) {
  if constexpr (kComplex<T>)
    return &x;
  else
    return x;
}
// A scalar of T: re, and im where T is complex.
template <class T>
T scalar(double re, double im) {
  if constexpr (kComplex<T>)
    return T(static_cast<typename T::value_type>(re), static_cast<typename T::value_type>(im));
  else
    return static_cast<T>(re);
}

template <class T>
using Cblas = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                       CblasScalar<T>, CblasIn<T>, blasint, CblasIn<T>, blasint, CblasScalar<T>,
                       CblasOut<T>, blasint);
template <class T>
using Fortran = void (*)(const char*, const char*, const blasint*, const blasint*, const blasint*,
                         const T*, const T*, const blasint*, const T*, const blasint*, const T*, T*,
                         const blasint*, size_t, size_t);

template <class T>
struct Entries {
  Cblas<T> cblas;
  Fortran<T> fortran;
};

using Cf = std::complex<float>;
using Cd = std::complex<double>;

// Each precision's entries as this program resolves them (tandem's, by the link order), and
// OpenBLAS's own, found by name from the precision's letter.
Entries<float> tandem_entries(float) { return {&cblas_sgemm, &sgemm_}; }
Entries<double> tandem_entries(double) { return {&cblas_dgemm, &dgemm_}; }
Entries<Cf> tandem_entries(Cf) { return {&cblas_cgemm, &cgemm_}; }
Entries<Cd> tandem_entries(Cd) { return {&cblas_zgemm, &zgemm_}; }
template <class T>
Entries<T> openblas_entries(T) {
  const std::string p(1, std::is_same_v<T, float>    ? 's'
                         : std::is_same_v<T, double> ? 'd'
                         : std::is_same_v<T, Cf>     ? 'c'
                                                     : 'z');
  return {own<Cblas<T>>(("cblas_" + p + "gemm").c_str()), own<Fortran<T>>((p + "gemm_").c_str())};
}

// One GEMM call, column- or row-major, through the CBLAS or the Fortran entry (column-major).
template <class T>
struct Call {
  bool fortran, row, ta, tb;
  int m, n, k;
  T alpha, beta;
  int pad;  // extra rows in every leading dimension

  int lda() const { return (row == !ta ? k : m) + pad; }
  int ldb() const { return (row == !tb ? n : k) + pad; }
  int ldc() const { return (row ? n : m) + pad; }
  size_t a_size() const { return size_t(lda()) * (row == !ta ? m : k); }
  size_t b_size() const { return size_t(ldb()) * (row == !tb ? k : n); }
  size_t c_size() const { return size_t(ldc()) * (row ? m : n); }

  void run(const Entries<T>& e, const T* a, const T* b, T* c) const {
    if (fortran) {
      const int lda_ = lda(), ldb_ = ldb(), ldc_ = ldc();
      e.fortran(ta ? "T" : "n", tb ? "c" : "N", &m, &n, &k, &alpha, a, &lda_, b, &ldb_, &beta, c,
                &ldc_, 1, 1);
    } else {
      e.cblas(row ? CblasRowMajor : CblasColMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasConjTrans : CblasNoTrans, m, n, k, cblas_scalar(alpha), a, lda(), b, ldb(),
              cblas_scalar(beta), c, ldc());
    }
  }
};

template <class T>
std::vector<T> random_vector(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) {
    const double re = d(rng);
    x = scalar<T>(re, kComplex<T> ? d(rng) : 0);
  }
  return v;
}

// The sizes the issue names and some awkward ones, every layout, transpose and entry.
template <class T>
std::vector<Call<T>> calls() {
  std::vector<Call<T>> out;
  const int shapes[][3] = {{2, 2, 2}, {8, 8, 8}, {32, 32, 32}, {1, 17, 3}, {13, 1, 29}, {7, 11, 1}};
  int i = 0;
  for (const auto& s : shapes)
    for (bool fortran : {false, true})
      for (bool row : {false, true}) {
        if (fortran && row) continue;
        for (bool ta : {false, true})
          for (bool tb : {false, true}) {
            ++i;
            out.push_back({fortran, row, ta, tb, s[0], s[1], s[2],
                           scalar<T>(i % 3 ? 1.5 : -1, i % 2 ? 0.25 : -0.5),
                           scalar<T>(i % 2 ? 0.5 : 1, i % 3 ? 0 : 0.75), i % 3});
          }
      }
  return out;
}

// Runs every call through `e` with counting on; returns the counts. Results go to `outs`.
template <class T>
Counts count_calls(const Entries<T>& e, const std::vector<Call<T>>& cs, int repeats,
                   std::vector<std::vector<T>>& outs) {
  std::mt19937 rng(7);
  std::vector<std::vector<T>> as, bs;
  for (const auto& c : cs) {
    as.push_back(random_vector<T>(c.a_size(), rng));
    bs.push_back(random_vector<T>(c.b_size(), rng));
    outs.push_back(random_vector<T>(c.c_size(), rng));
  }
  start_counting();
  for (int r = 0; r < repeats; ++r)
    for (size_t i = 0; i < cs.size(); ++i) cs[i].run(e, as[i].data(), bs[i].data(), outs[i].data());
  t_counting = false;
  return t_counts;
}

template <class T>
void free_below_threshold() {
  const Entries<T> ours = tandem_entries(T{}), theirs = openblas_entries(T{});
  ASSERT_NE(theirs.cblas, nullptr);
  ASSERT_NE(theirs.fortran, nullptr);
  // tandem's entries are not OpenBLAS's (the link order makes them so): else this proves nothing.
  ASSERT_NE(reinterpret_cast<void*>(ours.cblas), reinterpret_cast<void*>(theirs.cblas));
  ASSERT_NE(reinterpret_cast<void*>(ours.fortran), reinterpret_cast<void*>(theirs.fortran));
  ASSERT_FALSE(openblas_code().empty());
  const auto cs = calls<T>();
  std::vector<std::vector<T>> warm;
  count_calls(ours, cs, 1, warm);  // the first calls may read the environment, once
  std::vector<std::vector<T>> mine, reference;
  const Counts with = count_calls(ours, cs, 3, mine);
  const Counts openblas_with = t_openblas;
  const Counts without = count_calls(theirs, cs, 3, reference);
  // OpenBLAS alone charges nothing to the rest, and neither may tandem.
  EXPECT_TRUE(without == Counts{});
  EXPECT_EQ(with.allocations, 0);
  EXPECT_EQ(with.getenvs, 0);
  EXPECT_EQ(with.locks, 0);
  EXPECT_EQ(with.thread_changes, 0);
  // And OpenBLAS's own code was reached (its locks show that the counting works).
  EXPECT_GT(openblas_with.locks + t_openblas.locks, 0);
  for (size_t i = 0; i < cs.size(); ++i)
    ASSERT_EQ(mine[i], reference[i])
        << "call " << i << " (m=" << cs[i].m << " n=" << cs[i].n << " k=" << cs[i].k << ")";
  EXPECT_FALSE(opencl_started()) << "a call below the threshold started OpenCL";
}

TEST(DropInFree, SmallSgemmDoesWhatOpenBlasDoes) { free_below_threshold<float>(); }
TEST(DropInFree, SmallDgemmDoesWhatOpenBlasDoes) { free_below_threshold<double>(); }
TEST(DropInFree, SmallCgemmDoesWhatOpenBlasDoes) { free_below_threshold<Cf>(); }
TEST(DropInFree, SmallZgemmDoesWhatOpenBlasDoes) { free_below_threshold<Cd>(); }

// The other level-3 routines below the threshold, complex ones and hemm, herk, her2k among them
// (4 n^3 of work at n = 24): one OpenBLAS call each, nothing else.
TEST(DropInFree, SmallLevel3CallsChargeNothing) {
  ASSERT_FALSE(openblas_code().empty());
  std::mt19937 rng(3);
  const int n = 24;
  auto a = random_vector<double>(n * n, rng), b = random_vector<double>(n * n, rng),
       c = random_vector<double>(n * n, rng);
  for (int i = 0; i < n; ++i) a[i * n + i] += 4;  // well conditioned for trsm
  auto af = random_vector<float>(n * n, rng), bf = random_vector<float>(n * n, rng),
       cf = random_vector<float>(n * n, rng);
  for (int i = 0; i < n; ++i) af[i * n + i] += 4;
  auto az = random_vector<Cd>(n * n, rng), bz = random_vector<Cd>(n * n, rng),
       cz = random_vector<Cd>(n * n, rng);
  for (int i = 0; i < n; ++i) az[i * n + i] += 4;
  auto ac = random_vector<Cf>(n * n, rng), bc = random_vector<Cf>(n * n, rng),
       cc = random_vector<Cf>(n * n, rng);
  for (int i = 0; i < n; ++i) ac[i * n + i] += 4;
  const Cd alpha(0.5, -0.25), beta(0.5, 0);
  const Cf alpha_c(0.5f, 0.25f), beta_c(-0.5f, 0);
  const float real_alpha = 0.5f, real_beta = -0.5f;
  const blasint nf = n;
  auto run = [&] {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, n, 0.5, a.data(), n, 0.5, c.data(), n);
    cblas_dsyr2k(CblasRowMajor, CblasUpper, CblasTrans, n, n, 0.5, a.data(), n, b.data(), n, 0.5,
                 c.data(), n);
    cblas_dsymm(CblasColMajor, CblasRight, CblasUpper, n, n, 0.5, a.data(), n, b.data(), n, 0.5,
                c.data(), n);
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, n, n, 0.5, a.data(),
                n, b.data(), n);
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, n, 2.0,
                a.data(), n, b.data(), n);
    cblas_ssyrk(CblasColMajor, CblasUpper, CblasTrans, n, n, 0.5f, af.data(), n, 0.5f, cf.data(),
                n);
    cblas_strsm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasUnit, n, n, 1.0f,
                af.data(), n, bf.data(), n);
    cblas_zherk(CblasRowMajor, CblasLower, CblasConjTrans, n, n, 0.5, az.data(), n, 0.5, cz.data(),
                n);
    cblas_zher2k(CblasColMajor, CblasUpper, CblasNoTrans, n, n, &alpha, az.data(), n, bz.data(), n,
                 0.5, cz.data(), n);
    cblas_zhemm(CblasRowMajor, CblasLeft, CblasUpper, n, n, &alpha, az.data(), n, bz.data(), n,
                &beta, cz.data(), n);
    cblas_ztrsm(CblasColMajor, CblasLeft, CblasLower, CblasConjTrans, CblasNonUnit, n, n, &alpha,
                az.data(), n, bz.data(), n);
    cblas_csyrk(CblasColMajor, CblasUpper, CblasTrans, n, n, &alpha_c, ac.data(), n, &beta_c,
                cc.data(), n);
    csyr2k_("L", "N", &nf, &nf, &alpha_c, ac.data(), &nf, bc.data(), &nf, &beta_c, cc.data(), &nf,
            1, 1);
    cherk_("U", "C", &nf, &nf, &real_alpha, ac.data(), &nf, &real_beta, cc.data(), &nf, 1, 1);
    ctrmm_("R", "U", "C", "U", &nf, &nf, &alpha_c, ac.data(), &nf, bc.data(), &nf, 1, 1, 1, 1);
  };
  run();  // the first calls may read the environment, once
  start_counting();
  for (int r = 0; r < 3; ++r) run();
  t_counting = false;
  EXPECT_EQ(t_counts.allocations, 0);
  EXPECT_EQ(t_counts.getenvs, 0);
  EXPECT_EQ(t_counts.locks, 0);
  EXPECT_EQ(t_counts.thread_changes, 0);
  EXPECT_FALSE(opencl_started());
}

// Calls without a product are done by tandem, with BLAS's rules, and cost nothing either.
template <class T>
void no_product() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> a(64, nan), b(64, nan), c(64, T(3)), zeroed(64, nan);
  const Entries<T> ours = tandem_entries(T{});
  // The process's first call reads the environment, once.
  ours.cblas(CblasColMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, T(1), c.data(), 1, c.data(), 1,
             T(0), zeroed.data(), 1);
  zeroed[0] = nan;
  start_counting();
  // alpha = 0: A and B are not read, C = beta C.
  ours.cblas(CblasRowMajor, CblasNoTrans, CblasTrans, 5, 6, 7, T(0), a.data(), 7, b.data(), 7, T(2),
             c.data(), 8);
  // k = 0 and beta = 0: C = 0 without reading it.
  const int five = 5, six = 6, zero = 0, eight = 8;
  const T one = 1, beta0 = 0;
  ours.fortran("N", "N", &five, &six, &zero, &one, a.data(), &eight, b.data(), &eight, &beta0,
               zeroed.data(), &eight, 1, 1);
  // m = 0: nothing at all.
  ours.cblas(CblasColMajor, CblasNoTrans, CblasNoTrans, 0, 6, 7, T(1), nullptr, 1, nullptr, 7, T(1),
             nullptr, 1);
  t_counting = false;
  EXPECT_TRUE(t_counts == Counts{});
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 8; ++j) ASSERT_EQ(c[i * 8 + j], j < 6 ? T(6) : T(3)) << i << "," << j;
  for (int j = 0; j < 8; ++j)
    for (int i = 0; i < 8; ++i) {
      const T x = zeroed[j * 8 + i];
      if (j < 6 && i < 5)
        ASSERT_EQ(x, T(0)) << i << "," << j;
      else
        ASSERT_TRUE(std::isnan(x)) << i << "," << j;
    }
  EXPECT_FALSE(opencl_started());
}

TEST(DropInFree, NoProductSingle) { no_product<float>(); }
TEST(DropInFree, NoProductDouble) { no_product<double>(); }

// NaN in C with beta = 0 must not survive a product below the threshold either.
TEST(DropInFree, BetaZeroOverwritesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int n : {2, 8, 31}) {
    std::vector<double> a(n * n, 1.0), b(n * n, 2.0), c(n * n, nan);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n,
                0.0, c.data(), n);
    for (double x : c) ASSERT_EQ(x, 2.0 * n);
    std::vector<float> af(n * n, 1.0f), bf(n * n, 2.0f), cf(n * n, float(nan));
    const float one = 1, zero = 0;
    sgemm_("T", "N", &n, &n, &n, &one, af.data(), &n, bf.data(), &n, &zero, cf.data(), &n, 1, 1);
    for (float x : cf) ASSERT_EQ(x, static_cast<float>(2 * n));
  }
}

}  // namespace
