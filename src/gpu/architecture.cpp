// Reading a device's architecture from its vendor's attribute-query extension, in the form the
// built-in database keys on (profile/architecture.hpp).
#include "gpu/architecture_cl.hpp"

namespace tandem::detail::gpu {
namespace {

// One cl_uint attribute, or nullopt where the driver refuses it.
std::optional<cl_uint> attribute(const cl::Device& d, cl_device_info what) {
  cl_uint v = 0;
  if (clGetDeviceInfo(d(), what, sizeof v, &v, nullptr) != CL_SUCCESS) return std::nullopt;
  return v;
}

}  // namespace

std::string architecture_of(const cl::Device& d, const std::string& extensions) {
  const auto has = [&](const char* ext) { return extensions.find(ext) != std::string::npos; };
  profile::Architecture a;
  if (has("cl_nv_device_attribute_query")) {
    const auto major = attribute(d, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV);
    const auto minor = attribute(d, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV);
    if (!major || !minor) return "";
    a = {"nvidia-sm", static_cast<int>(*major), static_cast<int>(*minor)};
  } else if (has("cl_amd_device_attribute_query")) {
    const auto major = attribute(d, CL_DEVICE_GFXIP_MAJOR_AMD);
    const auto minor = attribute(d, CL_DEVICE_GFXIP_MINOR_AMD);
    if (!major || !minor) return "";
    a = {"amd-gfx", static_cast<int>(*major), static_cast<int>(*minor)};
  } else if (has("cl_intel_device_attribute_query")) {
    // A cl_version: major in the top 10 bits, minor in the next 10.
    const auto ip = attribute(d, CL_DEVICE_IP_VERSION_INTEL);
    if (!ip) return "";
    a = {"intel-ip", static_cast<int>(*ip >> 22), static_cast<int>((*ip >> 12) & 0x3ff)};
  } else {
    return "";
  }
  return a.text();
}

}  // namespace tandem::detail::gpu
