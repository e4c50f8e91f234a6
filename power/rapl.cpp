// RAPL through powercap: each zone's energy_uj at start and stop, wrapping at its
// max_energy_range_uj. The zones are found here, in the flat list of /sys/class/powercap, and read
// through rapl_zone.hpp (libpowercap or sysfs by hand); the wraparound is ours either way, as
// libpowercap reads counters but does not difference them. Since Linux 5.10 energy_uj is readable
// by root only; a zone that cannot be read makes the source unavailable with the reason.
#include <algorithm>
#include <filesystem>
#include <optional>

#include "power.hpp"
#include "rapl_zone.hpp"

namespace tandem::power {
namespace {

namespace fs = std::filesystem;

struct Zone {
  std::unique_ptr<RaplZone> files;
  std::string name;
  uint64_t max_range = 0, at_start = 0;
};

class Rapl final : public Source {
 public:
  Rapl(const std::string& root, RaplReader reader) : reader_(reader) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      reason_ = "no " + root + " (no powercap)";
      return;
    }
    // /sys/class/powercap lists every zone, nested ones included, as a flat set of links; no
    // recursion (sysfs links lead back to their class).
    std::vector<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(root, ec)) dirs.push_back(entry.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& path : dirs) {
      const std::string leaf = path.filename().string();
      if (leaf.rfind("intel-rapl:", 0) != 0 || !fs::exists(path / "energy_uj", ec)) continue;
      std::string error;
      std::optional<Zone> z = open_zone(path, &error);
      if (!z) {
        reason_ = error;
        zones_.clear();
        return;
      }
      if (z->name.empty()) z->name = leaf;
      // Zones of several packages share names (package-0, package-1 differ; dram does not).
      if (leaf.find(':', std::string("intel-rapl:").size()) != std::string::npos)
        z->name += " (" + leaf + ")";
      zones_.push_back(std::move(*z));
    }
    if (zones_.empty() && reason_.empty()) reason_ = "no RAPL zone under " + root;
  }

  SourceStatus status() const override {
    std::vector<std::string> names;
    for (const auto& z : zones_) names.push_back(z.name);
    return status_of(
        "rapl",
        reader_ == RaplReader::Libpowercap ? "RAPL zones (libpowercap):" : "RAPL zones (sysfs):",
        names, reason_);
  }

  void start() override {
    std::string error;
    for (auto& z : zones_) z.at_start = z.files->energy_uj(&error).value_or(0);
  }

  std::vector<DomainEnergy> stop() override {
    std::vector<DomainEnergy> out;
    for (const auto& z : zones_) {
      std::string error;
      const auto now = z.files->energy_uj(&error);
      if (!now) continue;
      // The counter runs from 0 to max_energy_range_uj and then starts again at 0.
      const uint64_t delta =
          *now >= z.at_start ? *now - z.at_start : z.max_range - z.at_start + *now;
      out.push_back({"rapl", z.name, static_cast<double>(delta) * 1e-6});
    }
    return out;
  }

 private:
  // The zone's files, opened the reader's way, with its range read and its counter readable.
  std::optional<Zone> open_zone(const fs::path& dir, std::string* error) const {
    Zone z;
    z.files =
        reader_ == RaplReader::Libpowercap ? open_powercap_zone(dir, error) : open_sysfs_zone(dir);
    if (!z.files) return std::nullopt;
    const auto max = z.files->max_energy_range_uj(error);
    if (!max || !z.files->energy_uj(error)) return std::nullopt;
    z.max_range = *max;
    z.name = z.files->name();
    return z;
  }

  RaplReader reader_;
  std::vector<Zone> zones_;
  std::string reason_;
};

}  // namespace

RaplReader default_rapl_reader() {
  return powercap_built_in() ? RaplReader::Libpowercap : RaplReader::Sysfs;
}

std::unique_ptr<Source> make_rapl(const std::string& powercap_root, RaplReader reader) {
  return std::make_unique<Rapl>(powercap_root, reader);
}

}  // namespace tandem::power
