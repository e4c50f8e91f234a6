// The drop-in's cost on calls that stay on the CPU: loops of small sgemm and dgemm calls (2^3 to
// 128^3 by default) through libtandem_blas.so's entries, which this program links, against the
// same loops through OpenBLAS's own entries (found with dlsym in the library that defines
// openblas_get_config), alternating A B A B in one process, from the caller's ordinary memory.
// Each sample is one batch of calls sized to take a few milliseconds; the medians per call are
// compared. A control (OpenBLAS against itself) shows the measurement's own spread. Both sides'
// results are checked against each other first. Prints one JSON line per case, then a table.
//
//   small_calls [SIZES [SAMPLES]]     e.g. small_calls 2,8,32,64,128 21
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "openblas_own.hpp"

extern "C" {
void sgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*, const float*,
            const float*, const blasint*, const float*, const blasint*, const float*, float*,
            const blasint*, std::size_t, std::size_t);
void dgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*, const double*,
            const double*, const blasint*, const double*, const blasint*, const double*, double*,
            const blasint*, std::size_t, std::size_t);
}

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One precision's two entries (CBLAS and Fortran), through tandem or through OpenBLAS.
template <class T>
struct Entries {
  using Cblas = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         T, const T*, blasint, const T*, blasint, T, T*, blasint);
  using Fortran = void (*)(const char*, const char*, const blasint*, const blasint*, const blasint*,
                           const T*, const T*, const blasint*, const T*, const blasint*, const T*,
                           T*, const blasint*, std::size_t, std::size_t);
  Cblas cblas;
  Fortran fortran;
};

Entries<float> tandem_entries(float) { return {&cblas_sgemm, &sgemm_}; }
Entries<double> tandem_entries(double) { return {&cblas_dgemm, &dgemm_}; }
Entries<float> openblas_entries(float) {
  return {openblas_own<Entries<float>::Cblas>("cblas_sgemm"),
          openblas_own<Entries<float>::Fortran>("sgemm_")};
}
Entries<double> openblas_entries(double) {
  return {openblas_own<Entries<double>::Cblas>("cblas_dgemm"),
          openblas_own<Entries<double>::Fortran>("dgemm_")};
}

// C = A B + 0.5 C (n x n, column-major), `calls` times through one entry.
template <class T>
void loop(const Entries<T>& e, bool fortran, int n, long calls, const T* a, const T* b, T* c) {
  const T alpha = 1, beta = T(0.5);
  const blasint nn = n;
  for (long i = 0; i < calls; ++i) {
    if (fortran)
      e.fortran("N", "N", &nn, &nn, &nn, &alpha, a, &nn, b, &nn, &beta, c, &nn, 1, 1);
    else
      e.cblas(CblasColMajor, CblasNoTrans, CblasNoTrans, nn, nn, nn, alpha, a, nn, b, nn, beta, c,
              nn);
  }
}

// n x n values at the start of a cache line, so that neither side's C straddles lines where the
// other's does not (at 2^3 that alone moved a side's time by 1.8x).
template <class T>
class Matrix {
 public:
  explicit Matrix(size_t size) : store_(size + 64 / sizeof(T)) {
    auto at = reinterpret_cast<std::uintptr_t>(store_.data());
    offset_ = (64 - at % 64) % 64 / sizeof(T);
  }
  T* data() { return store_.data() + offset_; }
  T& operator[](size_t i) { return data()[i]; }

 private:
  std::vector<T> store_;
  size_t offset_ = 0;
};

