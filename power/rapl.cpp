// RAPL through powercap sysfs: each zone's energy_uj at start and stop, wrapping at its
// max_energy_range_uj. Since Linux 5.10 energy_uj is readable by root only; a zone that cannot
// be read makes the source unavailable with the reason.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "power.hpp"
#include "sysfs.hpp"

namespace tandem::power {
namespace {

namespace fs = std::filesystem;

// The file's first line as an unsigned integer; an error message otherwise. std::stoull takes a
// minus sign (and wraps the value round), which a counter never has.
std::optional<unsigned long long> read_counter(const fs::path& file, std::string* error) {
  return sysfs::read_number<unsigned long long>(
      file, error, [](const std::string& text, size_t* used) { return std::stoull(text, used); },
      [](const std::string& text, unsigned long long) { return text.front() != '-'; });
}

std::string read_line(const fs::path& file) {
  std::ifstream in(file);
  std::string s;
  std::getline(in, s);
  return s;
}

struct Zone {
  fs::path dir;
  std::string name;
  unsigned long long max_range = 0, at_start = 0;
};

class Rapl final : public Source {
 public:
  explicit Rapl(const std::string& root) {
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
      const fs::directory_entry entry(path);
      const std::string leaf = entry.path().filename().string();
      if (leaf.rfind("intel-rapl:", 0) != 0 || !fs::exists(entry.path() / "energy_uj", ec))
        continue;
      Zone z;
      z.dir = entry.path();
      z.name = read_line(z.dir / "name");
      if (z.name.empty()) z.name = leaf;
      std::string error;
      auto max = read_counter(z.dir / "max_energy_range_uj", &error);
      if (!max || !read_counter(z.dir / "energy_uj", &error)) {
        reason_ = error;
        zones_.clear();
        return;
      }
      z.max_range = *max;
      // Zones of several packages share names (package-0, package-1 differ; dram does not).
      if (leaf.find(':', std::string("intel-rapl:").size()) != std::string::npos)
        z.name += " (" + leaf + ")";
      zones_.push_back(z);
    }
    if (zones_.empty() && reason_.empty()) reason_ = "no RAPL zone under " + root;
  }

  SourceStatus status() const override {
    std::vector<std::string> names;
    for (const auto& z : zones_) names.push_back(z.name);
    return status_of("rapl", "RAPL zones:", names, reason_);
  }

  void start() override {
    std::string error;
    for (auto& z : zones_) z.at_start = read_counter(z.dir / "energy_uj", &error).value_or(0);
  }

  std::vector<DomainEnergy> stop() override {
    std::vector<DomainEnergy> out;
    for (const auto& z : zones_) {
      std::string error;
      const auto now = read_counter(z.dir / "energy_uj", &error);
      if (!now) continue;
      // The counter runs from 0 to max_energy_range_uj and then starts again at 0.
      const unsigned long long delta =
          *now >= z.at_start ? *now - z.at_start : z.max_range - z.at_start + *now;
      out.push_back({"rapl", z.name, static_cast<double>(delta) * 1e-6});
    }
    return out;
  }

 private:
  std::vector<Zone> zones_;
  std::string reason_;
};

}  // namespace

std::unique_ptr<Source> make_rapl(const std::string& powercap_root) {
  return std::make_unique<Rapl>(powercap_root);
}

}  // namespace tandem::power
