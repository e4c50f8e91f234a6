// The architecture query, with OpenCL types: for device.cpp, which fills DeviceInfo with it in
// the form the built-in database keys on (profile/architecture.hpp).
#pragma once

#include <string>

#include "gpu/cl.hpp"
#include "profile/architecture.hpp"

// The attribute-query extensions' names (CL/cl_ext.h holds them, but not in every version).
#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#endif
#ifndef CL_DEVICE_GFXIP_MAJOR_AMD
#define CL_DEVICE_GFXIP_MAJOR_AMD 0x404A
#define CL_DEVICE_GFXIP_MINOR_AMD 0x404B
#endif
#ifndef CL_DEVICE_IP_VERSION_INTEL
#define CL_DEVICE_IP_VERSION_INTEL 0x4250
#endif

namespace tandem::detail::gpu {

// The device's architecture in profile::Architecture's text form, "" where its driver does not say.
std::string architecture_of(const cl::Device& d, const std::string& extensions);

}  // namespace tandem::detail::gpu