template <class T>
std::string measure(bool fortran, int n, int samples, double* ratio, double* control) {
  std::mt19937 rng(n);
  std::uniform_real_distribution<double> dist(-1, 1);
  const size_t size = static_cast<size_t>(n) * n;
  Matrix<T> a(size), b(size), mine(size), reference(size), spare(size);
  for (size_t i = 0; i < size; ++i) {
    a[i] = static_cast<T>(dist(rng));
    b[i] = static_cast<T>(dist(rng));
    mine[i] = reference[i] = spare[i] = static_cast<T>(dist(rng));
  }
  const Entries<T> ours = tandem_entries(T{}), theirs = openblas_entries(T{});

  // One call each from the same C: the drop-in must give OpenBLAS's numbers.
  loop(ours, fortran, n, 1, a.data(), b.data(), mine.data());
  loop(theirs, fortran, n, 1, a.data(), b.data(), reference.data());
  double worst = 0;
  for (size_t i = 0; i < size; ++i)
    worst = std::max(worst, std::abs(static_cast<double>(mine[i]) - reference[i]));

  // A batch takes about 5 ms through OpenBLAS.
  long calls = 1;
  for (;;) {
    const auto t0 = Clock::now();
    loop(theirs, fortran, n, calls, a.data(), b.data(), reference.data());
    if (std::chrono::duration<double>(Clock::now() - t0).count() > 5e-3) break;
    calls *= 2;
  }
  // Three sides in turn, their order rotating: tandem, OpenBLAS, and OpenBLAS again (the control,
  // whose ratio to the first OpenBLAS side shows how far apart two identical loops measure). The
  // C buffers rotate too, so no side keeps a placement that suits it.
  std::vector<double> t[3];
  T* cs[3] = {mine.data(), reference.data(), spare.data()};
  for (int s = 0; s < samples; ++s) {
    for (int i = 0; i < 3; ++i) {
      const int side = (s + i) % 3;
      const auto t0 = Clock::now();
      loop(side == 0 ? ours : theirs, fortran, n, calls, a.data(), b.data(), cs[(side + s) % 3]);
      t[side].push_back(std::chrono::duration<double>(Clock::now() - t0).count() /
                        static_cast<double>(calls));
    }
  }
  const double us_ours = median(t[0]) * 1e6, us_theirs = median(t[1]) * 1e6,
               us_control = median(t[2]) * 1e6;
  *ratio = us_ours / us_theirs;
  *control = us_control / us_theirs;
  std::ostringstream line;
  line << "{\"routine\": \"" << (sizeof(T) == 4 ? "s" : "d") << "gemm\", \"entry\": \""
       << (fortran ? "fortran" : "cblas") << "\", \"n\": " << n << ", \"calls\": " << calls
       << ", \"samples\": " << samples << ", \"openblas_us\": " << us_theirs
       << ", \"tandem_us\": " << us_ours << ", \"ratio\": " << *ratio
       << ", \"control_ratio\": " << *control << ", \"max_abs_diff\": " << worst << "}";
  return line.str();
}

std::vector<int> parse(const char* text) {
  std::vector<int> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) sizes.push_back(std::atoi(item.c_str()));
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int> sizes = parse(argc > 1 ? argv[1] : "2,8,32,64,128");
  const int samples = argc > 2 ? std::atoi(argv[2]) : 21;
  std::vector<std::string> table;
  double worst = 0, worst_control = 0;
  for (int n : sizes) {
    for (bool fortran : {false, true}) {
      double rs = 0, rd = 0, cs = 0, cd = 0;
      std::printf("%s\n", measure<float>(fortran, n, samples, &rs, &cs).c_str());
      std::printf("%s\n", measure<double>(fortran, n, samples, &rd, &cd).c_str());
      std::fflush(stdout);
      char row[160];
      std::snprintf(row, sizeof row, "| %d^3 | %s | %.3f | %.3f | %.3f / %.3f |", n,
                    fortran ? "Fortran" : "CBLAS", rs, rd, cs, cd);
      table.emplace_back(row);
      worst = std::max({worst, rs, rd});
      worst_control = std::max({worst_control, std::abs(cs - 1), std::abs(cd - 1)});
    }
  }
  std::printf(
      "\n| size | entry | sgemm drop-in / OpenBLAS | dgemm drop-in / OpenBLAS | control s / d |\n");
  std::printf("| --- | --- | --- | --- | --- |\n");
  for (const auto& row : table) std::printf("%s\n", row.c_str());
  std::printf("\nworst ratio: %.3f (identical loops measured up to %.3f apart)\n", worst,
              worst_control);
  return 0;
}
