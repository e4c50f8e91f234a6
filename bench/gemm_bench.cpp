// Google Benchmark suites: tandem's cpu, gpu and hybrid strategies against OpenBLAS called
// directly, sgemm and dgemm, square sizes 256 to 2048, with a GFLOPS counter; and the two ways of
// running the CPU share (one multithreaded call vs single-threaded row panels).
//
//   ./build/bench/gemm_bench --benchmark_filter=... --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include "cpu_blas.hpp"
#include "executor.hpp"
#include "gemm_measure.hpp"
#include "topology.hpp"

namespace {

using tandem::bench::Problem;

void set_gflops(benchmark::State& state, int64_t size) {
  state.counters["GFLOPS"] = benchmark::Counter(tandem::bench::gflop(size, size, size) * 1e9,
                                                benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

// The baseline: OpenBLAS with all physical cores, no tandem in between.
template <class T>
void BM_OpenBLAS(benchmark::State& state) {
  const int64_t n = state.range(0);
  Problem<T> p(n, n, n, 1);
  tandem::detail::cpu_blas::Threads threads(tandem::detail::topology::physical_cores());
  for (auto _ : state) {
    tandem::detail::cpu_blas::gemm(false, false, n, n, n, T(1), p.a, n, p.b, n, T(0), p.c, n);
    benchmark::ClobberMemory();
  }
  set_gflops(state, n);
}

// range(1): 0 cpu, 1 gpu, 2 hybrid, 3 auto (the device profile's choice); range(2): the hybrid
// GPU fraction in percent.
template <class T>
void BM_Tandem(benchmark::State& state) {
  const int64_t n = state.range(0);
  tandem::Options o;
  o.strategy = state.range(1) == 0   ? tandem::Strategy::Cpu
               : state.range(1) == 1 ? tandem::Strategy::Gpu
               : state.range(1) == 2 ? tandem::Strategy::Hybrid
                                     : tandem::Strategy::Auto;
  if (state.range(1) == 2) o.gpu_fraction = static_cast<double>(state.range(2)) / 100.0;
  Problem<T> p(n, n, n, 1);
  tandem::Report r;
  p.run(o, &r);  // warm-up outside the timed loop (device start, kernel build)
  for (auto _ : state) p.run(o, &r);
  set_gflops(state, n);
  state.counters["gpu_rows"] = static_cast<double>(r.gpu_rows);
  if (r.fell_back) state.SkipWithError(r.fallback_reason.c_str());
}

// range(1): 0 one OpenBLAS call with all threads, 1 row panels of single-threaded calls.
template <class T>
void BM_CpuShare(benchmark::State& state) {
  const int64_t n = state.range(0);
  tandem::detail::set_cpu_mode(state.range(1) == 0 ? tandem::detail::CpuMode::SingleCall
                                                   : tandem::detail::CpuMode::Panels);
  tandem::Options o;
  o.strategy = tandem::Strategy::Cpu;
  Problem<T> p(n, n, n, 1);
  for (auto _ : state) p.run(o);
  tandem::detail::set_cpu_mode(tandem::detail::CpuMode::SingleCall);
  set_gflops(state, n);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {256, 512, 1024, 2048}) b->Args({n});
}

void strategies(benchmark::internal::Benchmark* b) {
  for (int64_t n : {256, 512, 1024, 2048}) {
    b->Args({n, 3, 0});
    b->Args({n, 0, 0});
    b->Args({n, 1, 100});
    for (int64_t f : {25, 50, 75}) b->Args({n, 2, f});
  }
}

void cpu_modes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {256, 512, 1024, 2048})
    for (int64_t mode : {0, 1}) b->Args({n, mode});
}

}  // namespace

BENCHMARK_TEMPLATE(BM_OpenBLAS, float)->Apply(sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_OpenBLAS, double)->Apply(sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_Tandem, float)->Apply(strategies)->ArgNames({"n", "strategy", "gpu_pct"})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_Tandem, double)->Apply(strategies)->ArgNames({"n", "strategy", "gpu_pct"})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_CpuShare, float)->Apply(cpu_modes)->ArgNames({"n", "panels"})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_CpuShare, double)->Apply(cpu_modes)->ArgNames({"n", "panels"})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
