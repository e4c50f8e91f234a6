// The drop-in's cost on calls that stay on the CPU: loops of small level-3 calls (2^3 to 128^3 by
// default; gemm, and on request syrk, syr2k, symm, trmm and trsm) through libtandem_blas.so's
// entries, which this program links, against the same loops through OpenBLAS's own entries (found
// with dlsym in the library that defines openblas_get_config), alternating A B A B in one process,
// from the caller's ordinary memory. Each sample is one batch of calls sized to take a few
// milliseconds; the medians per call are compared. A control (OpenBLAS against itself) shows the
// measurement's own spread. Both sides' results are checked against each other first. Prints one
// JSON line per case, then a table.
//
//   small_calls [SIZES [SAMPLES [ROUTINES [real|complex]]]]  e.g. small_calls 2,8,32,64,128 21
//   gemm,syrk
//
// complex runs the same calls in c and z (in the columns of s and d), with complex values, and
// adds hemm, herk and her2k to "all". ROUTINES is a list of gemm, syrk, syr2k, symm, trmm, trsm
// (and for complex hemm, herk, her2k), or "all" (default: gemm). Every call is column-major with
// n x n operands: gemm NN, syrk, syr2k, herk and her2k lower NN, symm and hemm left lower, trmm
// and trsm left lower NN non-unit; alpha 1 and beta 0.5 where there is a beta. trmm and trsm time
// an identity A (the same flops to OpenBLAS, and B keeps its values over a loop of calls; any other
// triangle grows or shrinks B with every call) after a check on a random one.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/precision.hpp"
#include "blas3/dropin/blas_entries.hpp"
#include "openblas_own.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class T>
constexpr bool kComplex = tandem::detail::is_complex(tandem::detail::precision_of<T>());

// One side's entries: the level-3 routines of every precision, and a complex one's hemm, herk
// and her2k.
template <class T>
struct Api {
  tandem::detail::blas_entries::Level3<T> level3;
  std::conditional_t<kComplex<T>, tandem::detail::blas_entries::Hermitian<T>, int> hermitian{};
};

// A scalar as CBLAS takes it: by value for a real type, by address for a complex one.
template <class T>
auto by_cblas(const T& x) {
  if constexpr (kComplex<T>)
    return static_cast<const void*>(&x);
  else
    return x;
}

template <class T>
T random_value(std::uniform_real_distribution<double>& dist, std::mt19937& rng) {
  using R = tandem::detail::real_type_t<T>;
  if constexpr (kComplex<T>) {
    const double re = dist(rng);
    return T(static_cast<R>(re), static_cast<R>(dist(rng)));
  } else {
    return static_cast<T>(dist(rng));
  }
}

const std::vector<std::string> kRoutines = {"gemm", "syrk", "syr2k", "symm", "trmm", "trsm"};
const std::vector<std::string> kHermitian = {"hemm", "herk", "her2k"};

// `calls` calls of hemm, herk or her2k (`routine`) through a complex side's entries, as loop()
// makes them (herk's alpha 1 and beta 0.5 real, her2k's beta); false for any other routine.
template <class T>
bool hermitian_loop(const Api<T>& api, const std::string& routine, bool fortran, blasint nn,
                    long calls, const T* a, const T* b, T* c) {
  if constexpr (kComplex<T>) {
    using R = tandem::detail::real_type_t<T>;
    const auto& e = api.hermitian;
    const T alpha = T(1), beta = T(0.5f);
    const R ralpha = 1, rbeta = 0.5f;
    const auto col = CblasColMajor;
    if (routine == "hemm") {
      for (long i = 0; i < calls; ++i)
        fortran
            ? e.hemm("L", "L", &nn, &nn, &alpha, a, &nn, b, &nn, &beta, c, &nn)
            : e.cblas_hemm(col, CblasLeft, CblasLower, nn, nn, &alpha, a, nn, b, nn, &beta, c, nn);
    } else if (routine == "herk") {
      for (long i = 0; i < calls; ++i)
        fortran ? e.herk("L", "N", &nn, &nn, &ralpha, a, &nn, &rbeta, c, &nn)
                : e.cblas_herk(col, CblasLower, CblasNoTrans, nn, nn, ralpha, a, nn, rbeta, c, nn);
    } else if (routine == "her2k") {
      for (long i = 0; i < calls; ++i)
        fortran ? e.her2k("L", "N", &nn, &nn, &alpha, a, &nn, b, &nn, &rbeta, c, &nn)
                : e.cblas_her2k(col, CblasLower, CblasNoTrans, nn, nn, &alpha, a, nn, b, nn, rbeta,
                                c, nn);
    } else {
      return false;
    }
    return true;
  } else {
    return false;
  }
}

