// The executor: runs one call's plan, the devices' shares and the CPU's at once, in the order
// RaijinCL found essential (enqueue all GPU work, flush, then the CPU share, then wait on the GPU's
// events), statically or dealing the rows in chunks, and falls back to the CPU when a device
// fails. It fills the call's report, starting with what the plan says of itself.
#include "run/executor.hpp"

#include "base/precision.hpp"
#include "run/recovery.hpp"
#include "run/report.hpp"
#include "run/runs.hpp"

namespace tandem::detail {

template <class T>
void execute(const Problem<T>& p, const Plan& plan, const Options& o, Report& r) {
  report_plan(plan, r);
  if (plan.unavailable) gpu_unavailable(p, plan.request, *plan.unavailable, false, true, r);
  if (plan.balance == Balance::Dynamic)
    run_dynamic(p, o, plan, r);
  else
    run_static(p, o, plan, r);
}

#define INSTANTIATE(T) \
  template void execute<T>(const Problem<T>&, const Plan&, const Options&, Report&);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail
