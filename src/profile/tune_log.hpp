// The tuning log: one JSON line per measurement, appended as they come, so an interrupted tune
// resumes where it stopped.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/precision.hpp"

namespace tandem::detail::profile {

// One line of a tuning log (JSON lines, appended as measurements come, so an interrupted run
// resumes where it stopped).
struct LogRecord {
  // "kernel" (a phase-1 GPU-only candidate), "engine" (a phase-1 candidate of the matrix-engine
  // codelet), "small" (a small bucket's), "direct" (the direct kernel's), "split" (one hybrid
  // configuration), "confirm" (a bucket's interleaved rounds, of the candidate its other fields
  // name), "threshold" (the direct kernel's threshold), "batch" (the batch phase's rounds at
  // one size and memory: "cpu" against "candidate", the products dealt), "batch few" (a batch
  // point's few products: "cpu" against "gpu", the devices alone), "batch middle" (a batch point's
  // middle count, as "batch"), "coalesced" (a
  // candidate of the coalesced kernel's bucket of its size and count) or "coalesced confirm"
  // (a bucket's rounds: "gpu", the direct kernel `base_kernel`, against "candidate", `kernel`)
  std::string kind;
  Precision precision = Precision::s;
  int64_t size = 0;
  std::vector<int> point;                         // the candidate in its search space
  std::map<std::string, int> kernel;              // its kernel parameters
  int gpu_parts = 0, parts = 0, cpu_threads = 0;  // "split" records
  bool resident = false;                          // measured on tandem_malloc memory
  bool dynamic = false;                           // under dynamic balance
  int64_t count = 0;  // "batch", "batch few", "batch middle", "coalesced": the batch's products
  std::map<std::string, int>
      base_kernel;                // "coalesced confirm": what the candidate was timed against
  std::optional<double> seconds;  // median wall time; none if it failed
  double cost = 0;                // what the search minimised (seconds, joules or J*s)
  double min = 0, max = 0, spread = 0, kernel_seconds = 0;
  bool bimodal = false;
  std::string failure;
  // "confirm" records: each side's timed seconds in round order ("cpu", "gpu", "candidate"), and
  // the verdict and its words as the tune found them.
  std::map<std::string, std::vector<double>> rounds;
  std::string verdict, note;
};
std::string to_log_line(const LogRecord& r);                      // one line, no newline
std::optional<LogRecord> from_log_line(const std::string& line);  // nullopt if malformed

}  // namespace tandem::detail::profile
