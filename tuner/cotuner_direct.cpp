// The co-tuner's direct-kernel phase: kernels/gemm_direct.cl's own space searched like phase 1's
// (GPU alone, each candidate checked, logged as "direct" records and resumed from them), then the
// size below which the direct kernel beats the profile's own kernels, measured rather than
// assumed: both run as whole calls from ordinary memory, as auto's calls do, from the smallest of
// `direct_sizes` up until the direct kernel loses. `tandem tune --direct-only` runs this phase
// alone for the profile that applies now.
#include <algorithm>
#include <cmath>

#include "base/precision.hpp"
#include "cotuner_internal.hpp"
#include "gemm_space.hpp"
#include "plan/device_profile.hpp"
#include "profile/choice.hpp"
#include "profile/defaults.hpp"

namespace tandem::tuner {

template <class T>
void Tuner::tune_direct(Precision prec, prof::PrecisionProfile& pp, PrecisionSummary& summary) {
  const DeviceLimits limits{info_.max_work_group, info_.local_mem_bytes, info_.is_gpu,
                            info_.nv_compiler_options};
  // From the profile's direct kernel where it has one (a second run refines the first), else
  // the defaults.
  std::map<std::string, int> start = pp.direct_kernel;
  start["KERNEL"] = detail::gpu::kDirect;
  const Space space =
      direct_space(limits, prec, detail::gpu::resolve_params(*device_, prec, start));
  const double end = precision_deadline_;
  precision_deadline_ = elapsed() + std::max(0.0, std::min(o_.direct_seconds, end - elapsed()));
  PrecisionSummary search;
  search.precision = prec;
  const Candidates measured =
      rank_kernels<T>(prec, space, search,
                      {"direct", o_.direct_size, o_.direct_evaluations,
                       std::max(1e-3, (precision_deadline_ - elapsed()) * 2.0 / 3.0)});
  summary.direct_evaluations = search.evaluations + search.resumed;
  summary.direct_failures = search.failures;
  for (const std::string& why : search.failure_reasons)
    if (summary.failure_reasons.size() < 12) summary.failure_reasons.push_back("direct " + why);
  if (!measured.empty()) {
    pp.direct_kernel = std::get<2>(measured.front());
    pp.direct_size = o_.direct_size;
    pp.direct_gflops = gflop(prec, o_.direct_size) / std::get<1>(measured.front());
    if (const auto below = direct_threshold<T>(prec, pp, summary)) pp.direct_below = *below;
  }
  precision_deadline_ = end;
}

// The threshold: between the largest size where the direct kernel won and the first where it
// lost (their geometric middle, as sizes are compared on a log scale), half a doubling past the
// largest size measured if it never lost, 0 if it lost at the smallest. None if nothing could be
// measured in time.
template <class T>
std::optional<int64_t> Tuner::direct_threshold(Precision prec, const prof::PrecisionProfile& pp,
                                               PrecisionSummary& summary) {
  std::vector<int64_t> sizes = o_.direct_sizes;
  std::sort(sizes.begin(), sizes.end());
  prof::Profile tuned;
  tuned.precisions[prec] = pp;
  int64_t won = 0;
  bool measured = false;
  for (int64_t size : sizes) {
    if (out_of_time()) break;
    // The kernel auto would run there otherwise: the bucket's GPU-only kernel, else the
    // profile's, else the device's defaults (named in full, so no profile's threshold applies).
    std::map<std::string, int> own = *prof::choose(tuned, prec, size, size, size).gpu_kernel;
    if (own.empty()) own = prof::kernel_defaults(info_.is_gpu);
    Workspace<T> ws(size);
    const Timed direct = time(ws, gpu_options(pp.direct_kernel));
    const Timed other = time(ws, gpu_options(own));
    append(record("threshold", prec, size, pp.direct_kernel, direct));
    append(record("threshold", prec, size, own, other));
    measured = true;
    const bool wins =
        direct.failure.empty() && (!other.failure.empty() || direct.cost < other.cost);
    summary.direct_verdicts.emplace_back(size, wins ? "direct" : "own kernel");
    if (!wins)
      return won == 0
                 ? 0
                 : std::llround(std::sqrt(static_cast<double>(won) * static_cast<double>(size)));
    won = size;
  }
  if (!measured) return std::nullopt;
  return std::llround(static_cast<double>(won) * std::sqrt(2.0));
}

#define X(T) \
  template void Tuner::tune_direct<T>(Precision, prof::PrecisionProfile&, PrecisionSummary&);
TANDEM_FOR_EACH_ELEMENT(X)
#undef X

}  // namespace tandem::tuner
