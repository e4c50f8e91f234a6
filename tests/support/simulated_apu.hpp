// A simulated APU, for testing the co-tuner and auto against a model whose optimum is known: a CPU
// and a device of given rates that each slow to a fraction of their rate while both are busy
// (RaijinCL measured about 0.75 for both sides of an Ivy Bridge APU sharing its power budget and
// memory). It lives with the tests: the library only offers the seam it hangs on
// (seams::Values::call_ends).
#pragma once

#include <cstdint>

#include "base/seams.hpp"

namespace tandem::detail::simulated_apu {

struct Model {
  double cpu_gflops = 0, gpu_gflops = 0, both_busy = 1;
};

// The model's seconds for a call whose device computes gpu_rows and the CPU cpu_rows of C, each
// row being 2 n k flops: both sides slowed while both run, the one left at its full rate after.
double seconds(const Model& model, int64_t gpu_rows, int64_t cpu_rows, int64_t n, int64_t k);

// `values` with every call lasting as long as `model` says: as it ends, a call waits until its
// start plus the model's seconds for what ran where (its real work must be quicker than that).
// The model is the one of the latest such values, and holds while a seams::Override of them does.
seams::Values on(const Model& model, seams::Values values = {});

}  // namespace tandem::detail::simulated_apu
