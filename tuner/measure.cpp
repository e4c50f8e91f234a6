// tuner::summarize (order statistics and the two flags), the rule that tells two samples apart
// (tuner::separate) and tuner::energy_window.
#include "measure.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>

#include "base/clock.hpp"

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

double chance_apart(size_t na, size_t nb) {
  // C(na + nb, na) as a product of ratios, exact enough for any sample a run takes.
  double orders = 1;
  for (size_t i = 1; i <= na; ++i)
    orders = orders * static_cast<double>(nb + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / orders);
}

namespace {

// Whether `chance` is within what `confidence` allows. 1 - 0.9 is 0.09999999999999998 in double:
// a hair of room, so that 3 against 3 (exactly one in 10) meets 0.9.
bool allowed(double chance, double confidence) { return chance <= (1 - confidence) * (1 + 1e-9); }

}  // namespace

size_t fewest_samples(double confidence) {
  size_t n = 1;
  while (!allowed(chance_apart(n, n), confidence) && n < 1000) ++n;
  return n;
}

Separation separate(const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  if (a.empty() || b.empty()) return Separation::None;
  const auto [a_lo, a_hi] = std::minmax_element(a.begin(), a.end());
  const auto [b_lo, b_hi] = std::minmax_element(b.begin(), b.end());
  if (*a_lo <= *b_hi && *b_lo <= *a_hi) return Separation::Overlap;
  if (!allowed(chance_apart(a.size(), b.size()), confidence)) return Separation::TooFew;
  return Separation::Apart;
}

std::vector<size_t> round_order(size_t sides, int round) {
  std::vector<size_t> order(sides);
  for (size_t i = 0; i < sides; ++i) order[i] = i;
  // Fisher-Yates with the generator's own output (std::shuffle's draws differ between standard
  // libraries).
  std::mt19937_64 rng(0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(round));
  for (size_t i = sides; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
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
