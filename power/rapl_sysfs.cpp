// A RAPL zone read by hand: each reading opens the sysfs file again. The fallback where the build
// has no libpowercap, and the reader that rejects malformed files (libpowercap's strtoull takes
// "12ab" as 12 and "-5" as a huge counter).
#include <fstream>

#include "rapl_zone.hpp"
#include "sysfs.hpp"

namespace tandem::power {
namespace {

namespace fs = std::filesystem;

// The file's first line as an unsigned integer; an error message otherwise. std::stoull takes a
// minus sign (and wraps the value round), which a counter never has.
std::optional<uint64_t> read_counter(const fs::path& file, std::string* error) {
  return sysfs::read_number<uint64_t>(
      file, error, [](const std::string& text, size_t* used) { return std::stoull(text, used); },
      [](const std::string& text, uint64_t) { return text.front() != '-'; });
}

class SysfsZone final : public RaplZone {
 public:
  explicit SysfsZone(fs::path dir) : dir_(std::move(dir)) {}

  std::string name() override {
    std::ifstream in(dir_ / "name");
    std::string s;
    std::getline(in, s);
    return s;
  }
  std::optional<uint64_t> max_energy_range_uj(std::string* error) override {
    return read_counter(dir_ / "max_energy_range_uj", error);
  }
  std::optional<uint64_t> energy_uj(std::string* error) override {
    return read_counter(dir_ / "energy_uj", error);
  }

 private:
  fs::path dir_;
};

}  // namespace

std::unique_ptr<RaplZone> open_sysfs_zone(const fs::path& dir) {
  return std::make_unique<SysfsZone>(dir);
}

}  // namespace tandem::power
