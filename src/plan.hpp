// The plan for one call: which strategy was asked for, which rows of C the GPU computes with
// which kernel, and how the host's cores are divided between the CPU share and the GPU's feeder.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "problem.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// What the caller asked for: the options' strategy, else TANDEM_STRATEGY, else auto, and under
// hybrid a fraction from the options or TANDEM_GPU_FRACTION.
struct Request {
  Strategy strategy = Strategy::Auto;
  std::optional<double> fraction;
};
// Throws Error (InvalidArgument) naming an option out of range.
Request request(const Options& options);

// The GPU's part: the device, its kernel and its rows.
struct GpuPlan {
  std::shared_ptr<gpu::Device> device;
  gpu::Params params;
  int64_t rows = 0;         // the top rows of C the GPU computes (0: none)
  int profile_threads = 0;  // the profile's CPU thread count beside the GPU (0: the default)
};

// Opens the device and applies its profile; fills the report's device, profile, fraction and
// kernel. Throws Error when the GPU cannot take part (the executor then falls back to the CPU,
// unless the kind is InvalidArgument: an option the caller got wrong).
template <class T>
GpuPlan plan_gpu(const Problem<T>& p, const Options& options, const Request& request, Report& r);

// The GPU's rows for a fraction f of m rows: round(f * m), moved to the nearest multiple of the
// kernel's row tile when that keeps both sides non-empty; f = 0 gives 0 and f = 1 gives m.
int64_t gpu_rows(double fraction, int64_t m, int64_t tile);

// How the host's cores are divided for one call.
struct Cores {
  int cpu_threads = 1;  // the CPU share's BLAS threads
  int feeder = 1;       // threads that pack and unpack for a discrete GPU
};
// `gpu_share`: a GPU share is in flight; `beside`: its feeder works while the CPU share runs.
Cores divide_cores(const Options& options, bool gpu_share, bool beside, int profile_threads);

}  // namespace tandem::detail
