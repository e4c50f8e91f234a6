// The simulated APU's timing model and its wait.
#include "run/simulated_apu.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/seams.hpp"

namespace tandem::detail::simulated_apu {

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

void wait_out(int64_t started_ns, int64_t gpu_rows, int64_t cpu_rows, int64_t n, int64_t k) {
  const Model model{seams::apu_cpu_gflops(), seams::apu_gpu_gflops(), seams::apu_both_busy()};
  if (model.cpu_gflops <= 0 || model.gpu_gflops <= 0) return;
  const double s = seconds(model, gpu_rows, cpu_rows, n, k);
  std::this_thread::sleep_until(
      std::chrono::steady_clock::time_point(std::chrono::nanoseconds(started_ns)) +
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s)));
}

}  // namespace tandem::detail::simulated_apu
