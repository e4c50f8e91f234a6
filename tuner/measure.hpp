// Statistics of repeated timings: the median is the figure; min, max and spread are kept, and a
// sample that splits into two clusters is flagged (GATLAS saw bimodal timing distributions).
#pragma once

#include <vector>

namespace tandem::tuner {

struct Stats {
  double median = 0, min = 0, max = 0;
  double spread = 0;      // (max - min) / median
  bool bimodal = false;   // two clusters separated by a gap of over 10% of the median
  bool unstable = false;  // spread over 20%
  int samples = 0;
};

Stats summarize(std::vector<double> seconds);

}  // namespace tandem::tuner
