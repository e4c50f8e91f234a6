// A profile for the device tests run on, saved where the library looks (the test's own
// TANDEM_PROFILE_DIR), with one precision's GPU kernel: how the tests play a profile naming a
// kernel this device cannot run.
#pragma once

#include <map>
#include <string>

#include "base/precision.hpp"
#include "gpu/device.hpp"
#include "plan/device_profile.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"

namespace tandem::test {

// Saves the profile and makes the library read profiles again; `version` is the tests' build's.
inline void save_profile_here(const char* version, detail::Precision precision,
                              const std::map<std::string, int>& gpu_kernel) {
  namespace prof = detail::profile;
  prof::Profile p;
  p.tandem_version = version;
  p.identity = prof::identity_for(detail::gpu::info(*detail::gpu::open_device("")));
  prof::PrecisionProfile pp;
  pp.gpu_kernel = gpu_kernel;
  pp.gpu_size = 64;
  p.precisions[precision] = pp;
  prof::save(p, prof::path_for(p.identity));
  prof::forget();
}

}  // namespace tandem::test
