// Which profile a device's calls apply: this machine's identity with the device as its OpenCL side
// (its platform, name, driver and architecture beside this CPU and its BLAS), and the profile the
// store finds for it. In the plan's layer because it is where the devices, the CPU and the
// profiles meet; it says nothing of one call (profile/choice.hpp does).
#pragma once

#include <memory>

#include "gpu/device.hpp"
#include "profile/profile.hpp"

namespace tandem::detail::profile {

// This machine's identity with `device` as its OpenCL side.
Identity identity_for(const gpu::DeviceInfo& device);

// The profile that applies to this machine with `device` as its OpenCL side (store.hpp's active):
// what a call's plan asks.
std::shared_ptr<const Profile> active_for(const gpu::DeviceInfo& device);

}  // namespace tandem::detail::profile
