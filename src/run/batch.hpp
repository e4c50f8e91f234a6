// Running a batch's plan (src/plan/batch.hpp): problems dealt, not rows. The dealer
// (src/plan/dealer.hpp) hands chunks of problems to each device, which computes them with the
// coalesced kernel on a thread of its own (src/gpu/batch.hpp; the first device on the calling
// thread where the CPU has no share), and to the CPU, which computes its chunks on the calling
// thread, each problem whole on a core (src/cpu/batch.hpp). Every
// device has flushed its first stage before the CPU starts. A device that fails takes no more
// chunks; the problems it had not finished, whose C it never wrote, go to the CPU once the rest
// is done, with one warning.
#pragma once

#include <vector>

#include "base/problem.hpp"
#include "plan/batch.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// Computes every problem of `problems` (each with a product) as `plan` says, filling `report`'s
// strategy, cpu_threads, cpu_problems, device_problems and devices. `routine` names the batch in
// warnings. Under strategy gpu, a device that cannot be used, or fails before any C was written,
// is an Error and every C is as the caller gave it.
template <class T>
void run_batch(Problems<T> problems, const BatchPlan& plan, const char* routine,
               BatchReport& report);

}  // namespace tandem::detail
