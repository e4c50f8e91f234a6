// The co-tuner's small-tile phase: a bucket whose calls give phase 1's best kernel fewer
// work-groups than two waves of the device (its tiles were chosen at the kernel size, where the
// device is full) gets kernels of its own. The small-tile space (gemm_space.hpp) is searched at
// the bucket's own size like phase 1 (GPU alone, one launch, ranked by the kernel's device time
// on a discrete GPU, each new best checked, logged as "small" records and resumed from them), and
// its best kernel joins the bucket's split search beside phase 1's, where whole calls decide.
// On the H100 host, the shipped 256 bucket's kernel from a phase-1 tune at 256^3 took 25.6 us at
// 512^3 where a sweep of this space found 17.2 (docs/PERFORMANCE.md).
#include <algorithm>

#include "cotuner_internal.hpp"
#include "gemm_space.hpp"
#include "gpu/gemm_params.hpp"

namespace tandem::tuner {

template <class T>
std::vector<std::map<std::string, int>> Tuner::small_tiles(char prec, int64_t size,
                                                           const std::map<std::string, int>& best,
                                                           PrecisionSummary& summary) {
  constexpr bool fp64 = std::is_same_v<T, double>;
  if (o_.small_evaluations <= 0 || out_of_time()) return {};
  const detail::gpu::Params tiles = detail::gpu::resolve_params(*device_, fp64, best);
  const auto groups = [size](int64_t tile) { return (size + tile - 1) / tile; };
  if (groups(tiles.at("MWG")) * groups(tiles.at("NWG")) >=
      2 * static_cast<int64_t>(std::max(1, info_.compute_units)))
    return {};
  const DeviceLimits limits{info_.max_work_group, info_.local_mem_bytes, info_.is_gpu,
                            info_.nv_compiler_options};
  // From the kernel the profile that applies now gives tandem_malloc memory at this size, when
  // it lies in the space: a second tune refines the first.
  std::map<std::string, int> start;
  if (const auto active = prof::active_for(info_))
    start = *prof::choose(*active, fp64, size, size, size, /*resident=*/true).kernel;
  const Space space = small_tile_space(limits, fp64, start);
  PrecisionSummary search;
  search.precision = prec;
  const double seconds =
      std::max(1e-3, std::min(o_.small_seconds, (precision_deadline_ - elapsed()) / 3.0));
  const Candidates measured =
      rank_kernels<T>(prec, space, search, {"small", size, o_.small_evaluations, seconds});
  summary.evaluations += search.evaluations;
  summary.resumed += search.resumed;
  summary.failures += search.failures;
  for (const std::string& why : search.failure_reasons)
    if (summary.failure_reasons.size() < 12) summary.failure_reasons.push_back("small " + why);
  if (measured.empty()) return {};
  return {std::get<2>(measured.front())};
}

template std::vector<std::map<std::string, int>> Tuner::small_tiles<float>(
    char, int64_t, const std::map<std::string, int>&, PrecisionSummary&);
template std::vector<std::map<std::string, int>> Tuner::small_tiles<double>(
    char, int64_t, const std::map<std::string, int>&, PrecisionSummary&);

}  // namespace tandem::tuner
