// The drop-in's level-3 routines against OpenBLAS alone, side by side in one process: each call
// runs through libtandem_blas.so's entry, which this program links, and through OpenBLAS's own
// entry (found with dlsym in the library that defines openblas_get_config), from the caller's
// ordinary memory, alternating, with medians after a warm-up. Every tandem result is compared
// with OpenBLAS's. Prints one JSON line per case. For s and d: syrk, syr2k, symm, trmm, trsm
// through CBLAS, and gemm_half, the largest product syrk sends to tandem's GEMM. For c and z: herk,
// hemm, symm, trmm, trsm through the Fortran entries (as LAPACK calls them), GFLOPS at four real
// flops per complex one.
//
//   level3_bench [SIZES [REPS [ordinary|tandem_malloc [PRECISIONS]]]]
//   e.g. level3_bench 1024,4096,8192 5 ordinary s,d,c,z     (PRECISIONS: default s,d)
//
// tandem_malloc puts every operand in tandem_malloc's memory (both sides use it).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "blas3/dropin/blas_entries.hpp"
#include "openblas_own.hpp"
#include "tandem/tandem.h"

namespace {

// Where the operands live: the caller's ordinary heap, or tandem_malloc's memory (pinned where
// the device gains from it), as `level3_bench ... tandem_malloc` asks.
bool g_tandem_memory = false;

template <class T>
struct Memory {
  using value_type = T;
  Memory() = default;
  template <class U>
  explicit Memory(const Memory<U>&) {}
  T* allocate(size_t n) {
    void* p = g_tandem_memory ? tandem_malloc(n * sizeof(T)) : std::malloc(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { g_tandem_memory ? tandem_free(p) : std::free(p); }
  bool operator==(const Memory&) const { return true; }
  bool operator!=(const Memory&) const { return false; }
};

template <class T>
using Vec = std::vector<T, Memory<T>>;

double seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One routine at one size: `run(ours, out)` computes into `out` (restored from the inputs first)
// through tandem (ours) or OpenBLAS. Returns the JSON line.
template <class T>
std::string measure(const char* routine, int n, int reps, double flops,
                    const std::function<void(bool, Vec<T>&)>& run) {
  Vec<T> mine(Memory<T>{}), theirs(Memory<T>{});
  run(true, mine);  // warm-up: OpenCL start, kernels built, pages touched
  run(false, theirs);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(mine[i] - theirs[i])));
    scale = std::max(scale, static_cast<double>(std::abs(theirs[i])));
  }
  std::vector<double> t_ours, t_theirs;
  for (int r = 0; r < reps; ++r) {
    t_theirs.push_back(seconds([&] { run(false, theirs); }));
    t_ours.push_back(seconds([&] { run(true, mine); }));
  }
  const double ours = median(t_ours), blas = median(t_theirs);
  std::ostringstream line;
  namespace d = tandem::detail;
  line << "{\"routine\": \"" << d::routine_name(d::precision_of<T>(), routine).c_str()
       << "\", \"n\": " << n << ", \"memory\": \""
       << (g_tandem_memory ? "tandem_malloc" : "ordinary") << "\""
       << ", \"reps\": " << reps << ", \"openblas_s\": " << blas << ", \"tandem_s\": " << ours
       << ", \"openblas_gflops\": " << flops / blas * 1e-9
       << ", \"tandem_gflops\": " << flops / ours * 1e-9 << ", \"speedup\": " << blas / ours
       << ", \"max_rel_diff\": " << (scale > 0 ? worst / scale : worst) << "}";
  return line.str();
}

