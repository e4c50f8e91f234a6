// Building the GEMM kernel, for the tuner and for people tuning it, with no OpenCL types: build
// ahead of use, or build once uncached and see what the compiler made of it.
#pragma once

#include <string>

#include "base/precision.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"

namespace tandem::detail::gpu {

// Builds (and caches) the program a share with these read layouts and parameters will use,
// without running it: the tuner compiles upcoming candidates while it measures another. Throws
// Error if the build fails. Safe to call from several threads.
void prebuild(Device& device, Precision precision, bool trans_a, bool trans_b,
              const Params& params);

// One build of the kernel, for people tuning it: what was compiled, how, and what came out.
struct BuildReport {
  std::string source, options;
  std::string log;     // the compiler's (NVIDIA: registers, spills with -cl-nv-verbose)
  std::string binary;  // the device binary: PTX text on NVIDIA, empty if the build failed
  bool built = false;
};

// Builds the program a share with these read layouts and parameters would use, uncached, with
// the compiler's verbose report where the device offers one (cl_nv_compiler_options). A failed
// build is reported, not thrown.
BuildReport inspect(Device& device, Precision precision, bool trans_a, bool trans_b,
                    const Params& params);

}  // namespace tandem::detail::gpu
