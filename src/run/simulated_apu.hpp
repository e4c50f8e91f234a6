// A simulated APU, for testing the co-tuner against a model whose optimum is known: a CPU and a
// device of given rates that each slow to a fraction of their rate while both are busy (RaijinCL
// measured about 0.75 for both sides of an Ivy Bridge APU sharing its power budget and memory).
// Switched on by the seams apu_cpu_gflops and apu_gpu_gflops; off, it costs one relaxed load.
#pragma once

#include <cstdint>

namespace tandem::detail::simulated_apu {

struct Model {
  double cpu_gflops = 0, gpu_gflops = 0, both_busy = 1;
};

// The model's seconds for a call whose device computes gpu_rows and the CPU cpu_rows of C, each
// row being 2 n k flops: both sides slowed while both run, the one left at its full rate after.
double seconds(const Model& model, int64_t gpu_rows, int64_t cpu_rows, int64_t n, int64_t k);

// When the seams set a model: waits until `started_ns` (steady clock) plus the model's seconds
// for this call, so the call lasts as long as the simulated APU would take (the real work must be
// quicker than that). Returns at once otherwise.
void wait_out(int64_t started_ns, int64_t gpu_rows, int64_t cpu_rows, int64_t n, int64_t k);

}  // namespace tandem::detail::simulated_apu
