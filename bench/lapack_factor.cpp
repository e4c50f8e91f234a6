// What the drop-in does for a program that calls LAPACK (issue 14 item 5, issue 41): reference
// LAPACK's dpotrf and dgetrf (zpotrf and zgetrf for z), whose BLAS calls reach whatever BLAS the
// process resolves (tandem's under LD_PRELOAD=libtandem_blas.so, OpenBLAS's otherwise), against
// OpenBLAS's own dpotrf and dgetrf (its LAPACK, which calls its kernels directly), alternating in
// one process, from ordinary memory. Reference LAPACK is loaded from the path given, so the
// system's LAPACK alternative does not matter. Each repetition factors a fresh copy of the same
// matrix (the copy is not timed); medians after one warm-up. Every reference result is compared
// with OpenBLAS's: the pivots must be the same and the factors agree to a relative 1e-8. Prints one
// JSON line per case. GFLOPS count a complex factorisation's flops as four times a real one's of
// its size.
//
//   lapack_factor REFERENCE_LIBLAPACK [SIZES [REPS [PRECISIONS]]]   (PRECISIONS: d, z or d,z)
//   e.g. LD_PRELOAD=libtandem_blas.so lapack_factor /usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3
//   8192,16384 3
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "openblas_own.hpp"

namespace {

// A factorisation's entries (Fortran's, the matrix as void*: T's layout).
using Potrf = void (*)(const char*, const int*, void*, const int*, int*, std::size_t);
using Getrf = void (*)(const int*, const int*, void*, const int*, int*, int*);

struct Lapack {
  Potrf potrf;
  Getrf getrf;
};

template <class T>
constexpr bool kComplex = !std::is_floating_point_v<T>;

template <class T>
std::string name(const char* routine) {
  return std::string(kComplex<T> ? "z" : "d") + routine;
}

template <class T>
Lapack reference(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
    std::exit(1);
  }
  auto* potrf = reinterpret_cast<Potrf>(dlsym(lib, (name<T>("potrf") + "_").c_str()));
  auto* getrf = reinterpret_cast<Getrf>(dlsym(lib, (name<T>("getrf") + "_").c_str()));
  if (potrf == nullptr || getrf == nullptr) {
    std::fprintf(stderr, "%s has no %spotrf_ or getrf_\n", path, name<T>("").c_str());
    std::exit(1);
  }
  return {potrf, getrf};
}

