// Planning one call: which strategy was asked for, which rows of C each OpenCL device computes
// with which kernel, and (division.cpp) how the host's cores are divided between the CPU share and
// the threads that feed discrete devices. Planning runs nothing: it reads profiles, cost models
// and what the devices measured of themselves.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
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

// How a plan was made, for the call's report (the executor copies it there): the profile and
// bucket it read, the devices it asked, the share of C's rows it gave them and the first part's
// kernel, and whether the cost model made it, with its prediction.
struct Basis {
  std::string profile;  // where the profile came from ("route": the machine's route, no device)
  int64_t bucket = 0;
  bool resident = false;  // the bucket's split for tandem_malloc memory
  std::string devices;    // every device the plan asked, "; " between them
  double gpu_fraction = 0;
  std::string kernel;
  bool model = false;
  double predicted_seconds = 0;
};

// The plan of one call: which strategy was asked, which rows of C each device computes with which
// kernel, in row order from row 0 with no gaps (the CPU takes the rows after them), the CPU's
// thread count beside them and the balance. Made once, before anything runs, by plan_call; the
// executor runs it as it is. The host's cores are divided once the parts have started
// (divide_cores): a part that cannot start feeds nothing, and its rows are the CPU's.
struct Plan {
  Request request;
  std::vector<DevicePart> parts;
  int profile_threads = 0;  // the profile's CPU thread count beside the devices (0: the default)
  // Dynamic: the parts' rows (and the CPU's, after them) are each side's expected share, and the
  // rows go out in chunks (dealer.hpp). Static whenever fewer than two sides have rows.
  Balance balance = Balance::Static;
  // Why no device can take part, where the strategy wanted one (no platform, no fp64, a profile
  // that cannot be read): the executor says so once and the CPU takes the call, but under
  // strategy gpu, where it is the caller's error.
  std::optional<Error> unavailable;
  Basis basis;
  int64_t rows() const { return parts.empty() ? 0 : parts.back().row0 + parts.back().rows; }
};

// The plan for p under `options`. Throws Error (InvalidArgument) naming an option out of range;
// any other failure to plan the devices is the plan's `unavailable`. Under auto, a call the
// machine's route keeps on the CPU (route.hpp) opens no device; the first call that does open
// them records the route. The first plan under auto from ordinary memory on a discrete device has
// the device measure its feed (gpu/feed.hpp).
template <class T>
Plan plan_call(const Problem<T>& p, const Options& options);

// Whether plan_call would give any of p's rows to an OpenCL device under `options`; it records
// the precision's route (route.hpp) only where `learn` says so, as plan_call does. False when no
// device can be opened, and under strategy cpu. p's pointers are only compared with tandem_malloc
// memory.
template <class T>
bool uses_devices(const Problem<T>& p, const Options& options, bool learn = false);

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
