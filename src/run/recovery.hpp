// When a device fails (a private header of run/): the rule that sends its unfinished rows to the
// CPU, or under strategy gpu makes the failure the caller's error while C is untouched; and a
// device taken out of use, said once. The static and the dynamic run each recover their parts
// by it once everything else is done.
#pragma once

#include <string>

#include "base/after_fork.hpp"
#include "base/log.hpp"
#include "base/problem.hpp"
#include "gpu/device.hpp"
#include "plan/plan.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// A device could not do its part. Under strategy gpu that is the caller's error while the call
// has nothing of C to answer for (`c_untouched`: no device wrote any row of it and none that
// might is in flight), so the error leaves C as the caller gave it. Otherwise, and under the
// other strategies, the CPU takes the rows the device had not finished, with one warning per
// process, so that C is right: no call throws with part of C new and part old. C's old values
// must still be there: `c_touched` says a device that wrote C in place could not be stopped.
template <class T>
void gpu_unavailable(const Problem<T>& p, const Request& req, const Error& e, bool c_touched,
                     bool c_untouched, Report& r) {
  if (c_touched && p.beta != T(0))
    throw Error(Error::Kind::OutputLost,
                std::string("the GPU failed and could not be stopped after it may have written C "
                            "in place with beta != 0, so C's old values cannot be trusted: ") +
                    e.what());
  // In a child forked after OpenCL was used, where no call can have the GPU, every call computes
  // on the CPU, under strategy gpu too (after_fork.hpp).
  if (req.strategy == Strategy::Gpu && c_untouched && !after_fork::opencl_lost()) throw e;
  r.fell_back = true;
  if (r.fallback_reason.empty()) r.fallback_reason = e.what();
  warn_once("gpu-fallback", std::string("GPU path unavailable, computing on the CPU: ") + e.what());
}

// A device whose queues could not be drained after it failed is out of use from now on
// (gpu::retire): said once.
inline void say_if_retired(const gpu::Device& device) {
  if (gpu::retired(device))
    warn_once("retired:" + std::to_string(gpu::info(device).index),
              "device " + gpu::description(device) +
                  " could not be drained after it failed: tandem will not use it again in this "
                  "process");
}

}  // namespace tandem::detail
