// Energy around a measured run: start, stop, then joules per domain and average watts, from
// whatever this machine lets us read. Three readers: RAPL through powercap (Intel and AMD CPUs;
// with libpowercap where the build has it, else sysfs by hand), amdgpu hwmon (an AMD GPU or APU),
// and NVIDIA's NVML opened at run time. A source that cannot be read says why, once; nothing
// fails because of it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tandem::power {

struct DomainEnergy {
  std::string source;  // "rapl", "amdgpu", "nvml"
  std::string domain;  // "package-0", "dram", "psys", "card0", "gpu0", ...
  double joules = 0;
};

struct Measurement {
  double seconds = 0;
  std::vector<DomainEnergy> domains;
  // The machine's energy without double counting: RAPL's psys if present, else its packages and
  // DRAM; plus NVIDIA GPUs; amdgpu only without RAPL (on an APU it reports the whole socket,
  // which the package already holds).
  double joules = 0;
  double watts() const { return seconds > 0 ? joules / seconds : 0; }
};

struct SourceStatus {
  std::string name;
  bool available = false;
  std::string detail;  // what it reads, or "unavailable: reason"
};

// A source's status: available when it found something to read (`items`, listed after
// `heading`), else unavailable for `reason`.
inline SourceStatus status_of(const std::string& name, const std::string& heading,
                              const std::vector<std::string>& items, const std::string& reason) {
  SourceStatus s;
  s.name = name;
  s.available = !items.empty();
  if (s.available) {
    s.detail = heading;
    for (const auto& item : items) s.detail += " " + item;
  } else {
    s.detail = "unavailable: " + reason;
  }
  return s;
}

// How RAPL's counters are read: through libpowercap, or from sysfs by hand.
enum class RaplReader { Libpowercap, Sysfs };
// Libpowercap where the build has it (TANDEM_POWERCAP and pkg-config found it), else Sysfs.
RaplReader default_rapl_reader();

struct Config {
  std::string powercap_root = "/sys/class/powercap";
  RaplReader rapl_reader = default_rapl_reader();
  std::string hwmon_root = "/sys/class/hwmon";
  std::string nvml_library = "libnvidia-ml.so.1";
  // For sources read as power, not energy. 50 ms: under 1% of a CPU run on two cores (measured,
  // docs/PERFORMANCE.md), and amdgpu averages its own reading anyway.
  double sample_interval_seconds = 0.05;
};

// One kind of reading.
class Source {
 public:
  virtual ~Source() = default;
  virtual SourceStatus status() const = 0;
  virtual void start() = 0;
  // Called on the sampling thread every interval, for sources that integrate power.
  virtual void sample(double /*seconds_since_last*/) {}
  virtual bool needs_sampling() const { return false; }
  virtual std::vector<DomainEnergy> stop() = 0;
};

std::unique_ptr<Source> make_rapl(const std::string& powercap_root,
                                  RaplReader reader = default_rapl_reader());
std::unique_ptr<Source> make_amdgpu(const std::string& hwmon_root);
std::unique_ptr<Source> make_nvml(const std::string& library);

// All readable sources together, with one sampling thread while a measurement runs.
class Meter {
 public:
  explicit Meter(const Config& config = {});
  ~Meter();
  Meter(const Meter&) = delete;
  Meter& operator=(const Meter&) = delete;

  const std::vector<SourceStatus>& sources() const { return status_; }
  bool any() const;

  void start();
  Measurement stop();
  // The idle draw: a measurement of `seconds` with nothing else running.
  Measurement idle(double seconds);

 private:
  struct Sampler;
  Config config_;
  std::vector<std::unique_ptr<Source>> readable_;
  std::vector<SourceStatus> status_;
  std::unique_ptr<Sampler> sampler_;
  int64_t started_ns_ = 0;  // when start() was called, on tandem's clock
};

}  // namespace tandem::power
