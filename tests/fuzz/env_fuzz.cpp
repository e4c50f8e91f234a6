// libFuzzer target: the TANDEM_* environment as a hostile user may set it, through the parser
// (config.cpp) and then, for TANDEM_DEVICE, through a real call that selects devices with it.
//
// An input is the six values separated by NUL bytes (the one byte an environment value cannot
// hold), in the order of kVariables; missing ones are unset. Properties: parse_env keeps only
// values in their ranges; a hybrid call on whatever TANDEM_DEVICE names never throws (issue 16
// item 2: a 23-digit index made std::stoul throw out of the library) and computes C right, on
// the device the selector names or, where it names none, on the CPU.
#include <stdlib.h>  // setenv (POSIX)

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/config.hpp"
#include "fuzz_check.hpp"
#include "tandem/tandem.hpp"

namespace {

const char* const kVariables[] = {"TANDEM_STRATEGY", "TANDEM_GPU_FRACTION", "TANDEM_DEVICE",
                                  "TANDEM_BALANCE",  "TANDEM_MIN_MNK",      "TANDEM_VERBOSE"};
constexpr size_t kCount = sizeof kVariables / sizeof kVariables[0];

// The current input's values; parse_env takes a plain function, so they live here.
std::vector<std::string> values;
std::vector<bool> present;

const char* lookup(const char* name) {
  for (size_t i = 0; i < kCount; ++i)
    if (std::string(name) == kVariables[i]) return present[i] ? values[i].c_str() : nullptr;
  return nullptr;
}

void split(const uint8_t* data, size_t size) {
  values.assign(kCount, "");
  present.assign(kCount, false);
  size_t field = 0;
  for (size_t i = 0; i < size && field < kCount; ++i) {
    present[field] = true;
    if (data[i] == 0)
      ++field;
    else
      values[field] += static_cast<char>(data[i]);
  }
}

// A 3 x 2 x 2 sgemm under hybrid on the selected devices, against the product done by hand.
void call_on(const std::string& selector) {
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[4] = {1, 0, 2, 1};
  float c[6] = {0};
  tandem::Options options;
  options.strategy = tandem::Strategy::Hybrid;
  options.gpu_fraction = 0.5;
  options.device = selector;
  try {
    tandem::gemm<float>(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans, 3, 2, 2,
                        1.0f, a, 2, b, 2, 0.0f, c, 2, options);
  } catch (...) {
    FUZZ_CHECK(false, "a hybrid call throws for this TANDEM_DEVICE instead of using the CPU");
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      FUZZ_CHECK(c[i * 2 + j] == a[i * 2] * b[j] + a[i * 2 + 1] * b[2 + j], "C is right");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Every rejected value is warned about once: thousands of lines that would only slow the run.
  ::setenv("TANDEM_LOG", "/dev/null", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  split(data, size);
  const tandem::detail::EnvConfig cfg = tandem::detail::parse_env(lookup);
  if (cfg.gpu_fraction)
    FUZZ_CHECK(std::isfinite(*cfg.gpu_fraction) && *cfg.gpu_fraction >= 0 && *cfg.gpu_fraction <= 1,
               "TANDEM_GPU_FRACTION kept only within [0, 1]");
  if (cfg.min_mnk)
    FUZZ_CHECK(std::isfinite(*cfg.min_mnk) && *cfg.min_mnk >= 0,
               "TANDEM_MIN_MNK kept only when finite and not negative");
  FUZZ_CHECK(cfg.device.has_value() == (present[2] && !values[2].empty()),
             "TANDEM_DEVICE kept whenever it is set and not empty");
  if (cfg.device) call_on(*cfg.device);
  return 0;
}
