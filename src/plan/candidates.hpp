// The first step of a plan (private to plan/): the devices a call may run on, each with its
// profile and what that profile says for the call under the request's strategy (its bucket, auto's
// rules for a discrete device, the direct kernel for a small call), and under auto, with no device
// named, the machine's GPUs weighed by their cost models. And the resolved kernels the parts run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/precision.hpp"
#include "base/problem.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "plan/plan.hpp"
#include "profile/choice.hpp"
#include "profile/profile.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// Parallel lists, one entry a device, in the order the selector named them.
struct Candidates {
  std::vector<std::shared_ptr<gpu::Device>> devices;
  std::vector<profile::Choice> choices;
  std::vector<std::shared_ptr<const profile::Profile>> profiles;
};

// The candidates for p: the devices Options::device names, else TANDEM_DEVICE's, else the first
// GPU, which under auto may give way to the set of GPUs the cost models weigh best
// (models.hpp's choose_default_set). Throws Error where no device opens.
template <class T>
Candidates candidates(const Problem<T>& p, const Options& o, const Request& req);

// A precision that needs fp64 (dgemm) leaves out devices without it, with one warning, while
// others remain to take their rows; Error (Runtime) where none has it.
void drop_fp32_only(Precision precision, Candidates& c);

// What one device's profile says for this call (an empty choice without a profile), with auto's
// rules for a discrete device applied; *origin and *out name the profile.
template <class T>
profile::Choice profile_choice(const Problem<T>& p, const Request& req,
                               const std::shared_ptr<gpu::Device>& device, std::string* origin,
                               std::shared_ptr<const profile::Profile>* out);

// The direct kernel, for the device's share and its GPU-only kernel alike, where the call lies
// below the profile's direct_below (the defaults' without one) or the options ask for it.
template <class T>
void choose_direct(profile::Choice& choice, const Problem<T>& p, const Options& o,
                   const gpu::Device& device, const profile::Profile* prof);

// The kernel a part runs: the options' parameters, else the profile's set resolved for this
// device (the defaults where it does not fit, with one warning naming `profile`).
gpu::SharedParams kernel_for(const gpu::Device& device, Precision precision, const Options& o,
                             const gpu::Params& profile_kernel,
                             const std::shared_ptr<const profile::Profile>& owner,
                             const std::string& profile);

// The kernel the plan gives `device` alone on an n x n x n call (strategy gpu): what its feed is
// measured with (gpu/feed.hpp). plan.cpp.
template <class T>
gpu::SharedParams kernel_alone(const std::shared_ptr<gpu::Device>& device, int64_t n);

}  // namespace tandem::detail