// `calls` calls of `routine` through one side's entries: C (or B, for trmm and trsm) is updated
// in place from A and B.
template <class T>
void loop(const Api<T>& api, const std::string& routine, bool fortran, int n, long calls,
          const T* a, const T* b, T* c) {
  const auto& e = api.level3;
  const T alpha = T(1), beta = T(0.5f);
  const auto ca = by_cblas(alpha), cb = by_cblas(beta);
  const blasint nn = n;
  const auto col = CblasColMajor;
  if (routine == "gemm") {
    for (long i = 0; i < calls; ++i)
      fortran
          ? e.gemm("N", "N", &nn, &nn, &nn, &alpha, a, &nn, b, &nn, &beta, c, &nn)
          : e.cblas_gemm(col, CblasNoTrans, CblasNoTrans, nn, nn, nn, ca, a, nn, b, nn, cb, c, nn);
  } else if (routine == "syrk") {
    for (long i = 0; i < calls; ++i)
      fortran ? e.syrk("L", "N", &nn, &nn, &alpha, a, &nn, &beta, c, &nn)
              : e.cblas_syrk(col, CblasLower, CblasNoTrans, nn, nn, ca, a, nn, cb, c, nn);
  } else if (routine == "syr2k") {
    for (long i = 0; i < calls; ++i)
      fortran ? e.syr2k("L", "N", &nn, &nn, &alpha, a, &nn, b, &nn, &beta, c, &nn)
              : e.cblas_syr2k(col, CblasLower, CblasNoTrans, nn, nn, ca, a, nn, b, nn, cb, c, nn);
  } else if (routine == "symm") {
    for (long i = 0; i < calls; ++i)
      fortran ? e.symm("L", "L", &nn, &nn, &alpha, a, &nn, b, &nn, &beta, c, &nn)
              : e.cblas_symm(col, CblasLeft, CblasLower, nn, nn, ca, a, nn, b, nn, cb, c, nn);
  } else if (routine == "trmm") {
    for (long i = 0; i < calls; ++i)
      fortran ? e.trmm("L", "L", "N", "N", &nn, &nn, &alpha, a, &nn, c, &nn)
              : e.cblas_trmm(col, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, nn, nn, ca, a,
                             nn, c, nn);
  } else if (routine == "trsm") {
    for (long i = 0; i < calls; ++i)
      fortran ? e.trsm("L", "L", "N", "N", &nn, &nn, &alpha, a, &nn, c, &nn)
              : e.cblas_trsm(col, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, nn, nn, ca, a,
                             nn, c, nn);
  } else if (!hermitian_loop(api, routine, fortran, nn, calls, a, b, c)) {
    std::fprintf(stderr,
                 "unknown routine %s (one of gemm, syrk, syr2k, symm, trmm, trsm; hemm, herk, "
                 "her2k for complex)\n",
                 routine.c_str());
    std::exit(2);
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
std::string measure(const std::string& routine, bool fortran, int n, int samples, double* ratio,
                    double* control) {
  std::mt19937 rng(n);
  std::uniform_real_distribution<double> dist(-1, 1);
  const size_t size = static_cast<size_t>(n) * n;
  Matrix<T> a(size), b(size), mine(size), reference(size), spare(size);
  for (size_t i = 0; i < size; ++i) {
    a[i] = random_value<T>(dist, rng);
    b[i] = random_value<T>(dist, rng);
    mine[i] = reference[i] = spare[i] = random_value<T>(dist, rng);
  }
  const bool triangle = routine == "trmm" || routine == "trsm";
  // A well-conditioned triangle for the check (a diagonal of 2 to 3 beside entries below 1 / n).
  if (triangle)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        a[i + static_cast<size_t>(j) * n] = i == j ? T(static_cast<float>(2.5 + 0.5 * dist(rng)))
                                                   : random_value<T>(dist, rng) / T(float(n));
  const auto find = [](const char* name) { return openblas_own<void*>(name); };
  Api<T> ours{tandem::detail::blas_entries::resolved<T>()},
      theirs{tandem::detail::blas_entries::found<T>(find)};
  if constexpr (kComplex<T>) {
    ours.hermitian = tandem::detail::blas_entries::resolved_hermitian<T>();
    theirs.hermitian = tandem::detail::blas_entries::found_hermitian<T>(find);
  }

  // One call each from the same C: the drop-in must give OpenBLAS's numbers.
  loop(ours, routine, fortran, n, 1, a.data(), b.data(), mine.data());
  loop(theirs, routine, fortran, n, 1, a.data(), b.data(), reference.data());
  double worst = 0;
  for (size_t i = 0; i < size; ++i)
    worst = std::max(worst, static_cast<double>(std::abs(mine[i] - reference[i])));
  if (triangle)
    for (size_t i = 0; i < size; ++i) a[i] = T(i % (static_cast<size_t>(n) + 1) == 0 ? 1 : 0);

  // A batch takes about 5 ms through OpenBLAS.
  long calls = 1;
  for (;;) {
    const auto t0 = Clock::now();
    loop(theirs, routine, fortran, n, calls, a.data(), b.data(), reference.data());
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
      loop(side == 0 ? ours : theirs, routine, fortran, n, calls, a.data(), b.data(),
           cs[(side + s) % 3]);
      t[side].push_back(std::chrono::duration<double>(Clock::now() - t0).count() /
                        static_cast<double>(calls));
    }
  }
  const double us_ours = median(t[0]) * 1e6, us_theirs = median(t[1]) * 1e6,
               us_control = median(t[2]) * 1e6;
  *ratio = us_ours / us_theirs;
  *control = us_control / us_theirs;
  std::ostringstream line;
  line << "{\"routine\": \""
       << tandem::detail::routine_name(tandem::detail::precision_of<T>(), routine).c_str()
       << "\", \"entry\": \"" << (fortran ? "fortran" : "cblas") << "\", \"n\": " << n
       << ", \"calls\": " << calls << ", \"samples\": " << samples
       << ", \"openblas_us\": " << us_theirs << ", \"tandem_us\": " << us_ours
       << ", \"ratio\": " << *ratio << ", \"control_ratio\": " << *control
       << ", \"max_abs_diff\": " << worst << "}";
  return line.str();
}

std::vector<std::string> split(const char* text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  return items;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (const std::string& s : split(argc > 1 ? argv[1] : "2,8,32,64,128"))
    sizes.push_back(std::atoi(s.c_str()));
  const int samples = argc > 2 ? std::atoi(argv[2]) : 21;
  const std::string which = argc > 3 ? argv[3] : "gemm";
  const bool complex = argc > 4 && std::string(argv[4]) == "complex";
  std::vector<std::string> routines = which == "all" ? kRoutines : split(which.c_str());
  if (which == "all" && complex)
    routines.insert(routines.end(), kHermitian.begin(), kHermitian.end());
  std::vector<std::string> table;
  double worst = 0, worst_control = 0;
  for (const std::string& routine : routines) {
    for (int n : sizes) {
      for (bool fortran : {false, true}) {
        double rs = 0, rd = 0, cs = 0, cd = 0;
        if (complex) {
          using C = std::complex<float>;
          using Z = std::complex<double>;
          std::printf("%s\n", measure<C>(routine, fortran, n, samples, &rs, &cs).c_str());
          std::printf("%s\n", measure<Z>(routine, fortran, n, samples, &rd, &cd).c_str());
        } else {
          std::printf("%s\n", measure<float>(routine, fortran, n, samples, &rs, &cs).c_str());
          std::printf("%s\n", measure<double>(routine, fortran, n, samples, &rd, &cd).c_str());
        }
        std::fflush(stdout);
        char row[200];
        std::snprintf(row, sizeof row, "| %s | %d^3 | %s | %.3f | %.3f | %.3f / %.3f |",
                      routine.c_str(), n, fortran ? "Fortran" : "CBLAS", rs, rd, cs, cd);
        table.emplace_back(row);
        worst = std::max({worst, rs, rd});
        worst_control = std::max({worst_control, std::abs(cs - 1), std::abs(cd - 1)});
      }
    }
  }
  std::printf(
      complex
          ? "\n| routine | size | entry | c: drop-in / OpenBLAS | z | control c / z |\n"
          : "\n| routine | size | entry | single: drop-in / OpenBLAS | double | control s / d |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  for (const auto& row : table) std::printf("%s\n", row.c_str());
  std::printf("\nworst ratio: %.3f (identical loops measured up to %.3f apart)\n", worst,
              worst_control);
  return 0;
}
