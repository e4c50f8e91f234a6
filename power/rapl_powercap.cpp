// A RAPL zone read through libpowercap: its files are opened once, here, and libpowercap reads
// them (pread at offset 0, so each reading is one system call on a file kept open). The files are
// opened by path rather than by powercap_zone_file_open, whose root is fixed at build time
// (/sys/class/powercap), so that the tests can point the reader at a fake tree.
#include <fcntl.h>
#include <powercap/powercap.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rapl_zone.hpp"

namespace tandem::power {
namespace {

namespace fs = std::filesystem;

class PowercapZone final : public RaplZone {
 public:
  explicit PowercapZone(fs::path dir) : dir_(std::move(dir)) {
    // The zone's other files (power_uw, enabled, constraints) are never read: -1, not opened.
    zone_.max_power_range_uw = zone_.power_uw = zone_.enabled = -1;
    zone_.max_energy_range_uj = open_file("max_energy_range_uj");
    zone_.energy_uj = open_file("energy_uj");
    std::string no_name;  // a zone without a name is named after its directory
    zone_.name = open_file("name", &no_name);
  }
  ~PowercapZone() override {
    for (int fd : {zone_.max_energy_range_uj, zone_.energy_uj, zone_.name})
      if (fd >= 0) ::close(fd);
  }
  PowercapZone(const PowercapZone&) = delete;
  PowercapZone& operator=(const PowercapZone&) = delete;

  // Why a file that must be there could not be opened, or "".
  const std::string& open_error() const { return open_error_; }

  std::string name() override {
    char buf[128] = {};
    if (zone_.name < 0 || powercap_zone_get_name(&zone_, buf, sizeof buf) < 0) return "";
    return buf;
  }
  std::optional<uint64_t> max_energy_range_uj(std::string* error) override {
    uint64_t v = 0;
    if (const int rc = powercap_zone_get_max_energy_range_uj(&zone_, &v); rc < 0)
      return failed("max_energy_range_uj", rc, error);
    return v;
  }
  std::optional<uint64_t> energy_uj(std::string* error) override {
    uint64_t v = 0;
    if (const int rc = powercap_zone_get_energy_uj(&zone_, &v); rc < 0)
      return failed("energy_uj", rc, error);
    return v;
  }

 private:
  // The file, read-only, or -1 with the reason in *why (the first failure's, worded as the
  // sysfs reader's).
  int open_file(const char* file, std::string* why = nullptr) {
    const fs::path path = dir_ / file;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    std::string& reason = why ? *why : open_error_;
    if (fd < 0 && reason.empty()) reason = path.string() + ": " + std::strerror(errno);
    return fd;
  }
  std::optional<uint64_t> failed(const char* file, int rc, std::string* error) const {
    *error = (dir_ / file).string() + ": " + std::strerror(-rc) + " (libpowercap)";
    return std::nullopt;
  }

  fs::path dir_;
  powercap_zone zone_{};
  std::string open_error_;
};

}  // namespace

std::unique_ptr<RaplZone> open_powercap_zone(const fs::path& dir, std::string* error) {
  auto zone = std::make_unique<PowercapZone>(dir);
  if (!zone->open_error().empty()) {
    *error = zone->open_error();
    return nullptr;
  }
  return zone;
}

bool powercap_built_in() { return true; }

}  // namespace tandem::power
