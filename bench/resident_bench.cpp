// The repeated-operand case of issue 44: C_i = A B_i for i = 1..COUNT, A (M x K)
// the same each time and B_i (K x N) new, three ways in turn (the order rotates by round):
//   calls     COUNT tandem::gemm calls;
//   plan      COUNT runs of one tandem::Plan, A from the host each run;
//   resident  COUNT runs of the plan with A resident (Plan::resident_a, made once before).
// Medians of REPS rounds after one warm-up round, each way's COUNT products timed together, from
// the caller's ordinary memory or from tandem_malloc memory (A, B_i and C_i alike). Every C_i
// of the plan's and the resident's ways is compared with the calls' (a difference past
// rounding fails the run), and 64 elements of each way's last C are checked against a
// double-precision dot product. Prints the planned split and each operand's path, the times,
// GFLOPS and the ratios.
//
//   resident_bench PRECISION M N K COUNT REPS [STRATEGY] [MEMORY] [LAYOUT]
//     e.g. resident_bench s 8192 1024 8192 8 7 auto ordinary col
//
// PRECISION s or d; STRATEGY auto (the default), cpu, gpu or hybrid; MEMORY ordinary (the
// default) or tandem_malloc; LAYOUT col (column-major, the default: A is op(B) of tandem's
// row-major view, needed whole by every device) or row (A's rows divided among the sides).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tandem/plan.hpp"
#include "tandem/tandem.hpp"

