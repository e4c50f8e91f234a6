// The machine's CPU topology (hwloc is used only in topology.cpp).
#pragma once

#include <set>
#include <string>

namespace tandem::detail::topology {

// Physical cores the process may run on (at least 1).
int physical_cores();

// Hardware threads the process may run on (at least 1).
int logical_cpus();

// The CPU's model name ("AMD EPYC ...", "Intel(R) Xeon(R) ..."), or "unknown".
std::string cpu_model();

// The CPU's instruction-set flags as Linux lists them (avx2, avx512f, ...).
std::set<std::string> cpu_flags();

// The strongest OpenBLAS kernel set these flags allow (SkylakeX, Haswell, ...), for telling a
// user when OpenBLAS picked a weaker one.
std::string best_openblas_core(const std::set<std::string>& flags);

// Whether OpenBLAS core `core` is weaker than `best` (both OpenBLAS core names).
bool weaker_core(const std::string& core, const std::string& best);

}  // namespace tandem::detail::topology
