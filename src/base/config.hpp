// The TANDEM_* environment, read once per process. Malformed values are reported once and ignored.
#pragma once

#include <optional>
#include <string>

#include "tandem/tandem.hpp"

namespace tandem::detail {

struct EnvConfig {
  std::optional<Strategy> strategy;    // TANDEM_STRATEGY=auto|cpu|gpu|hybrid
  std::optional<double> gpu_fraction;  // TANDEM_GPU_FRACTION=0..1
  std::optional<std::string> device;   // TANDEM_DEVICE=<index or name substring>
  std::optional<Balance> balance;      // TANDEM_BALANCE=static|dynamic
  bool verbose = false;                // TANDEM_VERBOSE=1
  // TANDEM_MIN_MNK=<m*n*k>: drop-in BLAS calls below it go to the CPU BLAS without OpenCL.
  std::optional<double> min_mnk;
};

// The process's environment configuration (parsed on first use, thread-safe).
const EnvConfig& env_config();

// Parses an environment the same way, from a lookup function (for tests). Warnings go through
// warn_once, keyed by variable and value.
EnvConfig parse_env(const char* (*lookup)(const char*));

std::optional<Strategy> parse_strategy(const std::string& text);
std::optional<Balance> parse_balance(const std::string& text);

}  // namespace tandem::detail
