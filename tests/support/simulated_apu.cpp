// The simulated APU's timing model and its wait, hung on the library's call_ends seam.
#include "simulated_apu.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace tandem::detail::simulated_apu {
namespace {

std::atomic<double> g_cpu{0}, g_gpu{0}, g_both{1};
std::atomic<int64_t> g_overruns{0};

// A call that ends later than the model says by over a tenth of the model's time, and by over a
// millisecond (an idle machine here woke sleeping calls up to 2 ms late), has outlasted the model.
constexpr double kLateFraction = 0.1, kLateSeconds = 1e-3;

void wait_out(int64_t started_ns, int64_t gpu_rows, int64_t cpu_rows, int64_t n, int64_t k) {
  const Model model{g_cpu.load(), g_gpu.load(), g_both.load()};
  const double s = seconds(model, gpu_rows, cpu_rows, n, k);
  const auto end =
      std::chrono::steady_clock::time_point(std::chrono::nanoseconds(started_ns)) +
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s));
  std::this_thread::sleep_until(end);
  // Its real work took longer than the model's time, or the machine woke it late.
  const double late = std::chrono::duration<double>(std::chrono::steady_clock::now() - end).count();
  if (late > kLateFraction * s && late > kLateSeconds) g_overruns.fetch_add(1);
}

}  // namespace

double seconds(const Model& model, int64_t gpu_rows, int64_t cpu_rows, int64_t n, int64_t k) {
  const double row = 2.0 * static_cast<double>(n) * static_cast<double>(k) * 1e-9;  // GFLOP
  const double gpu = static_cast<double>(gpu_rows) * row, cpu = static_cast<double>(cpu_rows) * row;
  if (gpu <= 0) return cpu / model.cpu_gflops;
  if (cpu <= 0) return gpu / model.gpu_gflops;
  // Both busy until the first side is done; the other then finishes at its full rate.
  const double slow_gpu = model.both_busy * model.gpu_gflops;
  const double slow_cpu = model.both_busy * model.cpu_gflops;
  const double both = std::min(gpu / slow_gpu, cpu / slow_cpu);
  const double gpu_left = gpu - slow_gpu * both, cpu_left = cpu - slow_cpu * both;
  return both + std::max(gpu_left / model.gpu_gflops, cpu_left / model.cpu_gflops);
}

seams::Values on(const Model& model, seams::Values values) {
  g_cpu.store(model.cpu_gflops);
  g_gpu.store(model.gpu_gflops);
  g_both.store(model.both_busy);
  g_overruns.store(0);
  values.call_ends = &wait_out;
  return values;
}

int64_t take_overruns() { return g_overruns.exchange(0); }

}  // namespace tandem::detail::simulated_apu
