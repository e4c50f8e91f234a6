// Calls for tests/faults_calls_test.sh, which runs this program with OpenCL's waits and finishes
// failing (tests/cl_faults.c): GEMMs of both precisions through the C API, the C++ API and the
// drop-in BLAS, in turn, with the strategy the environment sets, each checked against a plain
// loop. What C must hold after each (tandem.hpp, tandem.h):
//  - the call succeeded (the drop-in always does): C right;
//  - it reported an error: C exactly as it was, or, for OutputLost alone (a device that could not
//    be stopped after writing C in place with beta != 0), anything.
// Prints one line per wrong C and a summary; exit 0 when every C is as documented.
//
//   faults_calls [CALLS]
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tandem/tandem.h"
#include "tandem/tandem.hpp"

// The drop-in's Fortran entry, as a C caller declares it.
extern "C" void dgemm_(const char*, const char*, const blasint*, const blasint*, const blasint*,
                       const double*, const double*, const blasint*, const double*, const blasint*,
                       const double*, double*, const blasint*);

namespace {

enum class Via { CApi, Cpp, DropIn };
const char* name(Via via) {
  return via == Via::CApi ? "C API" : via == Via::Cpp ? "C++" : "drop-in";
}

// One call's outcome.
enum class Outcome { Right, Untouched, Lost, Wrong };

struct Tally {
  int calls = 0, right = 0, errors = 0, lost = 0, wrong = 0;
};

// C = alpha A B + beta C, row-major, in double, from the operands as given.
template <class T>
std::vector<double> reference(int m, int n, int k, double alpha, const std::vector<T>& a,
                              const std::vector<T>& b, double beta, const std::vector<T>& c) {
  std::vector<double> out(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += double(a[size_t(i) * k + p]) * double(b[size_t(p) * n + j]);
      out[size_t(i) * n + j] =
          alpha * sum + (beta == 0 ? 0.0 : beta * double(c[size_t(i) * n + j]));
    }
  return out;
}

template <class T>
bool right(const std::vector<T>& c, const std::vector<double>& want, int k) {
  const double eps = std::is_same_v<T, float> ? 1e-6 : 1e-15;
  for (size_t i = 0; i < c.size(); ++i) {
    const double tol = 8.0 * (k + 4) * eps * (1.0 + std::fabs(want[i]));
    if (!(std::fabs(double(c[i]) - want[i]) <= tol)) return false;
  }
  return true;
}

// One row-major call of m x n x k through `via`; the drop-in is called column-major, as C^T =
// B^T A^T, on the same arrays.
template <class T>
Outcome one_call(Via via, int m, int n, int k, double beta, std::mt19937& rng, std::string* why) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> a(size_t(m) * k), b(size_t(k) * n), c(size_t(m) * n);
  for (T& x : a) x = T(u(rng));
  for (T& x : b) x = T(u(rng));
  for (T& x : c) x = T(u(rng));
  const std::vector<T> before = c;
  const T alpha = T(0.75), tb = T(beta);
  const auto want = reference(m, n, k, alpha, a, b, beta, c);
  bool error = false, lost = false;
  if (via == Via::CApi) {
    int rc = 0;
    if constexpr (std::is_same_v<T, float>)
      rc = tandem_sgemm(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, m, n, k, alpha,
                        a.data(), k, b.data(), n, tb, c.data(), n);
    else
      rc = tandem_dgemm(TANDEM_ROW_MAJOR, TANDEM_NO_TRANS, TANDEM_NO_TRANS, m, n, k, alpha,
                        a.data(), k, b.data(), n, tb, c.data(), n);
    error = rc != 0;
    *why = tandem_last_error();
    lost = error && why->find("could not be stopped") != std::string::npos;
  } else if (via == Via::Cpp) {
    try {
      tandem::gemm<T>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, m, n, k,
                      alpha, a.data(), k, b.data(), n, tb, c.data(), n);
    } catch (const tandem::Error& e) {
      error = true;
      lost = e.kind() == tandem::Error::Kind::OutputLost;
      *why = e.what();
    }
  } else if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, m, k, alpha, b.data(), n, a.data(), k,
                tb, c.data(), n);
  } else {
    const char no = 'N';
    dgemm_(&no, &no, &n, &m, &k, &alpha, b.data(), &n, a.data(), &k, &tb, c.data(), &n);
  }
  if (!error) return right(c, want, k) ? Outcome::Right : Outcome::Wrong;
  if (lost) return Outcome::Lost;
  return c == before ? Outcome::Untouched : Outcome::Wrong;
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 36;
  std::mt19937 rng(2026);
  const double betas[] = {0.0, 1.0, -0.5, 2.0};
  Tally t;
  for (int i = 0; i < calls; ++i) {
    const Via via = static_cast<Via>(i % 3);
    const bool dbl = (i / 3) % 2 == 1;
    std::uniform_int_distribution<int> size(33, 300);
    const int m = size(rng), n = size(rng), k = size(rng);
    const double beta = betas[(i / 6) % 4];
    std::string why;
    const Outcome o = dbl ? one_call<double>(via, m, n, k, beta, rng, &why)
                          : one_call<float>(via, m, n, k, beta, rng, &why);
    ++t.calls;
    t.right += o == Outcome::Right;
    t.errors += o == Outcome::Untouched;
    t.lost += o == Outcome::Lost;
    if (o == Outcome::Wrong) {
      ++t.wrong;
      std::printf("WRONG C: call %d, %s, %cgemm %d x %d x %d, beta %g%s%s\n", i, name(via),
                  dbl ? 'd' : 's', m, n, k, beta,
                  why.empty() ? "" : ", after the error: ", why.c_str());
    }
  }
  std::printf("%d calls: %d right, %d errors with C untouched, %d output lost, %d wrong\n", t.calls,
              t.right, t.errors, t.lost, t.wrong);
  return t.wrong == 0 ? 0 : 1;
}
