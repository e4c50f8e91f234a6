// amdgpu through hwmon: power1_input (else power1_average), in microwatts, sampled and
// integrated. On an APU this is the whole socket (PPT), so Meter never adds it to RAPL.
#include <filesystem>
#include <fstream>
#include <optional>

#include "power.hpp"
#include "sysfs.hpp"

namespace tandem::power {
namespace {

namespace fs = std::filesystem;

class Amdgpu final : public Source {
 public:
  explicit Amdgpu(const std::string& root) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      reason_ = "no " + root;
      return;
    }
    for (const auto& entry : fs::directory_iterator(root, ec)) {
      std::ifstream name(entry.path() / "name");
      std::string n;
      std::getline(name, n);
      if (n != "amdgpu") continue;
      for (const char* file : {"power1_input", "power1_average"}) {
        const fs::path p = entry.path() / file;
        if (!fs::exists(p, ec)) continue;
        std::string error;
        if (read_watts(p, &error)) {
          cards_.push_back({entry.path().filename().string(), p, 0.0, 0.0});
        } else if (reason_.empty()) {
          reason_ = error;
        }
        break;
      }
    }
    if (cards_.empty() && reason_.empty()) reason_ = "no amdgpu sensor under " + root;
  }

  SourceStatus status() const override {
    std::vector<std::string> files;
    for (const auto& c : cards_) files.push_back(c.file.string());
    return status_of("amdgpu", "amdgpu hwmon:", files, reason_);
  }

  bool needs_sampling() const override { return true; }

  void start() override {
    std::string error;
    for (auto& c : cards_) {
      c.joules = 0;
      c.last_watts = read_watts(c.file, &error).value_or(0);
    }
  }

  // Trapezoids between consecutive readings.
  void sample(double dt) override {
    std::string error;
    for (auto& c : cards_) {
      const double w = read_watts(c.file, &error).value_or(c.last_watts);
      c.joules += 0.5 * (w + c.last_watts) * dt;
      c.last_watts = w;
    }
  }

  std::vector<DomainEnergy> stop() override {
    std::vector<DomainEnergy> out;
    for (const auto& c : cards_) out.push_back({"amdgpu", c.name, c.joules});
    return out;
  }

 private:
  struct Card {
    std::string name;
    fs::path file;
    double joules, last_watts;
  };

  // hwmon reports microwatts.
  static std::optional<double> read_watts(const fs::path& file, std::string* error) {
    const auto microwatts = sysfs::read_number<double>(
        file, error, [](const std::string& text, size_t* used) { return std::stod(text, used); },
        [](const std::string&, double value) { return value >= 0; });
    if (!microwatts) return std::nullopt;
    return *microwatts * 1e-6;
  }

  std::vector<Card> cards_;
  std::string reason_;
};

}  // namespace

std::unique_ptr<Source> make_amdgpu(const std::string& hwmon_root) {
  return std::make_unique<Amdgpu>(hwmon_root);
}

}  // namespace tandem::power
