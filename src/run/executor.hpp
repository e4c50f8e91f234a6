// The executor: runs one call's plan (plan/plan.hpp) as it is, the devices' shares and the CPU's
// at once, and falls back to the CPU when a device fails.
#pragma once

#include "base/problem.hpp"
#include "plan/plan.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// Runs p (m, n > 0, k > 0, alpha != 0) as `plan` says, under `options` (the cores they allow),
// filling `report` from the plan on (its t_start is the caller's: the call started before it was
// planned).
template <class T>
void execute(const Problem<T>& p, const Plan& plan, const Options& options, Report& report);

}  // namespace tandem::detail
