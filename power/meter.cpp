// Meter: every readable source, started and stopped together, with one thread that samples the
// sources read as power at a fixed interval while a measurement runs.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

// The library's clock, by its path: tandem_power's include path holds power/ alone.
#include "base/clock.hpp"
#include "power.hpp"

namespace tandem::power {
namespace {

namespace clock = detail::clock;

double seconds_between(int64_t from_ns, int64_t to_ns) {
  return static_cast<double>(to_ns - from_ns) * 1e-9;
}

}  // namespace

struct Meter::Sampler {
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  std::thread thread;
};

Meter::Meter(const Config& config) : config_(config) {
  std::vector<std::unique_ptr<Source>> all;
  all.push_back(make_rapl(config.powercap_root, config.rapl_reader));
  all.push_back(make_amdgpu(config.hwmon_root));
  all.push_back(make_nvml(config.nvml_library));
  for (auto& s : all) {
    status_.push_back(s->status());
    if (status_.back().available) readable_.push_back(std::move(s));
  }
}

Meter::~Meter() {
  if (sampler_) stop();
}

bool Meter::any() const { return !readable_.empty(); }

void Meter::start() {
  if (sampler_) stop();
  for (auto& s : readable_) s->start();
  started_ns_ = clock::now_ns();
  const bool sampled = std::any_of(readable_.begin(), readable_.end(),
                                   [](const auto& s) { return s->needs_sampling(); });
  if (!sampled) return;
  sampler_ = std::make_unique<Sampler>();
  sampler_->thread = std::thread([this] {
    int64_t last = clock::now_ns();
    std::unique_lock<std::mutex> lock(sampler_->mutex);
    const auto interval = std::chrono::duration<double>(config_.sample_interval_seconds);
    while (!sampler_->wake.wait_for(lock, interval, [this] { return sampler_->stop; })) {
      const int64_t t = clock::now_ns();
      for (auto& s : readable_)
        if (s->needs_sampling()) s->sample(seconds_between(last, t));
      last = t;
    }
    const int64_t t = clock::now_ns();  // the last stretch up to stop()
    for (auto& s : readable_)
      if (s->needs_sampling()) s->sample(seconds_between(last, t));
  });
}

Measurement Meter::stop() {
  Measurement m;
  if (sampler_) {
    {
      std::lock_guard<std::mutex> lock(sampler_->mutex);
      sampler_->stop = true;
    }
    sampler_->wake.notify_all();
    sampler_->thread.join();
    sampler_.reset();
  }
  m.seconds = seconds_between(started_ns_, clock::now_ns());
  for (auto& s : readable_)
    for (auto& d : s->stop()) m.domains.push_back(d);
  // The total without double counting (see power.hpp).
  bool psys = false, rapl = false;
  for (const auto& d : m.domains)
    if (d.source == "rapl") {
      rapl = true;
      psys = psys || d.domain.rfind("psys", 0) == 0;
    }
  for (const auto& d : m.domains) {
    if (d.source == "rapl") {
      const bool counted =
          psys ? d.domain.rfind("psys", 0) == 0
               : d.domain.rfind("package", 0) == 0 || d.domain.rfind("dram", 0) == 0;
      if (counted) m.joules += d.joules;
    } else if (d.source == "nvml" || (d.source == "amdgpu" && !rapl)) {
      m.joules += d.joules;
    }
  }
  return m;
}

Measurement Meter::idle(double seconds) {
  start();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return stop();
}

}  // namespace tandem::power