template <class T>
struct Calls;
template <>
struct Calls<float> {
  using syrk = decltype(&cblas_ssyrk);
  using syr2k = decltype(&cblas_ssyr2k);
  using symm = decltype(&cblas_ssymm);
  using trmm = decltype(&cblas_strmm);
  using gemm = decltype(&cblas_sgemm);
  static constexpr gemm tandem_gemm = &cblas_sgemm;
  static constexpr syrk tandem_syrk = &cblas_ssyrk;
  static constexpr syr2k tandem_syr2k = &cblas_ssyr2k;
  static constexpr symm tandem_symm = &cblas_ssymm;
  static constexpr trmm tandem_trmm = &cblas_strmm, tandem_trsm = &cblas_strsm;
  static constexpr const char* names[6] = {"cblas_ssyrk", "cblas_ssyr2k", "cblas_ssymm",
                                           "cblas_strmm", "cblas_strsm",  "cblas_sgemm"};
};
template <>
struct Calls<double> {
  using syrk = decltype(&cblas_dsyrk);
  using syr2k = decltype(&cblas_dsyr2k);
  using symm = decltype(&cblas_dsymm);
  using trmm = decltype(&cblas_dtrmm);
  using gemm = decltype(&cblas_dgemm);
  static constexpr gemm tandem_gemm = &cblas_dgemm;
  static constexpr syrk tandem_syrk = &cblas_dsyrk;
  static constexpr syr2k tandem_syr2k = &cblas_dsyr2k;
  static constexpr symm tandem_symm = &cblas_dsymm;
  static constexpr trmm tandem_trmm = &cblas_dtrmm, tandem_trsm = &cblas_dtrsm;
  static constexpr const char* names[6] = {"cblas_dsyrk", "cblas_dsyr2k", "cblas_dsymm",
                                           "cblas_dtrmm", "cblas_dtrsm",  "cblas_dgemm"};
};

template <class T>
void bench(int n, int reps) {
  using C = Calls<T>;
  const size_t nn = static_cast<size_t>(n) * static_cast<size_t>(n);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  Vec<T> a(nn, Memory<T>{}), b(nn, Memory<T>{}), c(nn, Memory<T>{}), tri(nn, Memory<T>{});
  for (size_t i = 0; i < nn; ++i) {
    a[i] = static_cast<T>(u(rng));
    b[i] = static_cast<T>(u(rng));
    c[i] = static_cast<T>(u(rng));
    // Well conditioned for trsm: a dominant diagonal, small off-diagonal entries.
    const size_t row = i % static_cast<size_t>(n), col = i / static_cast<size_t>(n);
    tri[i] = row == col ? static_cast<T>(2 + std::abs(u(rng))) : static_cast<T>(u(rng) / n);
  }
  const double n3 = static_cast<double>(n) * n * n;
  const auto syrk_f = openblas_own<typename C::syrk>(C::names[0]);
  const auto syr2k_f = openblas_own<typename C::syr2k>(C::names[1]);
  const auto symm_f = openblas_own<typename C::symm>(C::names[2]);
  const auto trmm_f = openblas_own<typename C::trmm>(C::names[3]);
  const auto trsm_f = openblas_own<typename C::trmm>(C::names[4]);
  // The largest product syrk sends to tandem's GEMM: (n/2) x (n/2) over n.
  const int h = n / 2;
  const auto gemm_f = openblas_own<typename C::gemm>(C::names[5]);
  std::printf("%s\n",
              measure<T>("gemm_half", n, reps, 2.0 * h * h * n, [&](bool ours, Vec<T>& out) {
                out = c;
                (ours ? C::tandem_gemm : gemm_f)(
                    CblasColMajor, CblasTrans, CblasNoTrans, h, h, n, T(1), a.data(), n,
                    a.data() + static_cast<size_t>(h) * n, n, T(0.5), out.data(), n);
              }).c_str());
  std::printf("%s\n", measure<T>("syrk", n, reps, n3, [&](bool ours, Vec<T>& out) {
                        out = c;
                        (ours ? C::tandem_syrk : syrk_f)(CblasColMajor, CblasLower, CblasTrans, n,
                                                         n, T(1), a.data(), n, T(0.5), out.data(),
                                                         n);
                      }).c_str());
  std::printf("%s\n", measure<T>("syr2k", n, reps, 2 * n3, [&](bool ours, Vec<T>& out) {
                        out = c;
                        (ours ? C::tandem_syr2k : syr2k_f)(CblasColMajor, CblasUpper, CblasNoTrans,
                                                           n, n, T(1), a.data(), n, b.data(), n,
                                                           T(0.5), out.data(), n);
                      }).c_str());
  std::printf("%s\n", measure<T>("symm", n, reps, 2 * n3, [&](bool ours, Vec<T>& out) {
                        out = c;
                        (ours ? C::tandem_symm : symm_f)(CblasColMajor, CblasLeft, CblasLower, n, n,
                                                         T(1), a.data(), n, b.data(), n, T(0.5),
                                                         out.data(), n);
                      }).c_str());
  std::printf("%s\n", measure<T>("trmm", n, reps, n3, [&](bool ours, Vec<T>& out) {
                        out = b;
                        (ours ? C::tandem_trmm : trmm_f)(CblasColMajor, CblasRight, CblasUpper,
                                                         CblasNoTrans, CblasNonUnit, n, n, T(1),
                                                         tri.data(), n, out.data(), n);
                      }).c_str());
  std::printf("%s\n", measure<T>("trsm", n, reps, n3, [&](bool ours, Vec<T>& out) {
                        out = b;
                        (ours ? C::tandem_trsm : trsm_f)(CblasColMajor, CblasLeft, CblasLower,
                                                         CblasNoTrans, CblasNonUnit, n, n, T(1),
                                                         tri.data(), n, out.data(), n);
                      }).c_str());
  std::fflush(stdout);
}

