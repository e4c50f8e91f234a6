// Measuring repeated calls: statistics of their timings (the median is the figure; min, max and
// spread are kept, and a sample that splits into two clusters is flagged, as GATLAS saw bimodal
// timing distributions), and their energy over a window long enough for coarse counters.
#pragma once

#include <functional>
#include <vector>

#include "power.hpp"

namespace tandem::tuner {

struct Stats {
  double median = 0, min = 0, max = 0;
  double spread = 0;      // (max - min) / median
  bool bimodal = false;   // two clusters separated by a gap of over 10% of the median
  bool unstable = false;  // spread over 20%
  int samples = 0;
};

Stats summarize(std::vector<double> seconds);

// The energy of `calls` calls, read over their window alone.
struct EnergyWindow {
  power::Measurement energy;
  int calls = 0;
};

// Runs `call` between meter.start() and meter.stop() until it has run at least `min_calls` times
// and at least `min_seconds` have passed: counters such as NVML's update only every few tens of
// milliseconds, so a window of a few fast calls would read nothing. If `call` throws, the meter
// is stopped and the exception goes on.
EnergyWindow energy_window(power::Meter& meter, int min_calls, double min_seconds,
                           const std::function<void()>& call);

}  // namespace tandem::tuner
