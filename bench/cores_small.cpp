// The cores' batch of small products two ways (issue 43): each product as a single-threaded CPU
// BLAS call, and each on the cores' small kernel (src/cpu/small_kernel.cpp), the products dealt
// over the same threads by the same code (detail::cpu_batch, which the public batch API runs for
// the cores' side, with the small edge 0 and then the kernel's largest). What it prints is what
// database/defaults.json's cores_small edges are set from.
//
//   cores_small PRECISIONS SIZES THREADS REPS     e.g. cores_small sdcz 8,16,32,64 1,4,16 7
//
// Each cell: a strided batch of n^3 products (row-major, no transposes, operands one after
// another), as many as make 2*10^8 flops a thread (at least four a thread, at most 20,000), both
// ways in turn in each round, medians of REPS after one warm-up round. The small kernel's C is
// compared with the BLAS calls' (a difference past rounding fails the run). Prints one JSON line a
// cell, then a table of the two rates and their ratio.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/problem.hpp"
#include "batch_element.hpp"
#include "cpu/batch.hpp"
#include "cpu/small_kernel.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<int64_t> numbers(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoll(item));
  return out;
}

struct Cell {
  char precision;
  int64_t size, threads, count;
  double blas_gflops, small_gflops, max_difference;
};

template <class T>
Cell run_cell(int64_t n, int threads, int reps) {
  using E = Element<T>;
  const double flops = E::flops * static_cast<double>(n * n * n);
  const auto count =
      std::clamp<int64_t>(static_cast<int64_t>(2e8 * threads / flops), int64_t{4} * threads, 20000);
  const auto each = static_cast<size_t>(n * n);
  std::vector<T> a(each * static_cast<size_t>(count)), b(a.size()), c_blas(a.size()),
      c_small(a.size());
  std::mt19937 rng(static_cast<unsigned>(n * 31 + threads));
  std::uniform_real_distribution<double> dist(-1, 1);
  for (T& x : a) x = E::random(dist, rng);
  for (T& x : b) x = E::random(dist, rng);
  auto problems_for = [&](std::vector<T>& c) {
    std::vector<tandem::detail::Problem<T>> problems(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      auto& p = problems[static_cast<size_t>(i)];
      p.m = p.n = p.k = n;
      p.alpha = T(1);
      p.beta = T(0);
      p.a = a.data() + static_cast<size_t>(i) * each;
      p.b = b.data() + static_cast<size_t>(i) * each;
      p.c = c.data() + static_cast<size_t>(i) * each;
      p.lda = p.ldb = p.ldc = n;
    }
    return problems;
  };
  const auto blas = problems_for(c_blas), small = problems_for(c_small);
  std::vector<double> t_blas, t_small;
  for (int r = 0; r <= reps; ++r) {
    auto t0 = Clock::now();
    tandem::detail::cpu_batch(blas, threads, 0);
    const double s_blas = std::chrono::duration<double>(Clock::now() - t0).count();
    t0 = Clock::now();
    tandem::detail::cpu_batch(small, threads, tandem::detail::kSmallKernelMax);
    const double s_small = std::chrono::duration<double>(Clock::now() - t0).count();
    if (r == 0) continue;  // the warm-up
    t_blas.push_back(s_blas);
    t_small.push_back(s_small);
  }
  double worst = 0;
  for (size_t i = 0; i < c_blas.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::abs(c_blas[i] - c_small[i])) /
                                std::max(1.0, static_cast<double>(std::abs(c_blas[i]))));
  const double work = flops * static_cast<double>(count) / 1e9;
  return {E::letter, n, threads, count, work / median(t_blas), work / median(t_small), worst};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: cores_small PRECISIONS SIZES THREADS REPS  (e.g. sdcz 8,16 1,16 7)\n");
    return 2;
  }
  const std::string precisions = argv[1];
  const auto sizes = numbers(argv[2]), threads = numbers(argv[3]);
  const int reps = std::max(1, std::atoi(argv[4]));
  std::vector<Cell> cells;
  bool wrong = false;
  for (char p : precisions)
    for (int64_t n : sizes) {
      if (n < 1 || n > tandem::detail::kSmallKernelMax) {
        std::fprintf(stderr, "size %lld lies outside 1-%lld\n", static_cast<long long>(n),
                     static_cast<long long>(tandem::detail::kSmallKernelMax));
        return 2;
      }
      for (int64_t t : threads) {
        const int th = static_cast<int>(t);
        Cell cell = p == 's'   ? run_cell<float>(n, th, reps)
                    : p == 'd' ? run_cell<double>(n, th, reps)
                    : p == 'c' ? run_cell<std::complex<float>>(n, th, reps)
                               : run_cell<std::complex<double>>(n, th, reps);
        // Rounding: n sums of products of parts in [-1, 1], each in the type's precision.
        const double eps = (p == 's' || p == 'c') ? 1.2e-7 : 2.3e-16;
        const bool ok = cell.max_difference <= 16 * eps * static_cast<double>(n);
        wrong = wrong || !ok;
        std::printf(
            "{\"precision\": \"%c\", \"size\": %lld, \"threads\": %lld, \"count\": %lld, "
            "\"blas_gflops\": %.2f, \"small_gflops\": %.2f, \"small_over_blas\": %.3f, "
            "\"max_difference\": %.3g, \"checked\": %s}\n",
            cell.precision, static_cast<long long>(cell.size), static_cast<long long>(cell.threads),
            static_cast<long long>(cell.count), cell.blas_gflops, cell.small_gflops,
            cell.small_gflops / cell.blas_gflops, cell.max_difference, ok ? "true" : "false");
        std::fflush(stdout);
        cells.push_back(cell);
      }
    }
  std::printf(
      "\n| precision | size | threads | count | BLAS calls GFLOPS | small kernel GFLOPS | "
      "small / BLAS |\n| --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Cell& c : cells)
    std::printf("| %c | %lld | %lld | %lld | %.1f | %.1f | %.2f |\n", c.precision,
                static_cast<long long>(c.size), static_cast<long long>(c.threads),
                static_cast<long long>(c.count), c.blas_gflops, c.small_gflops,
                c.small_gflops / c.blas_gflops);
  if (wrong) std::fprintf(stderr, "cores_small: the small kernel's C differed past rounding\n");
  return wrong ? 1 : 0;
}