namespace {

using tandem::Layout;
using tandem::Op;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

const char* path(tandem::Report::Buffer b) { return tandem::to_string(b); }

template <class T, class Alloc>
int run(int64_t m, int64_t n, int64_t k, int count, int reps, const tandem::Options& o,
        const char* memory, Layout layout) {
  const bool by_columns = layout == Layout::ColMajor;
  const int64_t lda = by_columns ? m : k, ldb = by_columns ? k : n, ldc = by_columns ? m : n;
  // Element (i, j) of a matrix with leading dimension ld.
  const auto at = [by_columns](int64_t i, int64_t j, int64_t ld) {
    return by_columns ? i + j * ld : i * ld + j;
  };
  using Matrix = std::vector<T, Alloc>;
  Matrix a(static_cast<size_t>(m * k));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<T>(static_cast<double>((i * 7 + 3) % 19) / 19.0 - 0.5);
  std::vector<Matrix> b(count), c[3];
  for (int i = 0; i < count; ++i) {
    b[i].resize(static_cast<size_t>(k * n));
    for (size_t j = 0; j < b[i].size(); ++j)
      b[i][j] = static_cast<T>(static_cast<double>((j * 5 + 1 + 3 * i) % 23) / 23.0 - 0.5);
  }
  for (auto& way : c) way.assign(count, Matrix(static_cast<size_t>(m * n)));

  const auto clock = [] { return std::chrono::steady_clock::now(); };
  const auto since = [&](auto t0) { return std::chrono::duration<double>(clock() - t0).count(); };
  auto t0 = clock();
  const tandem::Plan<T> plan(layout, Op::NoTrans, Op::NoTrans, m, n, k, lda, ldb, ldc, o);
  const double planning = since(t0);
  t0 = clock();
  const tandem::Resident<T> resident = plan.resident_a(a.data());
  const double keeping = since(t0);

  const char* names[3] = {"calls", "plan", "resident"};
  std::vector<double> seconds[3];
  tandem::Report report[3];
  for (int round = 0; round <= reps; ++round)
    for (int turn = 0; turn < 3; ++turn) {
      const int way = (turn + round) % 3;
      t0 = clock();
      for (int i = 0; i < count; ++i) {
        tandem::Report* r = i + 1 == count ? &report[way] : nullptr;
        if (way == 0)
          tandem::gemm<T>(layout, Op::NoTrans, Op::NoTrans, m, n, k, T(1), a.data(), lda,
                          b[i].data(), ldb, T(0), c[0][i].data(), ldc, o, r);
        else if (way == 1)
          plan.run(T(1), a.data(), b[i].data(), T(0), c[1][i].data(), r);
        else
          plan.run(T(1), resident, b[i].data(), T(0), c[2][i].data(), r);
      }
      if (round > 0) seconds[way].push_back(since(t0));
    }

  // Each way against the calls, and the last product's samples against a double dot product.
  int failed = 0;
  const double eps = sizeof(T) == 4 ? 6e-8 : 1.2e-16;            // unit roundoff
  const double tol = 2.0 * static_cast<double>(k) * eps * 0.25;  // |a|, |b| <= 0.5
  for (int way = 1; way < 3; ++way)
    for (int i = 0; i < count; ++i) {
      double worst = 0;
      for (size_t j = 0; j < c[0][i].size(); ++j)
        worst = std::max(worst, std::abs(static_cast<double>(c[way][i][j] - c[0][i][j])));
      if (!(worst <= tol)) {
        std::printf("%s: C_%d differs from the calls' by %g\n", names[way], i + 1, worst);
        ++failed;
      }
    }
  for (int s = 0; s < 64; ++s) {
    const int64_t row = (s * 7919) % m, col = (s * 104729) % n;
    double want = 0, bound = 0;
    for (int64_t p = 0; p < k; ++p) {
      const double x = static_cast<double>(a[at(row, p, lda)]) *
                       static_cast<double>(b[count - 1][at(p, col, ldb)]);
      want += x;
      bound += std::abs(x);
    }
    for (int way = 0; way < 3; ++way) {
      const double got = static_cast<double>(c[way][count - 1][at(row, col, ldc)]);
      if (!(std::abs(got - want) <= 2.0 * static_cast<double>(k) * eps * bound + 1e-30)) {
        std::printf("%s: C_%d(%lld,%lld) = %.17g, want %.17g\n", names[way], count,
                    static_cast<long long>(row), static_cast<long long>(col), got, want);
        ++failed;
      }
    }
  }

  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * count;
  std::printf(
      "%c C_i = A B_i, i = 1..%d, %s M=%lld N=%lld K=%lld, from %s memory; "
      "plan made in %.3g s, A kept in %.3g s (%lld bytes on the devices)\n",
      sizeof(T) == 4 ? 's' : 'd', count, by_columns ? "column-major" : "row-major",
      static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), memory,
      planning, keeping, static_cast<long long>(resident.device_bytes()));
  double med[3];
  for (int way = 0; way < 3; ++way) {
    med[way] = median(seconds[way]);
    const tandem::Report& r = report[way];
    std::printf("  %-8s %9.4f s  %9.1f GFLOPS  (%s; rows gpu %lld cpu %lld", names[way], med[way],
                flops / med[way] / 1e9, tandem::to_string(r.strategy),
                static_cast<long long>(r.gpu_rows), static_cast<long long>(r.cpu_rows));
    for (const tandem::Report::Device& d : r.devices)
      std::printf("; %s A %s B %s C %s", d.name.c_str(), path(d.a), path(d.b), path(d.c));
    std::printf(")\n");
  }
  std::printf("  calls / resident %.3f, plan / resident %.3f, calls / plan %.3f%s\n",
              med[0] / med[2], med[1] / med[2], med[0] / med[1],
              failed ? "  (RESULTS DIFFER)" : "  (every result checked)");
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr,
                 "usage: resident_bench s|d M N K COUNT REPS [auto|cpu|gpu|hybrid] "
                 "[ordinary|tandem_malloc] [col|row]\n");
    return 2;
  }
  const int64_t m = std::atoll(argv[2]), n = std::atoll(argv[3]), k = std::atoll(argv[4]);
  const int count = std::max(1, std::atoi(argv[5])), reps = std::max(1, std::atoi(argv[6]));
  tandem::Options o;
  const std::string strategy = argc > 7 ? argv[7] : "auto";
  o.strategy = strategy == "cpu"      ? tandem::Strategy::Cpu
               : strategy == "gpu"    ? tandem::Strategy::Gpu
               : strategy == "hybrid" ? tandem::Strategy::Hybrid
                                      : tandem::Strategy::Auto;
  const bool pinned = argc > 8 && std::string(argv[8]) == "tandem_malloc";
  const Layout layout =
      argc > 9 && std::string(argv[9]) == "row" ? Layout::RowMajor : Layout::ColMajor;
  const bool d = argv[1][0] == 'd';
  const char* memory = pinned ? "tandem_malloc" : "ordinary";
  if (pinned)
    return d ? run<double, tandem::Allocator<double>>(m, n, k, count, reps, o, memory, layout)
             : run<float, tandem::Allocator<float>>(m, n, k, count, reps, o, memory, layout);
  return d ? run<double, std::allocator<double>>(m, n, k, count, reps, o, memory, layout)
           : run<float, std::allocator<float>>(m, n, k, count, reps, o, memory, layout);
}
