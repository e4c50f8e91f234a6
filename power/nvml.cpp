// NVIDIA's NVML, opened with dlopen at run time (no build dependency): per GPU, the difference of
// nvmlDeviceGetTotalEnergyConsumption where the GPU supports it, else nvmlDeviceGetPowerUsage
// sampled and integrated.
#include <dlfcn.h>

#include <string>
#include <vector>

#include "power.hpp"

namespace tandem::power {
namespace {

// The few NVML declarations used, by their documented C signatures.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;

class Nvml final : public Source {
 public:
  explicit Nvml(const std::string& library) {
    lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) {
      const char* e = dlerror();
      reason_ = "cannot load " + library + (e ? std::string(" (") + e + ")" : std::string());
      return;
    }
    init_ = sym<nvmlReturn_t (*)()>("nvmlInit_v2");
    shutdown_ = sym<nvmlReturn_t (*)()>("nvmlShutdown");
    count_ = sym<nvmlReturn_t (*)(unsigned*)>("nvmlDeviceGetCount_v2");
    handle_ = sym<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2");
    energy_ = sym<nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*)>(
        "nvmlDeviceGetTotalEnergyConsumption");
    power_ = sym<nvmlReturn_t (*)(nvmlDevice_t, unsigned*)>("nvmlDeviceGetPowerUsage");
    if (!init_ || !shutdown_ || !count_ || !handle_ || !power_) {
      reason_ = library + " lacks the NVML entry points tandem reads";
      return;
    }
    if (init_() != kSuccess) {
      reason_ = "nvmlInit failed (no NVIDIA driver?)";
      return;
    }
    initialised_ = true;
    unsigned n = 0;
    if (count_(&n) != kSuccess) n = 0;
    for (unsigned i = 0; i < n; ++i) {
      Gpu g;
      g.name = "gpu" + std::to_string(i);
      if (handle_(i, &g.device) != kSuccess) continue;
      unsigned long long mj = 0;
      g.counter = energy_ && energy_(g.device, &mj) == kSuccess;
      unsigned mw = 0;
      if (!g.counter && power_(g.device, &mw) != kSuccess) continue;
      gpus_.push_back(g);
    }
    if (gpus_.empty()) reason_ = "NVML reports no GPU whose energy or power can be read";
  }

  ~Nvml() override {
    if (initialised_) shutdown_();
    if (lib_ != nullptr) dlclose(lib_);
  }

  SourceStatus status() const override {
    std::vector<std::string> gpus;
    for (const auto& g : gpus_)
      gpus.push_back(g.name + (g.counter ? " (energy counter)" : " (power, sampled)"));
    return status_of("nvml", "NVML:", gpus, reason_);
  }

  bool needs_sampling() const override {
    for (const auto& g : gpus_)
      if (!g.counter) return true;
    return false;
  }

  void start() override {
    for (auto& g : gpus_) {
      g.joules = 0;
      if (g.counter) {
        unsigned long long mj = 0;
        energy_(g.device, &mj);
        g.start_mj = mj;
      } else {
        unsigned mw = 0;
        power_(g.device, &mw);
        g.last_watts = mw * 1e-3;
      }
    }
  }

  void sample(double dt) override {
    for (auto& g : gpus_) {
      if (g.counter) continue;
      unsigned mw = 0;
      const double w = power_(g.device, &mw) == kSuccess ? mw * 1e-3 : g.last_watts;
      g.joules += 0.5 * (w + g.last_watts) * dt;
      g.last_watts = w;
    }
  }

  std::vector<DomainEnergy> stop() override {
    std::vector<DomainEnergy> out;
    for (auto& g : gpus_) {
      if (g.counter) {
        unsigned long long mj = 0;
        if (energy_(g.device, &mj) == kSuccess && mj >= g.start_mj)
          g.joules = double(mj - g.start_mj) * 1e-3;
      }
      out.push_back({"nvml", g.name, g.joules});
    }
    return out;
  }

 private:
  template <class F>
  F sym(const char* name) {
    return reinterpret_cast<F>(dlsym(lib_, name));
  }

  struct Gpu {
    std::string name;
    nvmlDevice_t device = nullptr;
    bool counter = false;
    unsigned long long start_mj = 0;
    double joules = 0, last_watts = 0;
  };

  void* lib_ = nullptr;
  bool initialised_ = false;
  nvmlReturn_t (*init_)() = nullptr;
  nvmlReturn_t (*shutdown_)() = nullptr;
  nvmlReturn_t (*count_)(unsigned*) = nullptr;
  nvmlReturn_t (*handle_)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*energy_)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power_)(nvmlDevice_t, unsigned*) = nullptr;
  std::vector<Gpu> gpus_;
  std::string reason_;
};

}  // namespace

std::unique_ptr<Source> make_nvml(const std::string& library) {
  return std::make_unique<Nvml>(library);
}

}  // namespace tandem::power