// The complex routines LAPACK's c and z solvers call, through the Fortran entries: herk (lower,
// A^H A), hemm and symm (left, lower), trmm (right, upper) and trsm (left, lower, conjugate
// transpose). GFLOPS count a complex multiply-add as 8 flops.
template <class T>
void bench_complex(int n, int reps) {
  namespace e = tandem::detail::blas_entries;
  using R = typename T::value_type;
  const auto lookup = [](const char* name) { return openblas_own<void*>(name); };
  const e::Level3<T> ours = e::resolved<T>(), theirs = e::found<T>(lookup);
  const e::Hermitian<T> ours_h = e::resolved_hermitian<T>(),
                        theirs_h = e::found_hermitian<T>(lookup);
  const size_t nn = static_cast<size_t>(n) * static_cast<size_t>(n);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  const auto value = [&] { return T(static_cast<R>(u(rng)), static_cast<R>(u(rng))); };
  Vec<T> a(nn, Memory<T>{}), b(nn, Memory<T>{}), c(nn, Memory<T>{}), tri(nn, Memory<T>{});
  for (size_t i = 0; i < nn; ++i) {
    a[i] = value();
    b[i] = value();
    c[i] = value();
    const size_t row = i % static_cast<size_t>(n), col = i / static_cast<size_t>(n);
    tri[i] = row == col ? T(static_cast<R>(2 + std::abs(u(rng))), 0) : value() / T(R(n));
  }
  const double n3 = 4.0 * n * static_cast<double>(n) * n;
  const blasint nb = n;
  const T one(1), half(R(0.5));
  const R r_one = 1, r_half = R(0.5);
  std::printf("%s\n", measure<T>("herk", n, reps, n3, [&](bool mine, Vec<T>& out) {
                        out = c;
                        (mine ? ours_h : theirs_h)
                            .herk("L", "C", &nb, &nb, &r_one, a.data(), &nb, &r_half, out.data(),
                                  &nb);
                      }).c_str());
  std::printf("%s\n", measure<T>("hemm", n, reps, 2 * n3, [&](bool mine, Vec<T>& out) {
                        out = c;
                        (mine ? ours_h : theirs_h)
                            .hemm("L", "L", &nb, &nb, &one, a.data(), &nb, b.data(), &nb, &half,
                                  out.data(), &nb);
                      }).c_str());
  std::printf("%s\n", measure<T>("symm", n, reps, 2 * n3, [&](bool mine, Vec<T>& out) {
                        out = c;
                        (mine ? ours : theirs)
                            .symm("L", "L", &nb, &nb, &one, a.data(), &nb, b.data(), &nb, &half,
                                  out.data(), &nb);
                      }).c_str());
  std::printf("%s\n", measure<T>("trmm", n, reps, n3, [&](bool mine, Vec<T>& out) {
                        out = b;
                        (mine ? ours : theirs)
                            .trmm("R", "U", "N", "N", &nb, &nb, &one, tri.data(), &nb, out.data(),
                                  &nb);
                      }).c_str());
  std::printf("%s\n", measure<T>("trsm", n, reps, n3, [&](bool mine, Vec<T>& out) {
                        out = b;
                        (mine ? ours : theirs)
                            .trsm("L", "L", "C", "N", &nb, &nb, &one, tri.data(), &nb, out.data(),
                                  &nb);
                      }).c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  std::stringstream list(argc > 1 ? argv[1] : "512,2048");
  for (std::string s; std::getline(list, s, ',');) sizes.push_back(std::stoi(s));
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  g_tandem_memory = argc > 3 && std::string(argv[3]) == "tandem_malloc";
  const std::string precisions = argc > 4 ? argv[4] : "s,d";
  for (int n : sizes)
    for (char p : precisions) {
      if (p == 's') bench<float>(n, reps);
      if (p == 'd') bench<double>(n, reps);
      if (p == 'c') bench_complex<std::complex<float>>(n, reps);
      if (p == 'z') bench_complex<std::complex<double>>(n, reps);
    }
  return 0;
}
