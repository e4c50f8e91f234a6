// Google Benchmark suites: tandem's cpu, gpu, hybrid and auto strategies against OpenBLAS called
// directly, sgemm and dgemm, sizes 256 to 2048 in square, tall and wide shapes, with a GFLOPS
// counter and, where power can be read, joules per call and watts; and the two ways of running
// the CPU share (one multithreaded call vs single-threaded row panels).
//
//   ./build/bench/gemm_bench --benchmark_filter=... --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include "compare.hpp"
#include "cpu/blas.hpp"
#include "cpu/topology.hpp"
#include "gemm_measure.hpp"
#include "power.hpp"
#include "seam_override.hpp"

namespace {

using tandem::bench::Problem;

template <class T>
void set_gflops(benchmark::State& state, int64_t m, int64_t n, int64_t k) {
  state.counters["GFLOPS"] = benchmark::Counter(tandem::bench::gflop<T>(m, n, k) * 1e9,
                                                benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}
template <class T>
void set_gflops(benchmark::State& state, int64_t size) {
  set_gflops<T>(state, size, size, size);
}

// The machine's power sources, probed once.
tandem::power::Meter& meter() {
  static tandem::power::Meter m;
  return m;
}

void set_energy(benchmark::State& state, const tandem::power::Measurement& e) {
  const double calls = static_cast<double>(state.iterations());
  if (calls <= 0) return;
  state.counters["J_per_call"] = e.joules / calls;
  state.counters["W"] = e.watts();
}

// The baseline: OpenBLAS with all physical cores, no tandem in between.
template <class T>
void BM_OpenBLAS(benchmark::State& state) {
  const int64_t n = state.range(0);
  Problem<T> p(n, n, n, 1);
  tandem::detail::cpu_blas::Threads threads(tandem::detail::topology::physical_cores());
  for (auto _ : state) {
    tandem::detail::cpu_blas::gemm<T>('N', 'N', n, n, n, T(1), p.a, n, p.b, n, T(0), p.c, n);
    benchmark::ClobberMemory();
  }
  set_gflops<T>(state, n);
}

// range(1): 0 cpu, 1 gpu, 2 hybrid, 3 auto (the device profile's choice); range(2): the hybrid
// GPU fraction in percent; range(3): 0 square, 1 tall (4n x n/4 x n), 2 wide (n/4 x 4n x n).
template <class T>
void BM_Tandem(benchmark::State& state) {
  const int64_t size = state.range(0);
  const char* kinds[] = {"square", "tall", "wide"};
  const auto shape = tandem::tuner::shapes_for(kinds[state.range(3)], {size}).front();
  tandem::Options o;
  o.strategy = state.range(1) == 0   ? tandem::Strategy::Cpu
               : state.range(1) == 1 ? tandem::Strategy::Gpu
               : state.range(1) == 2 ? tandem::Strategy::Hybrid
                                     : tandem::Strategy::Auto;
  if (state.range(1) == 2) o.gpu_fraction = static_cast<double>(state.range(2)) / 100.0;
  Problem<T> p(shape[0], shape[1], shape[2], 1);
  tandem::Report r;
  p.run(o, &r);  // warm-up outside the timed loop (device start, kernel build)
  const bool power = meter().any();
  if (power) meter().start();
  for (auto _ : state) p.run(o, &r);
  if (power) set_energy(state, meter().stop());
  set_gflops<T>(state, shape[0], shape[1], shape[2]);
  state.counters["gpu_rows"] = static_cast<double>(r.gpu_rows);
  if (r.fell_back) state.SkipWithError(r.fallback_reason.c_str());
}

// range(1): 0 one OpenBLAS call with all threads, 1 row panels of single-threaded calls.
template <class T>
void BM_CpuShare(benchmark::State& state) {
  const int64_t n = state.range(0);
  tandem::detail::seams::Values mode;
  mode.cpu_mode = state.range(1) == 0 ? tandem::detail::seams::CpuMode::SingleCall
                                      : tandem::detail::seams::CpuMode::Panels;
  tandem::detail::seams::Override seams(mode);
  tandem::Options o;
  o.strategy = tandem::Strategy::Cpu;
  Problem<T> p(n, n, n, 1);
  for (auto _ : state) p.run(o);
  set_gflops<T>(state, n);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {256, 512, 1024, 2048}) b->Args({n});
}

void strategies(benchmark::internal::Benchmark* b) {
  for (int64_t shape : {0, 1, 2})
    for (int64_t n : {256, 512, 1024, 2048}) {
      if (shape > 0 && n != 1024) continue;  // other shapes at one size: the same work as 1024^3
      b->Args({n, 3, 0, shape});
      b->Args({n, 0, 0, shape});
      b->Args({n, 1, 100, shape});
      for (int64_t f : {25, 50, 75}) b->Args({n, 2, f, shape});
    }
}

void cpu_modes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {256, 512, 1024, 2048})
    for (int64_t mode : {0, 1}) b->Args({n, mode});
}

}  // namespace

BENCHMARK_TEMPLATE(BM_OpenBLAS, float)->Apply(sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_OpenBLAS, double)->Apply(sizes)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_Tandem, float)
    ->Apply(strategies)
    ->ArgNames({"n", "strategy", "gpu_pct", "shape"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_Tandem, double)
    ->Apply(strategies)
    ->ArgNames({"n", "strategy", "gpu_pct", "shape"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_CpuShare, float)
    ->Apply(cpu_modes)
    ->ArgNames({"n", "panels"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_CpuShare, double)
    ->Apply(cpu_modes)
    ->ArgNames({"n", "panels"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
