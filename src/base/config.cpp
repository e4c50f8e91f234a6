// Reads TANDEM_STRATEGY, TANDEM_GPU_FRACTION, TANDEM_DEVICE, TANDEM_BALANCE, TANDEM_MIN_MNK and
// TANDEM_VERBOSE once.
#include "base/config.hpp"

#include <cmath>
#include <cstdlib>

#include "base/log.hpp"
#include "base/text.hpp"

namespace tandem::detail {
namespace {

void reject(const char* name, const std::string& value, const char* expected) {
  warn_once(std::string("env:") + name + "=" + value,
            std::string("ignoring ") + name + "='" + value + "': expected " + expected);
}

}  // namespace

std::optional<Strategy> parse_strategy(const std::string& text) {
  const std::string s = text::lower(text);
  if (s == "auto") return Strategy::Auto;
  if (s == "cpu") return Strategy::Cpu;
  if (s == "gpu") return Strategy::Gpu;
  if (s == "hybrid") return Strategy::Hybrid;
  return std::nullopt;
}

std::optional<Balance> parse_balance(const std::string& text) {
  const std::string s = text::lower(text);
  if (s == "static") return Balance::Static;
  if (s == "dynamic") return Balance::Dynamic;
  return std::nullopt;
}

EnvConfig parse_env(const char* (*lookup)(const char*)) {
  EnvConfig cfg;
  if (const char* v = lookup("TANDEM_STRATEGY"); v != nullptr && *v != '\0') {
    cfg.strategy = parse_strategy(v);
    if (!cfg.strategy) reject("TANDEM_STRATEGY", v, "auto, cpu, gpu or hybrid");
  }
  if (const char* v = lookup("TANDEM_GPU_FRACTION"); v != nullptr && *v != '\0') {
    if (const auto f = text::number(v); f && std::isfinite(*f) && *f >= 0.0 && *f <= 1.0)
      cfg.gpu_fraction = *f;
    else
      reject("TANDEM_GPU_FRACTION", v, "a number from 0 to 1");
  }
  if (const char* v = lookup("TANDEM_DEVICE"); v != nullptr && *v != '\0') cfg.device = v;
  if (const char* v = lookup("TANDEM_BALANCE"); v != nullptr && *v != '\0') {
    cfg.balance = parse_balance(v);
    if (!cfg.balance) reject("TANDEM_BALANCE", v, "static or dynamic");
  }
  if (const char* v = lookup("TANDEM_MIN_MNK"); v != nullptr && *v != '\0') {
    if (const auto work = text::number(v); work && std::isfinite(*work) && *work >= 0.0)
      cfg.min_mnk = *work;
    else
      reject("TANDEM_MIN_MNK", v, "a non-negative number (m*n*k)");
  }
  if (const char* v = lookup("TANDEM_VERBOSE"); v != nullptr && *v != '\0') {
    const std::string s = text::lower(v);
    if (s == "1" || s == "true" || s == "yes" || s == "on")
      cfg.verbose = true;
    else if (!(s == "0" || s == "false" || s == "no" || s == "off"))
      reject("TANDEM_VERBOSE", v, "1 or 0");
  }
  return cfg;
}

const EnvConfig& env_config() {
  static const EnvConfig cfg =
      parse_env([](const char* name) -> const char* { return std::getenv(name); });
  return cfg;
}

}  // namespace tandem::detail
