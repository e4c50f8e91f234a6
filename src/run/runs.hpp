// The two ways of running a plan's shares (a private header of run/): static.cpp runs each side's
// rows as planned, dynamic.cpp deals the rows in chunks to whichever side is free.
#pragma once

#include "base/problem.hpp"
#include "plan/plan.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// Each part's rows on its device and the rest on the CPU, all at once: every device's work
// enqueued and flushed first, the CPU's beside the feeders, everything joined, and the rows of a
// device that failed then computed by the CPU. Fills the report.
template <class T>
void run_static(const Problem<T>& p, const Options& o, const Plan& plan, Report& r);

// Deals the rows of a planned call in chunks to its devices and, unless the strategy is gpu, the
// CPU, each taking the next chunk when it is free (Balance::Dynamic); a device that fails leaves
// its chunk and the rest to the others. Fills the report as run_static does.
template <class T>
void run_dynamic(const Problem<T>& p, const Options& o, const Plan& plan, Report& r);

}  // namespace tandem::detail
