// One RAPL zone's files, read one of two ways: by hand from powercap sysfs (rapl_sysfs.cpp), or
// through Debian's libpowercap (rapl_powercap.cpp, the one file that includes it, built where
// pkg-config finds it; rapl_no_powercap.cpp stands in otherwise). rapl.cpp finds the zones and
// does the arithmetic (wraparound, totals) the same way for both.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace tandem::power {

class RaplZone {
 public:
  virtual ~RaplZone() = default;
  // The zone's name file ("package-0", "dram"), "" if it has none.
  virtual std::string name() = 0;
  // The counters, in microjoules; nullopt with *error saying why.
  virtual std::optional<uint64_t> max_energy_range_uj(std::string* error) = 0;
  virtual std::optional<uint64_t> energy_uj(std::string* error) = 0;
};

// The zone in `dir` (a powercap zone directory, such as /sys/class/powercap/intel-rapl:0).
std::unique_ptr<RaplZone> open_sysfs_zone(const std::filesystem::path& dir);
// Null, with *error saying why, where the zone's files cannot be opened or the build has no
// libpowercap.
std::unique_ptr<RaplZone> open_powercap_zone(const std::filesystem::path& dir, std::string* error);
bool powercap_built_in();

}  // namespace tandem::power
