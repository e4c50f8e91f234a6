// The co-tuner's small-tile phase: a bucket whose calls give phase 1's best kernel fewer
// work-groups than two waves of the device (its tiles were chosen at the kernel size, where the
// device is full) gets kernels of its own. The small-tile space (gemm_space.hpp) is searched at
// the bucket's own size like phase 1 (GPU alone, one launch, ranked by the kernel's device time
// on a discrete GPU, each new best checked, logged as "small" records and resumed from them), and
// its best kernel joins the bucket's split search beside phase 1's, where whole calls decide.
// On the H100 host, the shipped 256 bucket's kernel from a phase-1 tune at 256^3 took 25.6 us at
// 512^3 where a sweep of this space found 17.2 (docs/PERFORMANCE.md).
#include <algorithm>

#include "base/precision.hpp"
#include "cotuner_internal.hpp"
#include "gemm_space.hpp"
#include "gpu/gemm_params.hpp"
#include "plan/device_profile.hpp"
#include "profile/choice.hpp"

namespace tandem::tuner {

// Whether a bucket of `size` is too small for `best`'s tiles: fewer work-groups than two waves.
template <class T>
bool Tuner::wants_small_tiles(int64_t size, const std::map<std::string, int>& best) const {
  if (o_.small_evaluations <= 0 || best.empty()) return false;
  const detail::gpu::Params tiles =
      detail::gpu::resolve_params(*device_, detail::precision_of<T>(), best);
  const auto groups = [size](int64_t tile) { return (size + tile - 1) / tile; };
  return groups(tiles.at("MWG")) * groups(tiles.at("NWG")) <
         2 * static_cast<int64_t>(std::max(1, info_.compute_units));
}

// `buckets_left` small buckets (this one included) share what is left of `small_until_`, the
// precision's allowance for this phase (set before phase 2).
template <class T>
std::vector<std::map<std::string, int>> Tuner::small_tiles(Precision prec, int64_t size,
                                                           int buckets_left,
                                                           PrecisionSummary& summary) {
  const double seconds = (std::min(small_until_, precision_deadline_) - elapsed()) /
                         static_cast<double>(std::max(1, buckets_left));
  if (seconds <= 0) return {};
  const DeviceLimits limits{info_.max_work_group, info_.local_mem_bytes, info_.is_gpu,
                            info_.nv_compiler_options};
  // From a kernel the profile that applies now gives this size, the first that lies in the space
  // (tandem_malloc memory's, ordinary memory's, the GPU-only one): a second tune refines the
  // first. None: the search's own start.
  Space space = small_tile_space(limits, prec);
  if (const auto active = prof::active_for(info_))
    for (const bool resident : {true, false}) {
      const prof::Choice c = prof::choose(*active, prec, size, size, size, resident);
      for (const auto* kernel : {c.kernel, c.gpu_kernel})
        if (!space.start && !kernel->empty())  // a Choice's kernels are never null
          space = small_tile_space(limits, prec, *kernel);
    }
  PrecisionSummary search;
  search.precision = prec;
  const Candidates measured =
      rank_kernels<T>(prec, space, search, {"small", size, o_.small_evaluations, seconds});
  summary.small_evaluations += search.evaluations;
  summary.resumed += search.resumed;
  summary.failures += search.failures;
  for (const std::string& why : search.failure_reasons)
    if (summary.failure_reasons.size() < 12) summary.failure_reasons.push_back("small " + why);
  if (measured.empty()) return {};
  return {std::get<2>(measured.front())};
}

#define X(T)                                                                                      \
  template bool Tuner::wants_small_tiles<T>(int64_t, const std::map<std::string, int>&) const;    \
  template std::vector<std::map<std::string, int>> Tuner::small_tiles<T>(Precision, int64_t, int, \
                                                                         PrecisionSummary&);
TANDEM_FOR_EACH_ELEMENT(X)
#undef X

}  // namespace tandem::tuner
