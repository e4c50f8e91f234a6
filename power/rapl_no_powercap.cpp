// Stands in for rapl_powercap.cpp where the build has no libpowercap (TANDEM_POWERCAP=OFF, or
// pkg-config did not find it): RAPL is then read by hand (rapl_sysfs.cpp).
#include "rapl_zone.hpp"

namespace tandem::power {

std::unique_ptr<RaplZone> open_powercap_zone(const std::filesystem::path&, std::string* error) {
  *error = "this build has no libpowercap";
  return nullptr;
}

bool powercap_built_in() { return false; }

}  // namespace tandem::power
