// The plan for one call: which strategy was asked for, which rows of C each OpenCL device
// computes with which kernel, and how the host's cores are divided between the CPU share and the
// threads that feed discrete devices.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "base/problem.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
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

// One OpenCL device's part: its kernel (resolved, shared) and its rows [row0, row0 + rows) of C.
struct DevicePart {
  std::shared_ptr<gpu::Device> device;
  gpu::SharedParams params;
  int64_t row0 = 0, rows = 0;
};

// The devices' parts, in row order from row 0 with no gaps; the CPU takes the rows after them.
struct GpuPlan {
  std::vector<DevicePart> parts;
  int profile_threads = 0;  // the profile's CPU thread count beside the devices (0: the default)
  // Dynamic: the parts' rows (and the CPU's, after them) are each side's expected share, and the
  // rows go out in chunks (dealer.hpp). Static whenever fewer than two sides have rows.
  Balance balance = Balance::Static;
  int64_t rows() const { return parts.empty() ? 0 : parts.back().row0 + parts.back().rows; }
};

// Opens the devices and applies their profiles; fills the report's device, profile, fraction and
// kernel. A device without fp64 sits out a dgemm (with a warning) while others remain. Throws
// Error when no device can take part (the executor then falls back to the CPU, unless the kind
// is InvalidArgument: an option the caller got wrong).
template <class T>
GpuPlan plan_gpu(const Problem<T>& p, const Options& options, const Request& request, Report& r);

// The cores a call divides: physical cores, but never more than the program allows OpenBLAS
// (OPENBLAS_NUM_THREADS).
int host_cores();

// The GPU's rows for a fraction f of m rows: round(f * m), moved to the nearest multiple of the
// kernel's row tile when that keeps both sides non-empty; f = 0 gives 0 and f = 1 gives m.
int64_t gpu_rows(double fraction, int64_t m, int64_t tile);

// Rows for each of several devices that share a fraction f of m rows in proportion to their
// weights (their rates): device i ends at gpu_rows(f * (w_0 + ... + w_i) / sum(w), m, tile_i),
// so one device gets exactly gpu_rows(f, m, tile_0).
std::vector<int64_t> split_rows(double fraction, int64_t m, const std::vector<double>& weights,
                                const std::vector<int64_t>& tiles);

// Bounds a part's kernel launches (LAUNCH_ROWS, unless the caller set it) so that none is planned
// to run longer than database/defaults.json's launch bound at `gflops`, the device's
// measured kernel rate (else the rate the data assumes); false where even one row of the kernel's
// tiles would run longer (division.cpp says how a launch's time is counted).
template <class T>
bool bound_launches(DevicePart& part, const Problem<T>& p, const Options& o, double gflops);

// How the host's cores are divided for one call.
struct Cores {
  int total = 1;             // the cores there are to divide
  int cpu_threads = 1;       // the CPU share's BLAS threads
  std::vector<int> feeders;  // per device part: threads that pack and unpack (0: it needs none)
};
// `feeds[i]`: part i is in flight on a discrete device and packs or unpacks on the host;
// `pinned[i]`: its operands are in tandem_malloc memory (copied with no packing); `cpu_rows`:
// the CPU has rows of its own. Feeders come first: the CPU share gets what they leave.
Cores divide_cores(const Options& options, const std::vector<bool>& feeds,
                   const std::vector<bool>& pinned, bool cpu_rows, bool gpu_share,
                   int profile_threads);

}  // namespace tandem::detail
