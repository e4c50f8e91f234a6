// The machine's CPU topology (hwloc is used only in topology.cpp).
#pragma once

namespace tandem::detail::topology {

// Physical cores the process may run on (at least 1).
int physical_cores();

// Hardware threads the process may run on (at least 1).
int logical_cpus();

}  // namespace tandem::detail::topology
