// The drop-in as a program sees it: GEMM calls through the Fortran BLAS (sgemm_, dgemm_, cgemm_,
// zgemm_, the way numpy and LAPACK call), on ordinary malloc'd memory, timed whole. Linked against
// the system's BLAS alone, so one binary runs with OpenBLAS as it is, with libtandem_blas.so
// preloaded, or with NVIDIA's NVBLAS preloaded (bench/dropin_host.sh runs the three in turn).
//
// The operands hold small integers (in both parts of a complex element), so every element of C is
// an exact integer whatever the order of the sums (|C| stays below 2^24, where float is exact):
// each timed call's C is checked at its corners and 256 seeded elements against the exact value,
// computed here in double. Each repetition starts from C's same first values (beta = 1 reads them),
// copied outside the timing. Prints one JSON line per case, GFLOPS at 2mnk (8mnk complex).
//
//   fortran_gemm CASES [REPS [LABEL]]
//   CASES: comma-separated PRECISION:M:N:K[:BETA], e.g. z:4096:4096:4096,d:16384:16384:256:1
#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*,
            const float*, const int*, const float*, const int*, const float*, float*, const int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*);
void cgemm_(const char*, const char*, const int*, const int*, const int*, const void*, const void*,
            const int*, const void*, const int*, const void*, void*, const int*);
void zgemm_(const char*, const char*, const int*, const int*, const int*, const void*, const void*,
            const int*, const void*, const int*, const void*, void*, const int*);
}

namespace {

using C = std::complex<float>;
using Z = std::complex<double>;

void call(int m, int n, int k, float alpha, const float* a, const float* b, float beta, float* c) {
  sgemm_("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m);
}
void call(int m, int n, int k, double alpha, const double* a, const double* b, double beta,
          double* c) {
  dgemm_("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m);
}
void call(int m, int n, int k, C alpha, const C* a, const C* b, C beta, C* c) {
  cgemm_("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m);
}
void call(int m, int n, int k, Z alpha, const Z* a, const Z* b, Z beta, Z* c) {
  zgemm_("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m);
}

template <class T>
constexpr bool kComplex = !std::is_floating_point_v<T>;

// A small integer: re alone for a real type.
template <class T>
T small(int64_t re, int64_t im) {
  if constexpr (kComplex<T>)
    return T(static_cast<typename T::value_type>(re), static_cast<typename T::value_type>(im));
  else
    return (void)im, static_cast<T>(re);
}

Z wide(float x) { return Z(x, 0); }
Z wide(double x) { return Z(x, 0); }
Z wide(C x) { return Z(x.real(), x.imag()); }
Z wide(Z x) { return x; }

struct Case {
  char precision;
  int m, n, k;
  double beta;
};

template <class T>
std::string run(const Case& cs, int reps, const char* label) {
  const int m = cs.m, n = cs.n, k = cs.k;
  const size_t sa = size_t(m) * k, sb = size_t(k) * n, sc = size_t(m) * n;
  // malloc'd, one element past the allocation's start, as a program's arrays often are.
  T* pa = static_cast<T*>(std::malloc((sa + 1) * sizeof(T)));
  T* pb = static_cast<T*>(std::malloc((sb + 1) * sizeof(T)));
  T* pc = static_cast<T*>(std::malloc((sc + 1) * sizeof(T)));
  T *a = pa + 1, *b = pb + 1, *c = pc + 1;
  std::vector<T> c0(sc);
  for (size_t i = 0; i < sa; ++i) a[i] = small<T>(int64_t(i * 7 % 5) - 2, int64_t(i * 11 % 3) - 1);
  for (size_t i = 0; i < sb; ++i) b[i] = small<T>(int64_t(i * 5 % 7) - 3, int64_t(i * 13 % 5) - 2);
  for (size_t i = 0; i < sc; ++i) c0[i] = small<T>(int64_t(i % 3) - 1, int64_t(i % 2));
  const T alpha = small<T>(1, 0), beta = small<T>(static_cast<int64_t>(cs.beta), 0);
  // The corners and a seeded sample of C (column-major).
  std::vector<std::pair<int, int>> at{{0, 0}, {m - 1, 0}, {0, n - 1}, {m - 1, n - 1}};
  std::mt19937_64 rng(static_cast<uint64_t>(m) * 31 + static_cast<uint64_t>(n));
  for (int s = 0; s < 256; ++s)
    at.emplace_back(std::uniform_int_distribution<int>(0, m - 1)(rng),
                    std::uniform_int_distribution<int>(0, n - 1)(rng));
  std::vector<Z> want;
  for (auto [i, j] : at) {
    Z s = wide(beta) * wide(c0[size_t(j) * m + i]);
    for (int p = 0; p < k; ++p) s += wide(a[size_t(p) * m + i]) * wide(b[size_t(j) * k + p]);
    want.push_back(s);
  }
  std::vector<double> seconds;
  std::string check = "ok";
  for (int r = 0; r <= reps; ++r) {  // the first call is a warm-up, checked but not timed
    std::memcpy(c, c0.data(), sc * sizeof(T));
    const auto t0 = std::chrono::steady_clock::now();
    call(m, n, k, alpha, a, b, beta, c);
    const auto t1 = std::chrono::steady_clock::now();
    if (r > 0) seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
    for (size_t s = 0; s < at.size() && check == "ok"; ++s) {
      const auto [i, j] = at[s];
      if (wide(c[size_t(j) * m + i]) != want[s]) {
        std::ostringstream msg;
        msg << "C(" << i << "," << j << ") = " << wide(c[size_t(j) * m + i]) << ", expected "
            << want[s] << " (call " << r << ")";
        check = msg.str();
      }
    }
  }
  std::free(pa), std::free(pb), std::free(pc);
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  const double flops = (kComplex<T> ? 8.0 : 2.0) * m * double(n) * k;
  std::ostringstream j;
  j << "{\"label\": \"" << label << "\", \"routine\": \"" << cs.precision << "gemm_\", \"m\": " << m
    << ", \"n\": " << n << ", \"k\": " << k << ", \"beta\": " << cs.beta
    << ", \"median_s\": " << median << ", \"gflops\": " << flops / median * 1e-9
    << ", \"seconds\": [";
  for (size_t i = 0; i < seconds.size(); ++i) j << (i ? ", " : "") << seconds[i];
  j << "], \"check\": \"" << check << "\"}";
  return j.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fortran_gemm PRECISION:M:N:K[:BETA],... [REPS [LABEL]]\n");
    return 2;
  }
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const char* label = argc > 3 ? argv[3] : "";
  std::stringstream list(argv[1]);
  std::string item;
  int status = 0;
  while (std::getline(list, item, ',')) {
    Case cs{};
    if (std::sscanf(item.c_str(), "%c:%d:%d:%d:%lf", &cs.precision, &cs.m, &cs.n, &cs.k, &cs.beta) <
            4 ||
        cs.m < 1 || cs.n < 1 || cs.k < 1 || reps < 1) {
      std::fprintf(stderr, "fortran_gemm: bad case '%s' or reps\n", item.c_str());
      return 2;
    }
    std::string line;
    switch (cs.precision) {
      case 's':
        line = run<float>(cs, reps, label);
        break;
      case 'd':
        line = run<double>(cs, reps, label);
        break;
      case 'c':
        line = run<C>(cs, reps, label);
        break;
      case 'z':
        line = run<Z>(cs, reps, label);
        break;
      default:
        std::fprintf(stderr, "fortran_gemm: precision must be s, d, c or z\n");
        return 2;
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (line.find("\"check\": \"ok\"") == std::string::npos) status = 1;
  }
  return status;
}
