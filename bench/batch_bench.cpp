// Batches on the CPU (issue 43): a strided batch of `count` n^3 products (row-major, no transposes,
// operands packed one after another in the caller's ordinary memory) three ways, in turn, the
// order rotating: tandem::gemm_batch_strided (auto: each problem whole on one core), a loop of
// OpenBLAS's own cblas_?gemm calls (the program's thread count, as a program would call it), and a
// loop of tandem::gemm single calls (auto). Medians of REPS after one warm-up round; every side's
// C compared with OpenBLAS's (a difference past rounding fails the run). Prints one JSON line per
// case, then a table.
//
//   batch_bench CASES REPS     e.g. batch_bench s:64:20000,d:256:2000 7
//
// CASES: PRECISION:N:COUNT, comma-separated (PRECISION s or d).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"

namespace {

using Clock = std::chrono::steady_clock;
bool g_mismatch = false;  // a side's C differed from OpenBLAS's

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void openblas_gemm(int64_t n, float alpha, const float* a, const float* b, float beta, float* c) {
  const auto x = static_cast<blasint>(n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x, x, x, alpha, a, x, b, x, beta, c, x);
}
void openblas_gemm(int64_t n, double alpha, const double* a, const double* b, double beta,
                   double* c) {
  const auto x = static_cast<blasint>(n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x, x, x, alpha, a, x, b, x, beta, c, x);
}

template <class T>
std::string run_case(int64_t n, int64_t count, int reps, std::string& row) {
  const int64_t size = n * n;
  std::vector<T> a(static_cast<size_t>(size * count)), b(a.size());
  std::mt19937 rng(static_cast<unsigned>(n * 7 + count));
  std::uniform_real_distribution<double> dist(-1, 1);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<T>(dist(rng)), b[i] = static_cast<T>(dist(rng));
  std::vector<std::vector<T>> c(3, std::vector<T>(a.size(), T(0)));
  const tandem::Layout row_major = tandem::Layout::RowMajor;
  const tandem::Op no = tandem::Op::NoTrans;
  tandem::BatchReport report;
  const std::function<void(T*)> sides[3] = {
      [&](T* out) {
        tandem::gemm_batch_strided<T>(row_major, no, no, n, n, n, T(1), a.data(), n, size, b.data(),
                                      n, size, T(0), out, n, size, count, {}, &report);
      },
      [&](T* out) {
        for (int64_t i = 0; i < count; ++i)
          openblas_gemm(n, T(1), a.data() + i * size, b.data() + i * size, T(0), out + i * size);
      },
      [&](T* out) {
        for (int64_t i = 0; i < count; ++i)
          tandem::gemm<T>(row_major, no, no, n, n, n, T(1), a.data() + i * size, n,
                          b.data() + i * size, n, T(0), out + i * size, n);
      }};
  std::vector<double> t[3];
  for (int r = -1; r < reps; ++r)
    for (int i = 0; i < 3; ++i) {
      const int side = (r + 1 + i) % 3;
      const auto t0 = Clock::now();
      sides[side](c[side].data());
      if (r >= 0) t[side].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
  double worst = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::abs(static_cast<double>(c[1][i])));
    for (int s : {0, 2}) worst = std::max(worst, std::abs(static_cast<double>(c[s][i] - c[1][i])));
  }
  const double gflop = 2.0 * static_cast<double>(n * n * n) * static_cast<double>(count) * 1e-9;
  const double batch = median(t[0]), loop = median(t[1]), singles = median(t[2]);
  const char p = sizeof(T) == 4 ? 's' : 'd';
  std::ostringstream json;
  json << "{\"precision\": \"" << p << "\", \"n\": " << n << ", \"count\": " << count
       << ", \"reps\": " << reps << ", \"batch_s\": " << batch << ", \"openblas_loop_s\": " << loop
       << ", \"tandem_loop_s\": " << singles << ", \"batch_threads\": " << report.cpu_threads
       << ", \"batch_strategy\": \"" << tandem::to_string(report.strategy)
       << "\", \"max_abs_diff\": " << worst << ", \"max_abs\": " << scale << "}";
  char line[256];
  std::snprintf(line, sizeof line, "| %c | %lld³ × %lld | %.0f | %.0f | %.0f | %.2f | %.2f |", p,
                static_cast<long long>(n), static_cast<long long>(count), gflop / batch,
                gflop / loop, gflop / singles, loop / batch, singles / batch);
  row = line;
  // A side that differs from OpenBLAS's loop by more than rounding fails the run (main's status).
  const double tolerance = (sizeof(T) == 4 ? 1e-5 : 1e-13) * static_cast<double>(n) * scale;
  if (!(worst <= tolerance)) {
    std::fprintf(stderr, "MISMATCH %c n %lld count %lld: max |difference| %g (tolerance %g)\n", p,
                 static_cast<long long>(n), static_cast<long long>(count), worst, tolerance);
    g_mismatch = true;
  }
  return json.str();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cases = argc > 1 ? argv[1] : "s:64:2000,d:64:2000";
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  std::vector<std::string> rows;
  std::stringstream in(cases);
  std::string item;
  while (std::getline(in, item, ',')) {
    char p = 0;
    long long n = 0, count = 0;
    if (std::sscanf(item.c_str(), "%c:%lld:%lld", &p, &n, &count) != 3 || (p != 's' && p != 'd')) {
      std::fprintf(stderr, "bad case %s (PRECISION:N:COUNT, PRECISION s or d)\n", item.c_str());
      return 2;
    }
    std::string row;
    std::printf("%s\n", p == 's' ? run_case<float>(n, count, reps, row).c_str()
                                 : run_case<double>(n, count, reps, row).c_str());
    std::fflush(stdout);
    rows.push_back(row);
  }
  std::printf(
      "\n| precision | batch | tandem batch GFLOPS | OpenBLAS loop | tandem loop | batch / "
      "OpenBLAS loop | batch / tandem loop |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (const std::string& r : rows) std::printf("%s\n", r.c_str());
  return g_mismatch ? 1 : 0;
}
