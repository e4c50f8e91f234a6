// Measuring repeated calls: statistics of their timings (the median is the figure; min, max and
// spread are kept, and a sample that splits into two clusters is flagged, as GATLAS saw bimodal
// timing distributions), and their energy over a window long enough for coarse counters.
#pragma once

#include <cstddef>
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

// tandem's one rule for telling two samples apart (tandem compare's speedups; the tune's choice of
// a split or the GPU over the CPU alone): they differ only where their min-max ranges do not
// overlap, and where ranges apart would be unlikely by chance with this many samples. Under no
// difference every order of the n_a + n_b samples is as likely, and ranges apart, either way, come
// in 2 of the C(n_a + n_b, n_a) orders: 3 against 3, one time in 10; 5 against 5, one in 126. A
// rank test on ranges assumes nothing about the shape of timing noise, which is often bimodal
// (GATLAS's lesson). `confidence` is one less the chance allowed (0.9: one in 10).
enum class Separation {
  None,     // a sample is empty
  Overlap,  // the ranges overlap (touching ends included)
  TooFew,   // apart, but that many samples are apart by chance too often for `confidence`
  Apart,
};
Separation separate(const std::vector<double>& a, const std::vector<double>& b, double confidence);
// The chance that n_a and n_b samples of one distribution have ranges apart: 2 / C(n_a + n_b, n_a).
double chance_apart(size_t na, size_t nb);
// The fewest samples a side (as many on each) with which ranges apart meet `confidence`.
size_t fewest_samples(double confidence);

// The order in which `sides` sides measured in interleaved rounds (the tune's confirmation,
// tandem compare) run in round `round`: a permutation drawn from a generator seeded by the round,
// the same on every run. Rounds spread the machine's drift over every side; the draw keeps any
// side from always following the same other one, whose threads may still be spinning (turning
// the order by one each round keeps each side behind the same neighbour, and in compare put auto
// behind hybrid in every round).
std::vector<size_t> round_order(size_t sides, int round);

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
