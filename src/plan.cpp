// Planning one call: the request, the device's profile, the GPU's rows and kernel, and the cores.
#include "plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "config.hpp"
#include "cpu_blas.hpp"
#include "gpu/pinned_memory.hpp"
#include "log.hpp"
#include "profile.hpp"
#include "text.hpp"
#include "topology.hpp"

namespace tandem::detail {
namespace {

// hybrid without a fraction from options, environment or profile splits the rows evenly.
constexpr double kHybridDefaultFraction = 0.5;

// What the device's profile says for this call (an empty choice without a profile). Reports
// which profile and bucket applied.
template <class T>
profile::Choice profile_choice(const Problem<T>& p, const Request& req, gpu::Device& device,
                               Report& r) {
  profile::Choice choice;
  const auto prof = profile::active_for(gpu::info(device));
  if (!prof) return choice;
  // Operands a discrete device copies without packing leave the host's cores to the CPU share:
  // the profile may hold a split for them.
  const bool discrete = gpu::is_discrete(device);
  const bool resident = discrete && gpu::operands_pinned(device, p);
  choice = profile::choose(*prof, std::is_same_v<T, double>, p.m, p.n, p.k, resident);
  // A split of C's rows saves the GPU only its rows' work; on a discrete device each share still
  // copies all of B. Where B outweighs A and C together (few rows over a long K), the split
  // measured on square problems costs more than it saves (100x8192x8192 sgemm on the H100 host:
  // 0.58 of the GPU alone), so auto keeps the GPU alone.
  if (req.strategy == Strategy::Auto && discrete && choice.fraction > 0 && choice.fraction < 1 &&
      static_cast<double>(p.k) * static_cast<double>(p.n) >
          static_cast<double>(p.m) * static_cast<double>(p.k + p.n)) {
    choice.fraction = 1.0;
    choice.kernel = choice.gpu_kernel;
    choice.cpu_threads = 0;
  }
  r.profile = prof->origin;
  r.profile_bucket = choice.bucket;
  r.profile_resident = choice.resident;
  return choice;
}

// Explicit parameters are the caller's to get right; a profile's that do not fit this device (a
// platform-wide profile, a hand-edited file) give way to the defaults.
gpu::Params kernel_for(const gpu::Device& device, bool fp64, const Options& o,
                       const std::map<std::string, int>& profile_kernel,
                       const std::string& profile) {
  if (!o.kernel_params.empty()) return gpu::resolve_params(device, fp64, o.kernel_params);
  try {
    return gpu::resolve_params(device, fp64, profile_kernel);
  } catch (const Error& e) {
    warn_once("profile-kernel:" + profile, "the profile's kernel does not fit " +
                                               gpu::info(device).describe() + " (" + e.what() +
                                               "); using the default kernel");
    return gpu::resolve_params(device, fp64, {});
  }
}

}  // namespace

Request request(const Options& o) {
  const EnvConfig& env = env_config();
  Request req;
  req.strategy = o.strategy.value_or(env.strategy.value_or(Strategy::Auto));
  if (o.gpu_fraction && !(*o.gpu_fraction >= 0.0 && *o.gpu_fraction <= 1.0))
    throw Error(Error::Kind::InvalidArgument,
                "options.gpu_fraction = " + std::to_string(*o.gpu_fraction) + " is outside [0, 1]");
  if (o.cpu_threads && *o.cpu_threads < 1)
    throw Error(Error::Kind::InvalidArgument,
                "options.cpu_threads = " + std::to_string(*o.cpu_threads) + " must be at least 1");
  if (req.strategy == Strategy::Hybrid)
    req.fraction = o.gpu_fraction ? o.gpu_fraction : env.gpu_fraction;
  return req;
}

template <class T>
GpuPlan plan_gpu(const Problem<T>& p, const Options& o, const Request& req, Report& r) {
  constexpr bool fp64 = std::is_same_v<T, double>;
  GpuPlan plan;
  plan.device = gpu::open_device(o.device.value_or(env_config().device.value_or("")));
  const gpu::DeviceInfo& di = gpu::info(*plan.device);
  r.device = di.describe();
  const profile::Choice choice = profile_choice(p, req, *plan.device, r);
  double fraction = 1.0;
  if (req.strategy == Strategy::Auto) fraction = choice.fraction;
  if (req.strategy == Strategy::Hybrid)
    fraction =
        req.fraction.value_or(choice.fraction > 0 ? choice.fraction : kHybridDefaultFraction);
  r.gpu_fraction = fraction;
  if (fraction <= 0) return plan;
  if (req.strategy != Strategy::Gpu) plan.profile_threads = choice.cpu_threads;
  if (fp64 && !di.fp64)
    throw Error(Error::Kind::Runtime, "device " + di.describe() + " has no fp64 support");
  plan.params =
      kernel_for(*plan.device, fp64, o,
                 req.strategy == Strategy::Gpu ? choice.gpu_kernel : choice.kernel, r.profile);
  r.kernel = text::describe(plan.params);
  plan.rows = gpu_rows(fraction, p.m, gpu::row_tile(plan.params));
  return plan;
}

template GpuPlan plan_gpu<float>(const Problem<float>&, const Options&, const Request&, Report&);
template GpuPlan plan_gpu<double>(const Problem<double>&, const Options&, const Request&, Report&);

int64_t gpu_rows(double fraction, int64_t m, int64_t tile) {
  if (fraction <= 0.0 || m <= 0) return 0;
  if (fraction >= 1.0) return m;
  const int64_t rows = std::llround(fraction * static_cast<double>(m));
  if (tile > 1) {
    const int64_t rounded =
        std::llround(static_cast<double>(rows) / static_cast<double>(tile)) * tile;
    if (rounded > 0 && rounded < m) return rounded;
  }
  return std::clamp<int64_t>(rows, 0, m);
}

// Physical cores, but never more than the program allows OpenBLAS (OPENBLAS_NUM_THREADS); beside
// a GPU share one fewer, for the thread that feeds the GPU, unless the profile or the options say
// otherwise.
Cores divide_cores(const Options& o, bool gpu_share, bool beside, int profile_threads) {
  const int cores = std::min(topology::physical_cores(), cpu_blas::current_threads());
  Cores c;
  c.cpu_threads = o.cpu_threads.value_or(
      gpu_share && profile_threads > 0
          ? std::min(profile_threads, cores)
          : std::max(1, cores - (gpu_share && o.reserve_feeder_core && cores > 1 ? 1 : 0)));
  c.feeder = beside ? std::max(1, cores - c.cpu_threads) : cores;
  return c;
}

}  // namespace tandem::detail
