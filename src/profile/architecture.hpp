// A device's architecture as the built-in database keys on it: NVIDIA's compute capability, AMD's
// graphics IP, Intel's IP version, in the form profiles store ("nvidia-sm:9.0"). The database
// matches on it between a device's own entry and its vendor's fallback, so a GPU it does not list
// takes its nearest relative's kernels. The gpu layer reads it off each device
// (gpu/architecture_cl.hpp).
#pragma once

#include <optional>
#include <string>

namespace tandem::detail::profile {

// "family:major.minor": "nvidia-sm:9.0" (an H100 or H200), "amd-gfx:10.3", "intel-ip:12.60".
struct Architecture {
  std::string family;
  int major = 0, minor = 0;
  std::string text() const;
};
std::optional<Architecture> parse_architecture(const std::string& text);

// How far apart two architectures are for sharing kernels: 0 for the same, more for a further
// minor version, much more for another major one; nullopt across families (or for "").
std::optional<int> architecture_distance(const std::string& a, const std::string& b);

}  // namespace tandem::detail::profile
