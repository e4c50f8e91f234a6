// A plan's run against tandem::gemm (issue 44): for each size, one tandem::Plan made for an n^3
// row-major call, then its runs, single tandem::gemm calls and its runs with B resident
// (Plan::resident_b, kept once before) on the same operands in turn (the order rotates by round),
// medians of REPS after one warm-up round each, from the caller's ordinary memory and from
// tandem_malloc memory. Each C is compared with the single call's (a difference past rounding
// fails the run). Prints one line per size and memory: the single call's time over each run's.
//
//   plan_bench PRECISION SIZES REPS [STRATEGY]     e.g. plan_bench s 64,256,1024 21 auto
//
// PRECISION s or d; SIZES comma-separated; STRATEGY auto (the default), cpu, gpu or hybrid.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tandem/plan.hpp"
#include "tandem/tandem.hpp"

namespace {

template <class T, class Alloc>
bool run_size(int64_t n, int reps, const tandem::Options& o, const char* memory) {
  const auto elements = static_cast<size_t>(n * n);
  std::vector<T, Alloc> a(elements), b(elements), c[3];
  for (size_t i = 0; i < elements; ++i) {
    a[i] = static_cast<T>(static_cast<double>((i * 7 + 3) % 19) / 19.0 - 0.5);
    b[i] = static_cast<T>(static_cast<double>((i * 5 + 1) % 23) / 23.0 - 0.5);
  }
  for (auto& way : c) way.resize(elements);
  const auto made = std::chrono::steady_clock::now();
  const tandem::Plan<T> plan(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, n,
                             n, n, n, n, n, o);
  const double making =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - made).count();
  const tandem::Resident<T> kept_b = plan.resident_b(b.data());
  // 0: the plan's run, 1: the single call, 2: the plan's run with B resident.
  tandem::Report kept_report;
  std::vector<double> seconds[3];
  for (int round = 0; round <= reps; ++round)
    for (int turn = 0; turn < 3; ++turn) {
      const int way = (turn + round) % 3;
      const auto t0 = std::chrono::steady_clock::now();
      if (way == 1)
        tandem::gemm<T>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, n, n, n,
                        T(1), a.data(), n, b.data(), n, T(0), c[1].data(), n, o);
      else if (way == 0)
        plan.run(T(1), a.data(), b.data(), T(0), c[0].data());
      else
        plan.run(T(1), a.data(), kept_b, T(0), c[2].data(), &kept_report);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (round > 0) seconds[way].push_back(s);
    }
  double worst = 0;
  for (int way : {0, 2})
    for (size_t i = 0; i < elements; ++i)
      worst = std::max(worst, std::abs(static_cast<double>(c[way][i] - c[1][i])));
  const bool same = worst <= 1e-4 * static_cast<double>(n);
  for (auto& v : seconds) std::sort(v.begin(), v.end());
  const double run_s = seconds[0][seconds[0].size() / 2],
               call_s = seconds[1][seconds[1].size() / 2],
               kept_s = seconds[2][seconds[2].size() / 2];
  std::printf(
      "%c %lld^3 from %s memory: plan made in %.3g s; run %.4g s, single call %.4g s, run with B "
      "resident %.4g s (%lld bytes kept; B %s); call / run %.3f, call / resident run %.3f%s\n",
      sizeof(T) == 4 ? 's' : 'd', static_cast<long long>(n), memory, making, run_s, call_s, kept_s,
      static_cast<long long>(kept_b.device_bytes()),
      kept_report.devices.empty() ? "on the cores" : tandem::to_string(kept_report.devices[0].b),
      call_s / run_s, call_s / kept_s, same ? "" : " (C DIFFERS)");
  return same;
}

template <class T>
bool run_all(const std::vector<int64_t>& sizes, int reps, const tandem::Options& o) {
  bool ok = true;
  for (int64_t n : sizes) {
    ok = run_size<T, std::allocator<T>>(n, reps, o, "ordinary") && ok;
    ok = run_size<T, tandem::Allocator<T>>(n, reps, o, "tandem_malloc") && ok;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: plan_bench s|d SIZES REPS [auto|cpu|gpu|hybrid]\n");
    return 2;
  }
  std::vector<int64_t> sizes;
  std::stringstream in(argv[2]);
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(std::atoll(item.c_str()));
  const int reps = std::max(1, std::atoi(argv[3]));
  tandem::Options o;
  const std::string strategy = argc > 4 ? argv[4] : "auto";
  o.strategy = strategy == "cpu"      ? tandem::Strategy::Cpu
               : strategy == "gpu"    ? tandem::Strategy::Gpu
               : strategy == "hybrid" ? tandem::Strategy::Hybrid
                                      : tandem::Strategy::Auto;
  const bool ok =
      argv[1][0] == 'd' ? run_all<double>(sizes, reps, o) : run_all<float>(sizes, reps, o);
  return ok ? 0 : 1;
}
