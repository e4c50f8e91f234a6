// What auto's choice costs a batch it keeps on the cores (issue 43): one strided batch of row-major
// N^3 products under auto and under cpu, in turn (which goes first alternates by round), medians
// of REPS after one warm-up round each. Where auto keeps the batch on the cores both run the same
// code, so their ratio is the price of the choice: the route, the batch rule's edge and the passes
// over the problems. Each round's C from auto is compared with cpu's (a difference past rounding
// fails the run), and auto must have kept every round on the cores (else the ratio prices
// something else, and the run fails). Prints one line per case.
//
//   batch_choice CASES REPS [pinned]     e.g. batch_choice s:64:10,s:16:100000 301 pinned
//
// CASES as batch_bench's, s or d only (bench/batch_cases.hpp). pinned: the process holds a
// tandem_malloc block through the runs (the operands stay in ordinary memory), which takes the
// batch off the route's fast check, as in a program that uses tandem_malloc elsewhere.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "batch_cases.hpp"
#include "tandem/tandem.h"
#include "tandem/tandem.hpp"

namespace {

template <class T>
bool run_case(int64_t n, int64_t count, int reps) {
  const auto elements = static_cast<size_t>(n * n * count);
  std::vector<T> a(elements), b(elements), c_auto(elements), c_cpu(elements);
  for (size_t i = 0; i < elements; ++i) {
    a[i] = static_cast<T>(static_cast<double>((i * 7 + 3) % 19) / 19.0 - 0.5);
    b[i] = static_cast<T>(static_cast<double>((i * 5 + 1) % 23) / 23.0 - 0.5);
  }
  std::vector<double> seconds[2];
  bool same = true, on_cores = true;
  for (int round = 0; round <= reps; ++round) {
    for (int turn = 0; turn < 2; ++turn) {
      const bool cpu = (turn ^ (round & 1)) != 0;
      tandem::Options o;
      o.strategy = cpu ? tandem::Strategy::Cpu : tandem::Strategy::Auto;
      T* c = cpu ? c_cpu.data() : c_auto.data();
      tandem::BatchReport report;
      const auto t0 = std::chrono::steady_clock::now();
      tandem::gemm_batch_strided<T>(tandem::Layout::RowMajor, tandem::Op::NoTrans,
                                    tandem::Op::NoTrans, n, n, n, T(1), a.data(), n, n * n,
                                    b.data(), n, n * n, T(0), c, n, n * n, count, o, &report);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (round > 0) seconds[cpu ? 1 : 0].push_back(s);
      // What this bench prices is auto keeping the batch on the cores.
      if (!cpu) on_cores = on_cores && report.strategy == tandem::Strategy::Cpu;
    }
    const double tolerance = 1e-4 * static_cast<double>(n);
    for (size_t i = 0; i < elements; ++i)
      same = same && std::abs(static_cast<double>(c_auto[i] - c_cpu[i])) <= tolerance;
  }
  for (auto& v : seconds) std::sort(v.begin(), v.end());
  const double auto_s = seconds[0][seconds[0].size() / 2];
  const double cpu_s = seconds[1][seconds[1].size() / 2];
  std::printf("%c %lld^3 x %lld: auto %.4g s, cpu %.4g s, cpu / auto %.3f%s%s\n",
              sizeof(T) == 4 ? 's' : 'd', static_cast<long long>(n), static_cast<long long>(count),
              auto_s, cpu_s, cpu_s / auto_s, same ? "" : " (C DIFFERS)",
              on_cores ? "" : " (auto did not keep it on the cores)");
  return same && on_cores;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: batch_choice CASES REPS [pinned]\n");
    return 2;
  }
  const int reps = std::max(1, std::atoi(argv[2]));
  const bool pinned = argc > 3 && std::string(argv[3]) == "pinned";
  void* block = pinned ? tandem_malloc(1 << 20) : nullptr;
  if (pinned && block == nullptr) std::fprintf(stderr, "tandem_malloc gave no block\n");
  bool ok = true;
  for (const BatchCase& x : parse_batch_cases(argv[1]))
    ok = (x.precision == 's' ? run_case<float>(x.n, x.count, reps)
                             : run_case<double>(x.n, x.count, reps)) &&
         ok;
  tandem_free(block);
  return ok ? 0 : 1;
}
