// Reading a device's architecture from its vendor's attribute-query extension, and the text
// form and distance the profile database uses.
#include "gpu/architecture.hpp"

#include <cstdio>
#include <cstdlib>

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

std::string Architecture::text() const {
  return family + ":" + std::to_string(major) + "." + std::to_string(minor);
}

std::optional<Architecture> parse_architecture(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  Architecture a;
  a.family = text.substr(0, colon);
  char rest = 0;
  if (std::sscanf(text.c_str() + colon + 1, "%d.%d%c", &a.major, &a.minor, &rest) != 2 ||
      a.major < 0 || a.minor < 0)
    return std::nullopt;
  return a;
}

std::optional<int> architecture_distance(const std::string& a, const std::string& b) {
  const auto x = parse_architecture(a), y = parse_architecture(b);
  if (!x || !y || x->family != y->family) return std::nullopt;
  return 1000 * std::abs(x->major - y->major) + std::abs(x->minor - y->minor);
}

std::string architecture_of(const cl::Device& d, const std::string& extensions) {
  const auto has = [&](const char* ext) { return extensions.find(ext) != std::string::npos; };
  Architecture a;
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
