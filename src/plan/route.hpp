// The route: which calls auto sends to the CPU alone, known without opening OpenCL. For each
// precision it is the product m·n·k below which auto planned every cube on the CPU on this
// machine, found in a process that has OpenCL open and kept in the profile directory under a
// fingerprint of everything that decides it (the OpenCL drivers installed and the devices the
// kernel shows, the environment that selects devices and threads, the local profiles, the
// built-in database). A later call below it, with that fingerprint, runs on the CPU without
// starting OpenCL: a program whose calls all stay on the CPU pays nothing for the GPU path.
#pragma once

#include <cstdint>
#include <functional>

#include "base/precision.hpp"
#include "base/problem.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail::route {

// Whether a call may take the route at all: strategy auto (`strategy`, resolved), no device
// named, no kernel, direct-kernel, balance or thread option, no pinned memory in the process
// (tandem_malloc's split differs), and no test seam set. What a call that is not eligible does
// is unchanged.
bool eligible(const Options& o, Strategy strategy);

// Whether an eligible call of m x n x k in this precision runs on the CPU alone by this
// machine's route, as recorded now (false where none is: the call plans as usual).
bool cpu_alone(Precision precision, int64_t m, int64_t n, int64_t k);
// Whether this precision's route is known (recorded, or learned in this process).
bool known(Precision precision);

// After an eligible call planned with OpenCL open, where this precision's route is not known:
// finds it by planning cubes of growing edge (`devices_take_rows(edge)`: whether auto gives the
// devices any row of that cube) and records it for this process and, where there is a profile
// directory, for later ones (the file keeps s's and d's; a complex precision's route, once there
// is complex GEMM, holds for its process).
void learn(Precision precision, const std::function<bool(int64_t edge)>& devices_take_rows);

}  // namespace tandem::detail::route
