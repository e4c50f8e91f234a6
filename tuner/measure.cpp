// tuner::summarize (order statistics and the two flags) and tuner::energy_window.
#include "measure.hpp"

#include <algorithm>

#include "clock.hpp"

namespace tandem::tuner {

Stats summarize(std::vector<double> x) {
  Stats s;
  s.samples = static_cast<int>(x.size());
  if (x.empty()) return s;
  std::sort(x.begin(), x.end());
  const size_t n = x.size(), h = n / 2;
  s.median = n % 2 ? x[h] : 0.5 * (x[h - 1] + x[h]);
  s.min = x.front();
  s.max = x.back();
  s.spread = s.median > 0 ? (s.max - s.min) / s.median : 0;
  s.unstable = s.spread > 0.2;
  // Bimodal: the widest gap between neighbours splits the sample into two groups of at least
  // two, and is wide against the median.
  if (n >= 4) {
    size_t at = 1;
    for (size_t i = 1; i < n; ++i)
      if (x[i] - x[i - 1] > x[at] - x[at - 1]) at = i;
    s.bimodal = at >= 2 && n - at >= 2 && (x[at] - x[at - 1]) > 0.1 * s.median;
  }
  return s;
}

EnergyWindow energy_window(power::Meter& meter, int min_calls, double min_seconds,
                           const std::function<void()>& call) {
  EnergyWindow w;
  meter.start();
  const detail::clock::Stopwatch window;
  try {
    do {
      call();
      ++w.calls;
    } while (w.calls < min_calls || window.seconds() < min_seconds);
  } catch (...) {
    meter.stop();
    throw;
  }
  w.energy = meter.stop();
  return w;
}

}  // namespace tandem::tuner