template <class T>
Lapack openblas() {
  return {openblas_own<Potrf>((name<T>("potrf") + "_").c_str()),
          openblas_own<Getrf>((name<T>("getrf") + "_").c_str())};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A symmetric (Hermitian), diagonally dominant matrix with a positive real diagonal (so positive
// definite), or a general random one.
template <class T>
std::vector<T> matrix(int n, bool spd) {
  std::mt19937_64 rng(static_cast<unsigned>(n) * (spd ? 3u : 5u));
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> a(static_cast<size_t>(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = spd ? j : 0; i < n; ++i) {
      T v;
      if constexpr (kComplex<T>)
        v = T(d(rng), d(rng));
      else
        v = d(rng);
      a[i + static_cast<size_t>(j) * n] = v;
      if (spd) {
        if constexpr (kComplex<T>)
          a[j + static_cast<size_t>(i) * n] = std::conj(v);
        else
          a[j + static_cast<size_t>(i) * n] = v;
      }
    }
  if (spd)
    for (int i = 0; i < n; ++i) a[i + static_cast<size_t>(i) * n] = T(n);
  return a;
}

// Factors `pristine` with `f` into `work`; returns the seconds and the info value.
template <class T, class F>
double factor(const std::vector<T>& pristine, std::vector<T>& work, F&& f) {
  std::memcpy(static_cast<void*>(work.data()), pristine.data(), pristine.size() * sizeof(T));
  const auto t0 = std::chrono::steady_clock::now();
  f(work.data());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The largest difference between the two factors, relative to the largest entry, over the part
// the routine writes (for potrf, the lower triangle).
template <class T>
double difference(const std::vector<T>& x, const std::vector<T>& y, int n, bool lower) {
  double worst = 0, scale = 0;
  for (int j = 0; j < n; ++j)
    for (int i = lower ? j : 0; i < n; ++i) {
      const size_t k = i + static_cast<size_t>(j) * n;
      worst = std::max(worst, std::abs(x[k] - y[k]));
      scale = std::max(scale, std::abs(y[k]));
    }
  return scale > 0 ? worst / scale : worst;
}

template <class T>
std::string measure(const Lapack& ref, const Lapack& own, bool cholesky, int n, int reps) {
  const std::vector<T> a = matrix<T>(n, cholesky);
  std::vector<T> mine(a.size()), theirs(a.size());
  std::vector<int> piv_mine(n), piv_theirs(n);
  int info_mine = 0, info_theirs = 0;
  const char lower = 'L';
  auto run = [&](const Lapack& l, T* m, int* piv, int* info) {
    if (cholesky)
      l.potrf(&lower, &n, m, &n, info, 1);
    else
      l.getrf(&n, &n, m, &n, piv, info);
  };
  auto ours = [&](T* m) { run(ref, m, piv_mine.data(), &info_mine); };
  auto openblas = [&](T* m) { run(own, m, piv_theirs.data(), &info_theirs); };
  factor(a, mine, ours);  // warm-up
  factor(a, theirs, openblas);
  std::vector<double> t_ref, t_own;
  for (int r = 0; r < reps; ++r) {
    if (r % 2 == 0) {
      t_ref.push_back(factor(a, mine, ours));
      t_own.push_back(factor(a, theirs, openblas));
    } else {
      t_own.push_back(factor(a, theirs, openblas));
      t_ref.push_back(factor(a, mine, ours));
    }
  }
  const double diff = difference(mine, theirs, n, cholesky);
  const bool same_pivots = cholesky || piv_mine == piv_theirs;
  const bool ok = info_mine == 0 && info_theirs == 0 && same_pivots && diff < 1e-8;
  const double flops =
      (kComplex<T> ? 4 : 1) * (cholesky ? std::pow(n, 3) / 3 : 2 * std::pow(n, 3) / 3);
  const double s_ref = median(t_ref), s_own = median(t_own);
  std::ostringstream line;
  line << "{\"routine\": \"" << name<T>(cholesky ? "potrf" : "getrf") << "\", \"n\": " << n
       << ", \"reps\": " << reps << ", \"blas\": \""
       << (std::getenv("LD_PRELOAD") != nullptr ? "tandem (LD_PRELOAD)" : "OpenBLAS") << "\""
       << ", \"reference_lapack_s\": " << s_ref << ", \"openblas_lapack_s\": " << s_own
       << ", \"reference_gflops\": " << flops / s_ref * 1e-9
       << ", \"openblas_gflops\": " << flops / s_own * 1e-9
       << ", \"speedup_vs_openblas\": " << s_own / s_ref << ", \"max_rel_diff\": " << diff
       << ", \"same_pivots\": " << (same_pivots ? "true" : "false") << ", \"info\": [" << info_mine
       << ", " << info_theirs << "], \"checked\": " << (ok ? "true" : "false") << "}";
  return line.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s REFERENCE_LIBLAPACK [SIZES [REPS [PRECISIONS]]]\n", argv[0]);
    return 2;
  }
  std::vector<int> sizes;
  std::stringstream in(argc > 2 ? argv[2] : "2048");
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(std::atoi(item.c_str()));
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  const std::string precisions = argc > 4 ? argv[4] : "d";
  for (char p : precisions) {
    if (p == ',') continue;
    if (p != 'd' && p != 'z') {
      std::fprintf(stderr, "precisions must be d, z or d,z\n");
      return 2;
    }
    const Lapack ref =
        p == 'd' ? reference<double>(argv[1]) : reference<std::complex<double>>(argv[1]);
    const Lapack own = p == 'd' ? openblas<double>() : openblas<std::complex<double>>();
    for (int n : sizes)
      for (bool cholesky : {true, false}) {
        const std::string line = p == 'd'
                                     ? measure<double>(ref, own, cholesky, n, reps)
                                     : measure<std::complex<double>>(ref, own, cholesky, n, reps);
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
      }
  }
  return 0;
}
